"""The one clock: AGENTCTX_NOW fixes "now" for every surface; a bad value is ignored."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime, timedelta

import pytest

from agentctx.core import config
from agentctx.core.ids import NOW_ENV, now, now_iso
from agentctx.ops.doctor import check_clock
from agentctx.store import Store, records
from agentctx.store.models import Draft
from agentctx.store.search import Query, search
from agentctx.store.selection import Selection


def test_agentctx_now_fixes_the_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(NOW_ENV, "2026-03-01T10:00:00+02:00")
    assert now() == datetime(2026, 3, 1, 8, 0, tzinfo=UTC)
    assert now_iso() == "2026-03-01T08:00:00.000Z"
    check = check_clock()
    assert check is not None and "fixed at 2026-03-01T08:00:00.000Z" in check.detail


def test_a_bad_value_is_ignored_and_doctor_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(NOW_ENV, "last tuesday")
    assert abs(now() - datetime.now(UTC)) < timedelta(seconds=5)
    check = check_clock()
    assert check is not None and "not an ISO 8601 time" in check.detail
    monkeypatch.delenv(NOW_ENV)
    assert check_clock() is None


def test_records_and_recency_follow_the_fixed_clock(store: Store,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(NOW_ENV, "2026-01-10T00:00:00Z")
    made = records.add(store, Draft(type="handover", title="Left the importer half done"),
                       project_id="p")
    assert made.valid_from == "2026-01-10T00:00:00.000Z" == made.recorded_at
    fresh = search(store, Query("importer", Selection(project_id="p", include_global=True)))[0].rank
    monkeypatch.setenv(NOW_ENV, "2026-03-10T00:00:00Z")  # two months later: handovers fade
    assert search(store,
                  Query("importer", Selection(project_id="p", include_global=True)))[0].rank < fresh


def test_config_lists_the_knob_and_refuses_to_store_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(NOW_ENV, "2026-03-01")
    assert config.Config.load().get_str("now") == "2026-03-01T00:00:00.000Z"
    with pytest.raises(config.ConfigError, match="environment only"):
        config.set_value("now", "2026-03-01")
    done = subprocess.run([sys.executable, "-m", "agentctx", "config", "list"],
                          capture_output=True, text=True, check=True)
    assert "2026-03-01T00:00:00.000Z" in done.stdout and "(env)" in done.stdout
