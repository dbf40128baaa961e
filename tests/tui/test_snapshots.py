"""SVG snapshots of every pane at 80×24 and 120×40, in ``snapshots/test_snapshots/``.

Deterministic: the demo store is built with a frozen clock and fixed ids (``demo_store``), the
app's clock is fixed at ``NOW``, paths are under ``HOME`` (shown as ``~``), inputs do not blink.
Regenerate with ``pytest tests/tui/test_snapshots.py --snapshot-update`` and review the SVGs.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from textual.pilot import Pilot

from agentctx.tui.registry import PANES
from tests.tui.conftest import Demo, app_on, settle

SIZES = {"80x24": (80, 24), "120x40": (120, 40)}
SnapCompare = Callable[..., bool]


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("pane", [p.pane_id for p in PANES])
def test_pane(pane: str, size: str, demo_store: Demo, snap_compare: SnapCompare) -> None:
    """Each pane as it first shows on the demo store."""
    key = next(p.key for p in PANES if p.pane_id == pane)

    async def show(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await pilot.press(key)
        await settle(pilot)

    assert snap_compare(app_on(demo_store), run_before=show, terminal_size=SIZES[size])


def test_record_detail(demo_store: Demo, snap_compare: SnapCompare) -> None:
    """The detail panel of the newest chain's head, at 80×24."""
    async def open_detail(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await pilot.press("slash", *"grpc", "enter", "enter")
        await settle(pilot)

    assert snap_compare(app_on(demo_store), run_before=open_detail, terminal_size=(80, 24))


def test_session_receipts(demo_store: Demo, snap_compare: SnapCompare) -> None:
    """A session's receipts under the sessions table, at 120×40."""
    async def receipts(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await pilot.press("5", "enter")
        await settle(pilot)

    assert snap_compare(app_on(demo_store), run_before=receipts, terminal_size=(120, 40))


def test_preview_with_a_prompt(demo_store: Demo, snap_compare: SnapCompare) -> None:
    """The preview of a prompt the demo store has records for, at 120×40."""
    async def typed(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await pilot.press("8", *"how do refunds get rounded")
        await settle(pilot)

    assert snap_compare(app_on(demo_store), run_before=typed, terminal_size=(120, 40))
