"""The live pane against a real hook process writing to the same store, and the drift pane over
the demo project's CLAUDE.md: candidates, the diff, dismiss, undismiss, apply with confirmation."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid

from rich.syntax import Syntax
from textual.coordinate import Coordinate
from textual.pilot import Pilot
from textual.widgets import DataTable, Static

from agentctx.store import Store, drift_state
from agentctx.tui.drift_pane import DriftPane
from agentctx.tui.live_pane import LivePane
from agentctx.tui.widgets.confirm import ConfirmScreen
from tests.tui.conftest import Demo, app_on, run, settle

PROMPT = "How do refunds get rounded again?"


def test_live_pane_shows_an_injection_a_hook_process_writes(demo_store: Demo) -> None:
    session = str(uuid.uuid4())
    payload = {"session_id": session, "transcript_path": str(demo_store.folder / "t.jsonl"),
               "cwd": str(demo_store.folder), "hook_event_name": "UserPromptSubmit",
               "prompt": PROMPT}

    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press("6")
        await settle(pilot)
        pane = pilot.app.query_one(LivePane)
        before = len(pane.receipts)
        stdin = demo_store.folder.parent / "payload.json"
        stdin.write_text(json.dumps(payload), encoding="utf-8")
        with stdin.open("rb") as source:
            hook = subprocess.Popen([sys.executable, "-m", "agentctx", "hook", "prompt"],
                                    stdin=source, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, env=dict(os.environ),
                                    cwd=demo_store.folder)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and len(pane.receipts) == before:
            await pilot.pause(0.1)
        out, _err = hook.communicate(timeout=30)
        assert hook.returncode == 0
        injected = json.loads(out)["hookSpecificOutput"]["additionalContext"]
        assert len(pane.receipts) == before + 1
        newest = pane.receipts[0]
        assert newest.session_id == session and newest.event == "UserPromptSubmit"
        table = pilot.app.query_one("#live-table", DataTable)
        first = [str(c) for c in table.get_row_at(0)]
        assert first[1] == "prompt" and first[4].startswith("How do refunds")
        assert first[5].split(" (")[0] in injected  # the record's title, as injected
    run(app_on(demo_store, poll_ms=100), steps)


def test_drift_pane_dismiss_undismiss_and_apply_with_confirmation(demo_store: Demo) -> None:
    claude_md = demo_store.folder / "CLAUDE.md"
    original = claude_md.read_text(encoding="utf-8")

    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press("7")
        await settle(pilot)
        pane = pilot.app.query_one(DriftPane)
        assert pane.found is not None and pane.found.candidates and pane.found.diff
        table = pilot.app.query_one("#drift-table", DataTable)
        first = pane.found.candidates[0].candidate
        assert str(table.get_row_at(0)[0]) == first.kind
        shown = pilot.app.query_one("#diff", Static).content
        assert isinstance(shown, Syntax) and shown.code == pane.found.diff
        assert "+<!-- agentctx:begin -->" in shown.code
        await pilot.press("x")
        await settle(pilot)
        with Store.open(demo_store.home / "agentctx.db") as db:
            assert first.id in drift_state.dismissed(db, demo_store.project_id)
        assert first.id not in {p.candidate.id for p in pane.found.candidates}
        keys = [str(table.coordinate_to_cell_key(Coordinate(i, 0)).row_key.value)
                for i in range(table.row_count)]
        table.move_cursor(row=keys.index(f"dismissed:{first.id}"))
        await pilot.press("X")
        await settle(pilot)
        with Store.open(demo_store.home / "agentctx.db") as db:
            assert first.id not in drift_state.dismissed(db, demo_store.project_id)
        await pilot.press("A")
        await pilot.pause()
        assert isinstance(pilot.app.screen, ConfirmScreen)
        await pilot.press("n")
        await settle(pilot)
        assert claude_md.read_text(encoding="utf-8") == original  # nothing without a yes
        await pilot.press("A")
        await pilot.pause()
        await pilot.press("y")
        await settle(pilot)
        written = claude_md.read_text(encoding="utf-8")
        assert written != original and "<!-- agentctx:begin -->" in written
        assert pane.found is not None and not pane.found.changes  # the rescan found it done
    run(app_on(demo_store), steps)


def test_a_record_shown_as_a_pointer_is_labelled_so() -> None:
    from agentctx.store.models import ReceiptItem
    from agentctx.tui.live_pane import item_label

    full = ReceiptItem("01J", 0.8, ("refund",))
    pointer = full._replace(pointer=True)
    assert item_label(full, "Refunds") == "Refunds (0.80: refund)"
    assert item_label(pointer, "Refunds") == "Refunds [pointer] (0.80: refund)"
