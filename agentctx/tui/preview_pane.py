"""Pane 8, Preview: type a prompt and see what the per-prompt hook would inject and why — the
same judgement as ``agentctx preview`` without ``--session`` (a fresh session: nothing seen).

The judgement runs on the app's reader thread (its own connection); keystrokes that arrive while
it runs are coalesced into the next run.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from textual import work
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Input, Static

from agentctx.context import already, judgement
from agentctx.core.budget import estimate_tokens
from agentctx.store.db import Store
from agentctx.store.models import Project
from agentctx.tui.actions import Action
from agentctx.tui.cells import ellipsize
from agentctx.tui.pane import Pane, PaneTitle
from agentctx.tui.widgets.table import Column, PlainTable

if TYPE_CHECKING:
    from agentctx.tui.appstate import AppState


COLUMNS = (Column("outcome", "outcome", 7), Column("p", "p", 4), Column("rel", "rel", 4),
           Column("cos", "cos", 4), Column("type", "type", 10),
           Column("title", "title", 16, grow=2), Column("why", "why", 20, grow=3))


class PreviewPane(Pane):
    """What a prompt would get."""

    ACTIONS = (Action("slash", "type", "Prompt", "type a prompt (updates as you type); "
                      "escape leaves the field", "Type a prompt"),)

    def __init__(self, state: AppState, **kwargs: object) -> None:
        super().__init__(state, **kwargs)
        self._judging = False
        self._next_prompt: str | None = None
        self.shown_for = ""
        self._shown: tuple[Project | None, str, judgement.Decision, str] | None = None

    def compose(self) -> ComposeResult:
        yield PaneTitle("Preview", classes="pane-title")
        yield Input(placeholder="type a prompt as you would in Claude Code", id="prompt")
        yield Static("", id="preview-knobs")
        yield PlainTable(cursor_type="row", id="verdicts")
        with VerticalScroll(id="injected-box"):
            yield Static("", id="injected", markup=False)

    def reload(self) -> None:
        project = self.state.project
        knobs = judgement.settings(self.state.cfg)
        self.query_one("#preview-knobs", Static).update(
            f"shown once the best reaches p {knobs.pointer_confidence:.2f}: in full from "
            f"{knobs.full_confidence:.2f}, a pointer from {judgement.POINTER_FLOOR:.2f} · at most "
            f"{knobs.max_records} records · {knobs.max_tokens} tokens · a fresh session")
        self.query_one(PaneTitle).set_text(
            f"Preview · {project.name if project else 'no project'} · what the per-prompt hook "
            "would inject, and why")
        text = self.query_one(Input).value.strip()
        if text:
            self._start(text)
        else:
            self._show(None, "", judgement.Decision([], "", [], []))

    def relayout(self) -> None:
        if self._shown is not None:
            self._show(*self._shown)  # the columns to the new width, the same judgement

    def focus_main(self) -> None:
        self.screen.set_focus(self.query_one(Input))

    def action_type(self) -> None:
        """Focus the prompt field."""
        self.screen.set_focus(self.query_one(Input))

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        text = event.value.strip()
        if not text:
            self._show(None, "", judgement.Decision([], "", [], []))
            return
        if self._judging:
            self._next_prompt = text
        else:
            self._start(text)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.screen.set_focus(self.query_one(DataTable))

    def _start(self, text: str) -> None:
        project = self.state.project
        if project is None:
            self._show(None, text, judgement.Decision([], "", [], []),
                       "no project yet — run `agentctx init`, then use Claude Code")
            return
        self._judging = True
        self._next_prompt = None
        self.judge(project, text)

    @work(exclusive=True, group="preview")
    async def judge(self, project: Project, text: str) -> None:
        """The per-prompt judgement, on the reader thread's connection."""
        knobs = judgement.settings(self.state.cfg)
        why = ""
        decision = judgement.Decision([], "", [], [])
        try:
            why = judgement.not_judged(text, project)
            if why:
                why += ": nothing is injected"
            else:
                decision = await self.state.read(lambda db: already.decide(
                    db, project, text, knobs, _folder(db, project)).decision)
        except Exception as exc:  # a locked or damaged store
            why = f"the preview failed: {exc}"
        self._finished(project, text, decision, why)

    def _finished(self, project: Project, text: str, decision: judgement.Decision,
                  why: str) -> None:
        self._judging = False
        pending, self._next_prompt = self._next_prompt, None
        if pending is not None and pending != text:
            self._start(pending)
            return
        self._show(project, text, decision, why)

    def _show(self, project: Project | None, text: str, decision: judgement.Decision,
              why: str = "") -> None:
        self.shown_for = text
        self._shown = (project, text, decision, why)
        table = self.query_one(PlainTable)
        widths = table.fit_columns(COLUMNS, self.layout_width())
        for v in decision.verdicts:
            r = v.hit.record
            table.add_row(v.outcome,
                          "-" if v.probability is None else f"{v.probability:.2f}",
                          f"{v.hit.relevance:.2f}",
                          "-" if v.cosine is None else f"{v.cosine:.2f}", r.type,
                          ellipsize(r.title, widths["title"]),
                          ellipsize(judgement.OUTCOMES[v.outcome]
                                    + (f"; matched {', '.join(v.hit.matched)}"
                                       if v.hit.matched else ""), widths["why"]), key=r.id)
        box = self.query_one("#injected", Static)
        if why:
            box.update(why)
        elif not text:
            box.update("Type a prompt above: each candidate record shows with its relevance, "
                       "the words it matched and whether it would be injected.")
        elif decision.skipped:
            box.update(f"nothing would be injected: {decision.skipped}")
        elif not decision.verdicts:
            box.update("no record matches any word of the prompt: nothing would be injected")
        elif decision.text:
            box.update(f"injected ({estimate_tokens(decision.text)} tokens):\n\n"
                       f"{decision.text}")
        else:
            box.update("nothing would be injected (no candidate is likely enough to answer it)")


def _folder(db: Store, project: Project) -> str:
    """The project folder the hook would run in: the app's when it is the project's, else the
    project's root (never a new project for a folder the store does not know)."""
    from agentctx import drift  # late: the TUI opens without the drift package

    return str(drift.project_folder(db, project, os.getcwd()))
