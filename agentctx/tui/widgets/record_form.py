"""The record forms: new (``n``), edit (``e``) and supersede (``s``).

A form checks what it can before it asks the store (the store's own :func:`validate`, on a
:class:`Draft`, as the CLI and the MCP server do), then calls its ``save`` function, which writes
through :class:`~agentctx.tui.writes.Writer`. A refusal (invalid value, changed elsewhere, locked
store) shows beside the field it concerns, or at the top; the form stays open and nothing is
written. ``ctrl+s`` or Save saves, ``escape`` cancels, ``tab`` moves through the fields in reading
order, and the first field has focus when the form opens.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import ClassVar, NamedTuple

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Button, Input, Label, Select, Static, TextArea

from agentctx.store import records as rec
from agentctx.store.errors import StoreError
from agentctx.store.models import CONFIDENCES, RECORD_TYPES, SCOPES, Draft, Record
from agentctx.tui.widgets.keybar import KeyBar

# Which field a store message is about (first match wins); anything else shows at the top.
FIELD_WORDS = (("rationale", "rationale"), ("title", "title"), ("body", "body"),
               ("scope", "scope"), ("global", "scope"), ("confidence", "confidence"),
               ("type", "type"))


class FormValues(NamedTuple):
    """What a record form holds when saved."""

    type: str
    title: str
    body: str
    scope: str
    files: list[str]
    confidence: str
    rationale: str = ""


def field_of(message: str, fields: tuple[str, ...]) -> str | None:
    """The form field a refusal names, when the form has it."""
    lowered = message.lower()
    for word, field in FIELD_WORDS:
        if word in lowered and field in fields:
            return field
    return None


class FormScreen(ModalScreen[Record | None]):
    """The shared frame: a heading, rows of label + field + error, Save and Cancel."""

    DEFAULT_CSS = """
    FormScreen { align: center middle; }
    FormScreen > Vertical { width: 78; max-width: 100%; height: auto; max-height: 100%;
                            border: thick $accent; background: $surface; padding: 0 1; }
    FormScreen #form-heading { text-style: bold; height: auto; }
    FormScreen #form-error { color: $error; height: auto; }
    FormScreen .row { height: auto; }
    FormScreen .row Label { width: 11; padding-top: 0; }
    FormScreen .row Input, FormScreen .row Select { width: 1fr; }
    FormScreen TextArea { width: 1fr; height: 6; }
    FormScreen .field-error { color: $error; height: auto; padding-left: 11; }
    FormScreen .field-error.-empty { display: none; }
    FormScreen #form-buttons { height: auto; align-horizontal: right; }
    FormScreen #form-buttons Button { margin-left: 2; }
    FormScreen #form-hint { width: 1fr; color: $text-muted; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel"),
                                             Binding("ctrl+s", "save", "Save")]
    FIELDS: ClassVar[tuple[str, ...]] = ()

    def __init__(self, heading: str, save: Callable[[FormValues], Record]) -> None:
        super().__init__()
        self.heading = heading
        self.save_with = save

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.heading, id="form-heading", markup=False)
            yield Static("", id="form-error", markup=False)
            yield from self.fields()
            with Horizontal(id="form-buttons"):
                yield Static("tab next field · escape cancel", id="form-hint")
                yield Button("Cancel", id="cancel", compact=True)
                yield Button("Save ^s", id="save", variant="primary", compact=True)
        yield KeyBar(tail=())  # the dialog's own keys

    def fields(self) -> ComposeResult:
        """The form's rows (subclasses)."""
        yield from ()

    def row(self, label: str, field: Widget, name: str) -> ComposeResult:
        """One labelled field with its error line below."""
        with Horizontal(classes="row"):
            yield Label(label)
            yield field
        yield Static("", id=f"{name}-error", classes="field-error -empty", markup=False)

    def on_mount(self) -> None:
        self.clear_errors()
        for name in self.FIELDS:
            widget = self.query_one(f"#{name}")
            if widget.focusable and not widget.disabled:
                self.set_focus(widget)
                break

    def clear_errors(self) -> None:
        """Hide every error."""
        self.query_one("#form-error", Static).update("")
        self.query_one("#form-error").display = False
        for error in self.query(".field-error").results(Static):
            error.update("")
            error.add_class("-empty")

    def show_error(self, message: str) -> None:
        """Show a refusal beside the field it names (else at the top)."""
        field = field_of(message, self.FIELDS)
        if field is None:
            top = self.query_one("#form-error", Static)
            top.update(message)
            top.display = True
            return
        error = self.query_one(f"#{field}-error", Static)
        error.update(message)
        error.remove_class("-empty")

    def text(self, name: str) -> str:
        """A field's value as text."""
        widget = self.query_one(f"#{name}")
        if isinstance(widget, TextArea):
            return widget.text
        if isinstance(widget, Input):
            return widget.value
        if isinstance(widget, Select):
            value = widget.value
            return value if isinstance(value, str) else ""
        raise TypeError(name)

    def values(self) -> FormValues:
        """The fields as the form shows them."""
        def get(name: str, default: str = "") -> str:
            return self.text(name) if name in self.FIELDS else default

        files = [part.strip() for part in get("files").split(",") if part.strip()]
        return FormValues(get("type"), get("title"), get("body"), get("scope", "project"),
                          files, get("confidence", "explicit"), get("rationale"))

    def check(self, values: FormValues) -> str | None:
        """A refusal found without the store (subclasses)."""
        return None

    def action_save(self) -> None:
        """Check the form, then save through the store; stay open on a refusal."""
        self.clear_errors()
        values = self.values()
        problem = self.check(values)
        if problem is None:
            try:
                saved = self.save_with(values)
            except (StoreError, sqlite3.Error, OSError) as exc:
                problem = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            else:
                self.dismiss(saved)
                return
        self.show_error(problem)

    def action_cancel(self) -> None:
        """Close without writing."""
        self.dismiss(None)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "save":
            self.action_save()
        else:
            self.action_cancel()


def _select(options: tuple[str, ...], value: str, name: str, disabled: bool = False) -> Select[str]:
    return Select[str](((option, option) for option in options), value=value, allow_blank=False,
                       id=name, compact=True, disabled=disabled)


class RecordForm(FormScreen):
    """New record (empty) or edit (``record`` given: title, body and confidence change in
    place; type, scope and files are shown but kept — a change of meaning is a supersede)."""

    FIELDS = ("type", "title", "body", "scope", "files", "confidence")

    def __init__(self, save: Callable[[FormValues], Record], *, record: Record | None = None,
                 files: list[str] | None = None, project_name: str = "") -> None:
        heading = (f"Edit {record.type} (id kept, the change audited; a new fact is a "
                   "supersede: s)"
                   if record else f"New record in {project_name}")
        super().__init__(heading, save)
        self.record = record
        self.files = files or []

    def fields(self) -> ComposeResult:
        r = self.record
        editing = r is not None
        yield from self.row("type", _select(RECORD_TYPES, r.type if r else "decision", "type",
                                            disabled=editing), "type")
        yield from self.row("title", Input(r.title if r else "", id="title", compact=True,
                                           placeholder="one line", select_on_focus=False),
                            "title")
        body = TextArea(r.body if r else "", id="body", compact=True, tab_behavior="focus",
                        soft_wrap=True)
        yield from self.row("body", body, "body")
        yield from self.row("scope", _select(SCOPES, r.scope if r else "project", "scope",
                                             disabled=editing), "scope")
        yield from self.row("files", Input(", ".join(self.files), id="files", compact=True,
                                           placeholder="none" if editing else
                                           "src/app.py, src/db/ (comma separated)",
                                           disabled=editing), "files")
        yield from self.row("confidence", _select(CONFIDENCES, r.confidence if r else "explicit",
                                                  "confidence"), "confidence")

    def check(self, values: FormValues) -> str | None:
        try:
            rec.validate(Draft(type=values.type, title=values.title, body=values.body,
                               scope=values.scope, confidence=values.confidence,
                               source="tui"))
        except StoreError as exc:
            return str(exc)
        return None


class SupersedeForm(FormScreen):
    """The successor's title and body, then the rationale (required), in that order."""

    FIELDS = ("title", "body", "rationale")

    def __init__(self, save: Callable[[FormValues], Record], record: Record) -> None:
        super().__init__(f"Supersede {record.type} “{record.title}” — the old record moves "
                         "into history", save)
        self.record = record

    def fields(self) -> ComposeResult:
        yield from self.row("new title", Input("", id="title", compact=True,
                                               placeholder=self.record.title), "title")
        yield from self.row("new body", TextArea("", id="body", compact=True,
                                                 tab_behavior="focus", soft_wrap=True), "body")
        yield from self.row("rationale", Input("", id="rationale", compact=True,
                                               placeholder="why the old record no longer holds"),
                            "rationale")

    def check(self, values: FormValues) -> str | None:
        if not values.rationale.strip():
            return "a rationale is required: say why the old record no longer holds"
        if not values.body.strip():
            return "the successor's body is required: say what holds now"
        try:
            rec.validate(Draft(type=self.record.type, title=values.title or self.record.title,
                               body=values.body, confidence="explicit", source="tui"))
        except StoreError as exc:
            return str(exc)
        return None

