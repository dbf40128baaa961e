"""Property: any store's shared records → team file → a new store → the same file, byte for byte."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentctx import team
from agentctx.store import Store, records, teamstate
from agentctx.store.models import CONFIDENCES, Draft, Project
from agentctx.team import reconcile

PROJECT = Project("0123456789abcdef", "shop", "/nowhere/shop", None)
text = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\x00"),
               max_size=60)
titles = text.map(lambda t: " ".join(t.split())).filter(bool)
drafts = st.builds(Draft, type=st.sampled_from(["decision", "convention", "discovery"]),
                   title=titles, body=text, confidence=st.sampled_from(CONFIDENCES),
                   pinned=st.booleans(), key=st.one_of(st.none(), titles),
                   scope=st.just("project"), source=st.just("cli"), session_id=st.none(),
                   valid_from=st.none(), reinforce_count=st.just(0))
# Each step: add a record, or supersede / edit one added before (by position).
steps = st.lists(st.one_of(
    st.tuples(st.just("add"), drafts),
    st.tuples(st.just("supersede"), st.integers(0, 20), titles, text),
    st.tuples(st.just("edit"), st.integers(0, 20), text)), min_size=1, max_size=10)


def _play(db: Store, plan: list[tuple[object, ...]]) -> None:
    for step in plan:
        current = [r.id for r in teamstate.shared_records(db, PROJECT.id)]
        if step[0] == "add":
            draft = step[1]
            assert isinstance(draft, Draft)
            records.add(db, draft, project_id=PROJECT.id)
        elif current and step[0] == "supersede":
            target = current[int(str(step[1])) % len(current)]
            # a blank rationale is refused by the store (tested there); give one
            why = str(step[3]).strip() or "x"
            records.supersede(db, target, Draft(type="", title=str(step[2])), why, actor="cli")
        elif current and step[0] == "edit":
            records.update(db, current[int(str(step[1])) % len(current)], body=str(step[2]),
                           actor="cli")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps)
def test_a_store_round_trips_through_the_team_file(plan: list[tuple[object, ...]]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        source = Store.open(Path(folder) / "a.db")
        target = Store.open(Path(folder) / "b.db")
        try:
            _play(source, plan)
            written = reconcile.render_project(source, PROJECT)
            report = team.import_text(target, PROJECT, written, "context.md")
            assert report.conflicts == ()
            assert reconcile.render_project(target, PROJECT) == written
            again = team.import_text(target, PROJECT, written, "context.md")
            assert again.changes == 0
        finally:
            source.close()
            target.close()
