"""The record detail panel: the body as Markdown, provenance, the chain links and the edits.

It belongs to the records pane (``enter`` opens it, ``escape`` closes it); its keys are its own
bindings, so actions added later (editing, superseding) slot in beside ``c`` and ``y`` and show
in the footer while the panel has focus.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Markdown

from agentctx.store.details import RecordDetail
from agentctx.tui.cells import as_written, minute


def linked_ids(item: RecordDetail) -> list[str]:
    """Every record id the detail of ``item`` shows (itself and its chain links)."""
    found = [item.record.id, *(link.id for link in item.supersedes)]
    if item.superseded_by is not None:
        found.append(item.superseded_by.id)
    return found


def detail_markdown(item: RecordDetail, shorts: dict[str, str]) -> str:
    """The detail of one record as Markdown (what the panel shows); ``shorts`` holds the store's
    short id of every id in :func:`linked_ids`, so each one shown resolves with
    ``agentctx show``."""
    r = item.record
    short_id = shorts.get(r.id, r.id)
    state = "current" if r.current else "superseded"
    if r.archived:
        state += ", archived"
    if r.pinned:
        state += ", pinned"
    confidence = r.confidence + (f" (reinforced {r.reinforce_count}×)" if r.reinforce_count
                                 else "")
    lines = [f"**{r.type}**" + (" · global" if r.scope == "global" else "")
             + f" · {state} · {confidence} · valid from {minute(r.valid_from)}",
             f"id `{r.id}` ({short_id}) · recorded {minute(r.recorded_at)} · source {r.source}"]
    if r.session_id:
        lines.append(f"session `{r.session_id}`")
    if r.key:
        lines.append(f"key `{r.key}`")
    if item.files:
        lines.append("files " + ", ".join(f"`{name}`" for name in item.files))
    if item.possibly_stale:
        lines.append("**possibly stale**: " + ", ".join(f"`{p}`" for p in item.possibly_stale)
                     + " no longer exist" + ("s" if len(item.possibly_stale) == 1 else "")
                     + " (`agentctx verify` resolves it)")
    others = [e for e in item.entities if e.node.kind != "file"]
    if others:
        lines.append("entities " + ", ".join(f"{e.node.kind} `{e.node.name}` ({e.rel})"
                                             for e in others))
    out = [f"# {as_written(r.title)}", "", "  \n".join(lines)]
    out += ["", as_written(r.body.strip()) or "_(no body)_", "", "## Chain"]
    chain = []
    for link in item.supersedes:
        short = shorts.get(link.id, link.id)
        chain.append(f"- replaced **{link.title or '(forgotten)'}** (`{short}`, "
                     f"valid from {minute(link.valid_from)})"
                     + (f" — because: {link.rationale}" if link.rationale else ""))
    if item.superseded_by is not None:
        link = item.superseded_by
        chain.append(f"- replaced on {minute(r.superseded_at)} by **{link.title or '(forgotten)'}**"
                     f" (`{shorts.get(link.id, link.id)}`)" + (f" — because: {link.rationale}"
                                               if link.rationale else ""))
    elif r.superseded_at:
        chain.append(f"- retired on {minute(r.superseded_at)}"
                     + (f" — {item.retired_because}" if item.retired_because else ""))
    out += chain or ["_Never superseded: this is the only version._"]
    if item.edits:
        out += ["", "## Edits"]
        out += [f"- {minute(e.changed_at)} {e.actor}: {e.field} changed" for e in item.edits]
    return "\n".join(out)


class DetailPanel(VerticalScroll):
    """One record in full. ``c`` jumps to its chain, ``y`` copies its id, ``escape`` closes."""

    class Closed(Message):
        """The user closed the panel."""

    class ChainWanted(Message):
        """The user asked for the record's chain."""

        def __init__(self, record_id: str) -> None:
            super().__init__()
            self.record_id = record_id

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close"),
        Binding("c", "chain", "Chain"),
        Binding("y", "copy_id", "Copy id"),
    ]

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.item: RecordDetail | None = None

    def compose(self) -> ComposeResult:
        yield Markdown("", id="detail-body")

    def show(self, item: RecordDetail, shorts: dict[str, str]) -> None:
        """Show ``item`` and scroll to its top."""
        self.item = item
        self.query_one(Markdown).update(detail_markdown(item, shorts))
        self.scroll_home(animate=False)

    def action_close(self) -> None:
        """Close the panel."""
        self.post_message(self.Closed())

    def action_chain(self) -> None:
        """Open the chains pane on this record's chain."""
        if self.item is not None:
            self.post_message(self.ChainWanted(self.item.record.id))

    def action_copy_id(self) -> None:
        """Copy the record's id (OSC 52: works over SSH)."""
        if self.item is not None:
            self.app.copy_to_clipboard(self.item.record.id)
            self.app.notify(f"copied {self.item.record.id}", timeout=2)
