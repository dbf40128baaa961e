"""SVG snapshots of the editing forms at 80×24, in ``snapshots/test_form_snapshots/``
(regenerate with ``--snapshot-update`` and review the SVGs)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from textual.pilot import Pilot

from agentctx.store import Store, upkeep
from agentctx.store import records as rec
from agentctx.store.models import Draft
from tests.tui.conftest import Demo, app_on, frozen_ids, settle

SnapCompare = Callable[..., bool]
FORMS = {
    "new": ("n",),
    "new_refused": ("n", "ctrl+s"),
    "edit": ("slash", *"advisory locks", "enter", "e"),
    "supersede": ("slash", *"Dramatiq", "enter", "s", *"Jobs run on Celery", "tab"),
    "supersede_refused": ("slash", *"Dramatiq", "enter", "s", "ctrl+s"),
    "forget": ("slash", *"advisory locks", "enter", "d"),
}


@pytest.mark.parametrize("form", list(FORMS))
def test_form(form: str, demo_store: Demo, snap_compare: SnapCompare) -> None:
    """Each form as it opens (and refusing an empty save) on the demo store."""
    async def keys(pilot: Pilot[None]) -> None:
        await settle(pilot)
        for key in FORMS[form]:
            await pilot.press(key)
            if key == "enter":
                await settle(pilot)
        await settle(pilot)

    assert snap_compare(app_on(demo_store), run_before=keys, terminal_size=(80, 24))


def test_merge_candidates(demo_store: Demo, snap_compare: SnapCompare,
                          monkeypatch: pytest.MonkeyPatch) -> None:
    """One near-duplicate pair side by side."""
    with frozen_ids(monkeypatch), Store.open(demo_store.home / "agentctx.db") as db:
        a = rec.add(db, Draft(type="discovery", title="Cache TTL is 5 minutes",
                              body="Set in settings.py"), project_id=demo_store.project_id)
        b = rec.add(db, Draft(type="discovery", title="The cache TTL is 5 minutes",
                              body="settings.py sets it"), project_id=demo_store.project_id)
        upkeep.save_near_duplicates(db, [a.id, b.id], [(a.id, b.id, 0.93, 0.6)])

    async def keys(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await pilot.press("m")
        await settle(pilot)

    assert snap_compare(app_on(demo_store), run_before=keys, terminal_size=(80, 24))
