"""Keyboard editing of records, shared by the records, chains and profile panes.

A pane that edits is a :class:`RecordEditing` and says which record the keys act on
(:meth:`RecordEditing.edit_target`); every write goes through the browser's
:class:`~agentctx.tui.writes.Writer` (the store API), confirms with a notification that names the
record, and reloads the pane. A write the store refuses (invalid, changed elsewhere, locked,
too new) changes nothing and says why in one line.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from agentctx.ops.write_path import CONFIDENCE_LADDER, fingerprint
from agentctx.store import details
from agentctx.store import records as rec
from agentctx.store.errors import StoreError
from agentctx.store.models import Draft, Record
from agentctx.tui.actions import Action
from agentctx.tui.cells import ellipsize
from agentctx.tui.messages import Wrote
from agentctx.tui.pane import Pane
from agentctx.tui.writes import Writer

if TYPE_CHECKING:
    from agentctx.tui.widgets.record_form import FormValues

T = TypeVar("T")

EDIT_ACTIONS = (
    Action("n", "new_record", "New", "new record (a form: type, title, body, scope, files, "
           "confidence)", "New record"),
    Action("e", "edit_record", "Edit", "edit the record in a form (id kept, change audited)",
           "Edit record"),
    Action("E", "edit_in_editor", "$EDITOR", "edit the record's title and body in $EDITOR",
           "Edit record in $EDITOR", footer=False),
    Action("s", "supersede_record", "Supersede", "supersede: the successor's title and body, "
           "then why (required)", "Supersede record"),
    Action("p", "toggle_pin", "Pin", "pin or unpin (always ranked first, never pruned)",
           "Pin / unpin record"),
    Action("plus", "confidence(1)", "Conf+", "confidence up (inferred → reinforced → explicit)",
           "Confidence up", footer=False),
    Action("minus", "confidence(-1)", "Conf-", "confidence down", "Confidence down",
           footer=False),
    Action("d", "forget_record", "Forget", "forget the record everywhere (asks first; cannot "
           "be undone)", "Forget record", footer=False),
    Action("u", "undo", "Undo", "undo the last edit, pin or confidence change (supersede and "
           "forget ask first instead: they are not undone)", "Undo", footer=False),
)


class RecordEditing(Pane):
    """A pane with the editing actions."""

    def edit_target(self) -> Record | None:
        """The record the keys act on (the highlighted one, or the one open in detail)."""
        return None

    def after_write(self, record: Record | None, *, follow: bool = True) -> None:
        """Read the pane again after one of its writes (panes refine this): the cursor goes to
        ``record`` when ``follow``, else stays on the record it was on."""
        self.guarded(self.reload)
        self.post_message(Wrote())

    # ------------------------------------------------------------------ plumbing

    @property
    def writer(self) -> Writer:
        """The app's writer."""
        return self.state.writer

    def _target(self) -> Record | None:
        target = self.edit_target()
        if target is None:
            self.notify("no record here to act on", severity="warning", timeout=2)
        return target

    def _write(self, what: Callable[[], T]) -> T | None:
        """Run a write; a refusal becomes one line in a notification and ``None``."""
        try:
            return what()
        except (StoreError, sqlite3.Error, OSError) as exc:
            message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            self.notify(f"nothing written: {message}", severity="error", timeout=6)
            return None

    def short(self, record_id: str) -> str:
        """The record's shortest unambiguous id prefix (as listings show it)."""
        try:
            return rec.short_ids(self.state.db, [record_id])[record_id]
        except (StoreError, sqlite3.Error):
            return record_id

    def named(self, record: Record) -> str:
        """The record as a notification names it: short id and title (so a write started from
        the palette on another pane says which record it changed)."""
        return f"{self.short(record.id)} “{ellipsize(record.title, 40)}”"

    def _done(self, message: str, record: Record | None, *, follow: bool = True) -> None:
        self.notify(message, timeout=3)
        note = self.writer.take_note()
        if note:  # the write holds; the team file could not follow it
            self.notify(f"team file not updated: {note}", severity="warning", timeout=8)
        self.after_write(record, follow=follow)

    # ------------------------------------------------------------------ actions

    def action_new_record(self) -> None:
        """``n``: the new-record form."""
        from agentctx.tui.widgets.record_form import RecordForm  # late: 13 ms, on a form

        project = self.state.project
        if project is None:
            self.notify("no project yet: run `agentctx init` in one first",
                                     severity="warning")
            return

        def save(values: FormValues) -> Record:
            draft = Draft(type=values.type, title=values.title, body=values.body,
                          scope=values.scope, confidence=values.confidence)
            return self.writer.add(draft, project, values.files)

        def done(created: Record | None) -> None:
            if created is not None:
                # The cursor stays on the record it was on (the new one sorts in elsewhere).
                self._done(f"recorded {created.type} {self.named(created)}", created,
                           follow=False)

        self.app.push_screen(RecordForm(save, project_name=project.name), done)

    def action_edit_record(self) -> None:
        """``e``: the same form, filled in."""
        from agentctx.tui.widgets.record_form import RecordForm  # late: 13 ms, on a form

        record = self._target()
        if record is None:
            return
        if not record.current or record.archived:
            self.notify("only current records can be edited; superseded ones are "
                                     "history", severity="warning")
            return
        seen = fingerprint(record)
        files = list(details.detail(self.state.db, record.id).files)

        def save(values: FormValues) -> Record:
            return self.writer.edit(record.id, seen, title=values.title, body=values.body,
                                    confidence=values.confidence)

        def done(updated: Record | None) -> None:
            if updated is not None:
                self._done(f"updated {self.named(updated)} (u undoes)", updated)

        self.app.push_screen(RecordForm(save, record=record, files=files), done)

    def action_edit_in_editor(self) -> None:
        """``E``: title and body in ``$EDITOR`` (the app suspends until the editor exits)."""
        from agentctx.ops import edit_text  # late: on E, off the TUI's open time

        record = self._target()
        if record is None:
            return
        app = self.app
        seen = fingerprint(record)
        if not edit_text.editor_command():
            app.notify("nothing written: no $EDITOR set (set EDITOR, or use e for the form)",
                       severity="error", timeout=6)
            return
        failed: edit_text.EditorError | None = None
        title, body = record.title, record.body
        try:
            # Textual resumes the app only when the block ends normally: every error of the
            # editor is caught inside it, so the terminal always comes back to the app.
            with app.suspend():
                try:
                    title, body = edit_text.edit_in_editor(record.title, record.body, record.id)
                except edit_text.EditorError as exc:
                    failed = exc
                except Exception as exc:  # anything else the editor's run raises
                    failed = edit_text.EditorError(str(exc) or type(exc).__name__)
        except Exception as exc:  # SuspendNotSupported (a headless or web driver)
            app.notify(f"cannot suspend the browser here: {exc or type(exc).__name__}",
                       severity="error")
            return
        if failed is not None:
            app.notify(f"nothing written: {failed}", severity="error", timeout=6)
            return
        if title == record.title and body == record.body:
            app.notify("no change", timeout=2)
            return
        updated = self._write(lambda: self.writer.edit(record.id, seen, title=title, body=body))
        if updated is not None:
            self._done(f"updated {self.named(updated)} (u undoes)", updated)

    def action_supersede_record(self) -> None:
        """``s``: the successor's title and body, then the rationale."""
        from agentctx.tui.widgets.record_form import SupersedeForm  # late: 13 ms, on a form

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
                self._done(f"superseded {self.short(record.id)} by {self.named(new)}", new)

        self.app.push_screen(SupersedeForm(save, record), done)

    def action_toggle_pin(self) -> None:
        """``p``: pin or unpin."""
        record = self._target()
        if record is None:
            return
        updated = self._write(lambda: self.writer.edit(
            record.id, None, pinned=not record.pinned,
            what="unpin" if record.pinned else "pin"))
        if updated is not None:
            self._done(f"{'pinned' if updated.pinned else 'unpinned'} {self.named(updated)}",
                       updated)

    def action_confidence(self, step: int) -> None:
        """``+`` / ``-``: one rung up or down the confidence ladder."""
        record = self._target()
        if record is None:
            return
        rung = CONFIDENCE_LADDER.index(record.confidence) + step
        if not 0 <= rung < len(CONFIDENCE_LADDER):
            self.notify(f"confidence is already {record.confidence}", timeout=2)
            return
        updated = self._write(lambda: self.writer.step_confidence(record.id, step))
        if updated is None:
            return
        self._done(f"confidence of {self.named(updated)}: {updated.confidence}", updated)

    def action_forget_record(self) -> None:
        """``d``: forget everywhere, after a confirmation that says what goes."""
        from agentctx.tui.widgets.confirm import ConfirmScreen  # late: on first use

        record = self._target()
        if record is None:
            return
        again = self._write(lambda: self.writer.forgetting(record.id))
        if again is None:
            return
        question = (f"Forget {record.type} “{record.title}” ({self.short(record.id)}) "
                    "everywhere?\n\n"
                    "This deletes the record with its links, edits, embeddings and search "
                    "entries; its chain closes over it. It cannot be undone.")
        if again:
            question += "\n\n" + self._current_again(again)

        def done(yes: bool | None) -> None:
            if not yes:
                self.notify("nothing forgotten", timeout=2)
                return
            gone = self._write(lambda: self.writer.forget(record.id))
            if gone is not None:
                said = f"forgot {self.named(gone.record)}"
                if gone.current_again:
                    said += " — " + self._current_again(gone.current_again)
                self._done(said, gone.current_again[0] if gone.current_again else None)

        self.app.push_screen(ConfirmScreen(question), done)

    def _current_again(self, records: tuple[Record, ...]) -> str:
        """What becomes current again when a successor goes: each record's id and title."""
        return "Current again: " + "; ".join(f"{self.short(r.id)} “{r.title}”" for r in records)

    def action_undo(self) -> None:
        """``u``: undo the last edit, pin or confidence change."""
        result = self._write(self.writer.undo)
        if result is not None:
            what, record = result
            self._done(f"undid the {what} of {self.named(record)}", record)
