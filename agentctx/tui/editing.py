"""Keyboard editing of records, shared by the records, chains and profile panes.

A pane mixes in :class:`RecordEditing` and says which record the keys act on
(:meth:`RecordEditing.edit_target`); every write goes through the app's
:class:`~agentctx.tui.writes.Writer` (the store API), confirms with a notification and reloads
the pane. A write the store refuses (invalid, changed elsewhere, locked, too new) changes nothing
and says why in one line.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from textual.binding import Binding

from agentctx.store import details
from agentctx.store import records as rec
from agentctx.store.errors import StoreError
from agentctx.store.models import Draft, Record
from agentctx.tui.pane import PaletteAction
from agentctx.tui.writes import CONFIDENCE_LADDER, Writer, fingerprint

if TYPE_CHECKING:
    from agentctx.tui.app import AgentctxApp
    from agentctx.tui.widgets.record_form import FormValues

T = TypeVar("T")

EDIT_BINDINGS = [
    Binding("n", "new_record", "New"),
    Binding("e", "edit_record", "Edit"),
    Binding("E", "edit_in_editor", "$EDITOR", show=False),
    Binding("s", "supersede_record", "Supersede"),
    Binding("p", "toggle_pin", "Pin"),
    Binding("plus", "confidence(1)", "Conf+", show=False),
    Binding("minus", "confidence(-1)", "Conf-", show=False),
    Binding("d", "forget_record", "Forget", show=False),
    Binding("u", "undo", "Undo", show=False),
]
EDIT_HELP = (
    ("n", "new record (a form: type, title, body, scope, files, confidence)"),
    ("e", "edit the record in a form (id kept, change audited)"),
    ("E", "edit the record's title and body in $EDITOR"),
    ("s", "supersede: the successor's title and body, then why (required)"),
    ("p", "pin or unpin"),
    ("+ / -", "confidence up / down (inferred ↔ reinforced ↔ explicit)"),
    ("d", "forget the record everywhere (asks first; cannot be undone)"),
    ("u", "undo the last edit, pin or confidence change (supersede and forget ask first "
          "instead: they are not undone)"),
    ("ctrl+s / escape", "in a form: save / cancel; tab moves to the next field"),
)
EDIT_PALETTE = (
    PaletteAction("New record", "Record a decision, convention, preference…", "new_record"),
    PaletteAction("Edit record", "Correct the record in place (form)", "edit_record"),
    PaletteAction("Edit record in $EDITOR", "Title and body in your editor", "edit_in_editor"),
    PaletteAction("Supersede record", "Replace it by a successor, with why", "supersede_record"),
    PaletteAction("Pin / unpin record", "Always ranked first, never pruned", "toggle_pin"),
    PaletteAction("Confidence up", "inferred → reinforced → explicit", "confidence(1)"),
    PaletteAction("Confidence down", "explicit → reinforced → inferred", "confidence(-1)"),
    PaletteAction("Forget record", "Delete it everywhere (asks first)", "forget_record"),
    PaletteAction("Undo", "Undo the last edit, pin or confidence change", "undo"),
)
EDIT_ACTIONS = frozenset({"new_record", "edit_record", "edit_in_editor", "supersede_record",
                          "toggle_pin", "confidence", "forget_record", "undo"})


class RecordEditing:
    """The editing actions; the class mixing it in is a :class:`~agentctx.tui.pane.Pane`."""

    # Provided by Pane (declared for the type checker).
    agentctx_app: AgentctxApp

    def edit_target(self) -> Record | None:
        """The record the keys act on (the highlighted one, or the one open in detail)."""
        return None

    def after_write(self, record: Record | None) -> None:
        """Read the pane again after one of its writes (panes refine this)."""
        reload = getattr(self, "reload", None)
        if reload is not None:
            self.agentctx_app.guarded(reload)
        self.agentctx_app.guarded(self.agentctx_app.update_status)

    # ------------------------------------------------------------------ plumbing

    @property
    def writer(self) -> Writer:
        """The app's writer."""
        return self.agentctx_app.state.writer

    def _target(self) -> Record | None:
        target = self.edit_target()
        if target is None:
            self.agentctx_app.notify("no record here to act on", severity="warning", timeout=2)
        return target

    def _write(self, what: Callable[[], T]) -> T | None:
        """Run a write; a refusal becomes one line in a notification and ``None``."""
        try:
            return what()
        except (StoreError, sqlite3.Error, OSError) as exc:
            message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            self.agentctx_app.notify(f"nothing written: {message}", severity="error", timeout=6)
            return None

    def short(self, record_id: str) -> str:
        """The record's shortest unambiguous id prefix (as listings show it)."""
        try:
            return rec.short_ids(self.agentctx_app.state.db, [record_id]).get(record_id,
                                                                              record_id[:12])
        except (StoreError, sqlite3.Error):
            return record_id[:12]

    def _done(self, message: str, record: Record | None) -> None:
        self.agentctx_app.notify(message, timeout=3)
        self.after_write(record)

    # ------------------------------------------------------------------ actions

    def action_new_record(self) -> None:
        """``n``: the new-record form."""
        from agentctx.tui.widgets.record_form import RecordForm

        project = self.agentctx_app.state.project
        if project is None:
            self.agentctx_app.notify("no project yet: run `agentctx init` in one first",
                                     severity="warning")
            return

        def save(values: FormValues) -> Record:
            draft = Draft(type=values.type, title=values.title, body=values.body,
                          scope=values.scope, confidence=values.confidence, source="cli")
            return self.writer.add(draft, project, values.files)

        def done(created: Record | None) -> None:
            if created is not None:
                self._done(f"recorded {created.type} {self.short(created.id)}", created)

        self.agentctx_app.push_screen(RecordForm(save, project_name=project.name), done)

    def action_edit_record(self) -> None:
        """``e``: the same form, filled in."""
        from agentctx.tui.widgets.record_form import RecordForm

        record = self._target()
        if record is None:
            return
        if not record.current or record.archived:
            self.agentctx_app.notify("only current records can be edited; superseded ones are "
                                     "history", severity="warning")
            return
        seen = fingerprint(record)
        files = list(details.detail(self.agentctx_app.state.db, record.id).files)

        def save(values: FormValues) -> Record:
            return self.writer.edit(record.id, seen, title=values.title, body=values.body,
                                    confidence=values.confidence)

        def done(updated: Record | None) -> None:
            if updated is not None:
                self._done(f"updated {self.short(updated.id)} (u undoes)", updated)

        self.agentctx_app.push_screen(RecordForm(save, record=record, files=files), done)

    def action_edit_in_editor(self) -> None:
        """``E``: title and body in ``$EDITOR`` (the app suspends until the editor exits)."""
        from agentctx.edit_text import EditorError, edit_in_editor

        record = self._target()
        if record is None:
            return
        app = self.agentctx_app
        seen = fingerprint(record)
        try:
            with app.suspend():
                title, body = edit_in_editor(record.title, record.body, record.id)
        except EditorError as exc:
            app.notify(f"nothing written: {exc}", severity="error", timeout=6)
            return
        except Exception as exc:  # SuspendNotSupported (a headless or web driver)
            app.notify(f"cannot suspend the browser here: {exc or type(exc).__name__}",
                       severity="error")
            return
        if title == record.title and body == record.body:
            app.notify("no change", timeout=2)
            return
        updated = self._write(lambda: self.writer.edit(record.id, seen, title=title, body=body))
        if updated is not None:
            self._done(f"updated {self.short(updated.id)} (u undoes)", updated)

    def action_supersede_record(self) -> None:
        """``s``: the successor's title and body, then the rationale."""
        from agentctx.tui.widgets.record_form import SupersedeForm

        record = self._target()
        if record is None:
            return
        seen = fingerprint(record)
        if not record.current:
            # The store's own refusal before a form is filled in for nothing (or "changed
            # elsewhere" when the record became current again meanwhile: nothing is written).
            self._write(lambda: self.writer.supersede(record.id, seen, "", "", "refused"))
            return

        def save(values: FormValues) -> Record:
            return self.writer.supersede(record.id, seen, values.title, values.body,
                                         values.rationale)

        def done(new: Record | None) -> None:
            if new is not None:
                self._done(f"superseded {self.short(record.id)} by {self.short(new.id)}", new)

        self.agentctx_app.push_screen(SupersedeForm(save, record), done)

    def action_toggle_pin(self) -> None:
        """``p``: pin or unpin."""
        record = self._target()
        if record is None:
            return
        updated = self._write(lambda: self.writer.edit(
            record.id, None, pinned=not record.pinned,
            what="unpin" if record.pinned else "pin"))
        if updated is not None:
            self._done(f"{'pinned' if updated.pinned else 'unpinned'} {self.short(updated.id)}",
                       updated)

    def action_confidence(self, step: int) -> None:
        """``+`` / ``-``: one rung up or down the confidence ladder."""
        record = self._target()
        if record is None:
            return
        rung = CONFIDENCE_LADDER.index(record.confidence) + step
        if not 0 <= rung < len(CONFIDENCE_LADDER):
            self.agentctx_app.notify(f"confidence is already {record.confidence}", timeout=2)
            return
        updated = self._write(lambda: self.writer.step_confidence(record.id, step))
        if updated is None:
            return
        self._done(f"confidence of {self.short(updated.id)}: {updated.confidence}", updated)

    def action_forget_record(self) -> None:
        """``d``: forget everywhere, after a confirmation that says what goes."""
        from agentctx.tui.widgets.confirm import ConfirmScreen

        record = self._target()
        if record is None:
            return
        question = (f"Forget {record.type} “{record.title}” ({self.short(record.id)}) "
                    "everywhere?\n\n"
                    "This deletes the record with its links, edits, embeddings and search "
                    "entries; its chain closes over it. It cannot be undone.")

        def done(yes: bool | None) -> None:
            if not yes:
                self.agentctx_app.notify("nothing forgotten", timeout=2)
                return
            gone = self._write(lambda: self.writer.forget(record.id))
            if gone is not None:
                self._done(f"forgot {self.short(gone.id)}", None)

        self.agentctx_app.push_screen(ConfirmScreen(question), done)

    def action_undo(self) -> None:
        """``u``: undo the last edit, pin or confidence change."""
        result = self._write(self.writer.undo)
        if result is not None:
            what, record = result
            self._done(f"undid the {what} of {self.short(record.id)}", record)
