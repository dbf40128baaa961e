"""Decay scores per type, the moment a score went low, and the pruning list."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest

from agentctx.consolidate.run import consolidate
from agentctx.core.ids import parse_time, to_iso
from agentctx.store import Store, upkeep
from agentctx.store import records as rec
from agentctx.store.models import Project
from agentctx.store.scoring import ACCESS_FLOOR, low_since, score_factors
from agentctx.store.selection import Selection
from tests.consolidate.conftest import add

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _score(type_: str, days: float, *, confidence: str = "inferred", accessed: float | None = None,
           uses: int = 0) -> float:
    last = to_iso(T0 + timedelta(days=accessed)) if accessed is not None else None
    return score_factors(type_, confidence, to_iso(T0), last, uses,
                         T0 + timedelta(days=days)).score


def test_decisions_conventions_preferences_and_profile_never_decay() -> None:
    """A fact in force does not lose truth by not being read."""
    for type_ in ("decision", "convention", "preference", "profile"):
        fresh = _score(type_, 0, confidence="explicit")
        assert fresh == _score(type_, 3650, confidence="explicit") > 0.8


@pytest.mark.parametrize(("type_", "half_life"), [("handover", 7), ("discovery", 90),
                                                  ("bugfix", 90)])
def test_decaying_types_halve_over_their_half_life(type_: str, half_life: int) -> None:
    assert _score(type_, half_life) == pytest.approx(_score(type_, 0) / 2)
    assert _score(type_, 2 * half_life) == pytest.approx(_score(type_, 0) / 4)


def test_handovers_fade_fastest() -> None:
    month = {t: _score(t, 30) for t in ("handover", "discovery", "preference")}
    assert month["handover"] < month["discovery"] < month["preference"] == _score("preference", 0)


def test_a_kept_fresh_record_takes_no_decay() -> None:
    old = score_factors("handover", "inferred", to_iso(T0), None, 0, T0 + timedelta(days=400),
                        kept_fresh=True)
    assert old.score == pytest.approx(0.7 * 0.85) and old.recency_decay == 1.0
    assert low_since("handover", old, 0.1) is None


def test_use_keeps_a_record_fresh_and_raises_its_weight() -> None:
    stale = _score("discovery", 365)
    used_lately = _score("discovery", 365, accessed=360, uses=1)
    assert used_lately > 10 * stale
    assert _score("discovery", 0, uses=3) > _score("discovery", 0, uses=1) > _score(
        "discovery", 0)
    assert score_factors("discovery", "inferred", to_iso(T0), None, 0, T0).access_decay == \
        ACCESS_FLOOR
    assert _score("handover", 0, confidence="explicit") > _score("handover", 0)


def test_low_since_is_read_off_the_decay_curve() -> None:
    threshold = 0.1
    at = T0 + timedelta(days=40)
    factors = score_factors("handover", "inferred", to_iso(T0), None, 0, at)
    since = low_since("handover", factors, threshold)
    assert since is not None
    start = 0.7 * ACCESS_FLOOR * 0.85
    assert (since - T0).total_seconds() / 86400 == pytest.approx(7 * math.log2(start / threshold))
    fresh = score_factors("handover", "inferred", to_iso(T0), None, 0, T0 + timedelta(days=1))
    assert low_since("handover", fresh, threshold) is None


def test_consolidation_scores_and_lists_long_low_records(store: Store, project: Project) -> None:
    old = to_iso(T0 - timedelta(days=400))
    stale = add(store, project, "handover", "Left the importer half done", valid_from=old)
    pinned = add(store, project, "handover", "Pinned handover", valid_from=old, pinned=True)
    # The worktree's latest handover (never decayed) is a newer one.
    add(store, project, "handover", "Latest handover", valid_from=to_iso(T0 - timedelta(days=1)))
    decision = add(store, project, "decision", "Use SQLite", valid_from=old)
    recent = add(store, project, "discovery", "Pool size must be explicit",
                 valid_from=to_iso(T0 - timedelta(days=5)))
    report = consolidate(store, embeddings=False, now=T0)
    assert report.scored == 5 and report.model is None
    scored = {r.id: r for r in rec.list_records(store, Selection(project_id=project.id))}
    assert scored[stale.id].score < 0.1 < scored[recent.id].score
    assert scored[decision.id].score == pytest.approx(0.85)
    listed = upkeep.prune_candidates(store, project.id, after_days=60, now=T0)
    assert [c.id for c in listed] == [stale.id]  # pinned records are never listed
    assert listed[0].days_low > 300 and listed[0].score < 0.1
    low = store.scalar("SELECT low_score_since FROM records WHERE id = ?", (stale.id,))
    assert parse_time(low) < T0 - timedelta(days=300)
    assert store.scalar("SELECT low_score_since FROM records WHERE id = ?", (pinned.id,))
    # Within prune_after_days of going low, a record is not listed yet.
    fresh_low = add(store, project, "handover", "Another handover",
                    valid_from=to_iso(T0 - timedelta(days=30)))
    add(store, project, "handover", "Newest handover", valid_from=to_iso(T0))
    consolidate(store, embeddings=False, now=T0)
    listed = upkeep.prune_candidates(store, project.id, after_days=60, now=T0)
    assert fresh_low.id not in [c.id for c in listed]
    later = upkeep.prune_candidates(store, project.id, after_days=60,
                                    now=T0 + timedelta(days=60))
    assert fresh_low.id in [c.id for c in later]
    # Using a record lifts it back over the threshold and clears low_score_since.
    rec.touch(store, [stale.id])
    consolidate(store, embeddings=False)
    assert store.scalar("SELECT low_score_since FROM records WHERE id = ?", (stale.id,)) is None


def test_each_worktrees_latest_handover_never_decays(store: Store, project: Project) -> None:
    """Rescoring never-read records must not make a worktree's last handover a pruning
    candidate: it is where the next session there starts."""
    long_ago = to_iso(T0 - timedelta(days=200))
    older = to_iso(T0 - timedelta(days=300))
    main_old = add(store, project, "handover", "main: old state", valid_from=older)
    main_new = add(store, project, "handover", "main: last state", valid_from=long_ago)
    feature = add(store, project, "handover", "feature: last state", valid_from=older,
                  key="worktree:/work/feature")
    bug = add(store, project, "bugfix", "Fixed the importer", valid_from=long_ago)
    consolidate(store, embeddings=False, now=T0)
    scored = {r.id: r.score for r in rec.list_records(store, Selection(project_id=project.id))}
    assert scored[main_new.id] == scored[feature.id] == pytest.approx(0.7 * 0.85)
    assert scored[main_old.id] < 0.01 and scored[bug.id] < 0.2
    listed = [c.id for c in upkeep.prune_candidates(store, project.id, after_days=60, now=T0)]
    assert main_old.id in listed
    assert main_new.id not in listed and feature.id not in listed
