"""Pane 3, Chains: supersession chains as a tree — what was believed when, and why it changed.

Each chain is a node titled by its newest version; its children are the versions, oldest first,
with the dates each held and the rationale that replaced it. ``c`` on a record (pane 2) opens
the pane on that record's chain alone; ``escape`` goes back to every chain.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import Static, Tree
from textual.widgets.tree import TreeNode

from agentctx.store import chains as store_chains
from agentctx.store import records as rec
from agentctx.store.chains import Chain
from agentctx.store.errors import NotFound, StoreError
from agentctx.store.models import Record
from agentctx.tui.actions import Action
from agentctx.tui.cells import as_written, day, ellipsize, plural
from agentctx.tui.editing import EDIT_ACTIONS, RecordEditing
from agentctx.tui.pane import PaneTitle

if TYPE_CHECKING:
    from agentctx.tui.appstate import AppState

PAGE = 50


def version_label(chain: Chain, index: int, width: int) -> Text:
    """One version: the dates it held and its title (the one in force in bold)."""
    version = chain.versions[index]
    record = version.record
    until = day(record.superseded_at) if record.superseded_at else "now"
    label = Text(f"{day(record.valid_from)} → {until:<10} ", style="dim")
    label.append(ellipsize(record.title, max(10, width - 30)),
                 style="bold" if record.current else "strike")
    return label


class ChainsPane(RecordEditing):
    """The active project's supersession chains, newest change first."""

    ACTIONS = (
        Action("enter", "open_version", "Open", "open the version under the cursor in full, "
               "with why it changed", "Open version", priority=True),
        Action("space", "toggle_node", "Expand", "expand or collapse a chain", footer=False,
               palette=False, bound=False),
        Action("m", "more", "More", "load more chains", "Load more chains"),
        Action("escape", "all_chains", "All chains", "back to every chain after a jump",
               "Every chain", footer=False),
        *EDIT_ACTIONS,
    )

    def __init__(self, state: AppState, **kwargs: object) -> None:
        super().__init__(state, **kwargs)
        self.focus_id: str | None = None
        self._follow: str | None = None  # the record the cursor goes to on the next reload
        self._open: set[str] = set()  # records of the chains shown open
        self.loaded = 0
        self.total = 0

    def compose(self) -> ComposeResult:
        yield PaneTitle("Chains", classes="pane-title")
        yield Static("", classes="empty", markup=False)
        tree: Tree[str] = Tree("chains", id="chains-tree")
        tree.show_root = False
        tree.guide_depth = 3
        yield tree

    def reload(self) -> None:
        """Read the chains again; the cursor stays on its record (or goes to the one a write
        named) and the chains that were open stay open."""
        tree = self.query_one(Tree)
        under = self._follow or (tree.cursor_node.data if tree.cursor_node is not None else None)
        self._follow = None
        self._open = {leaf.data for node in tree.root.children if node.is_expanded
                      for leaf in (node, *node.children) if leaf.data}
        if under:
            self._open.add(under)
        tree.clear()
        project = self.state.project
        empty = self.query_one(".empty", Static)
        if self.focus_id is not None:
            try:
                chain = store_chains.chain_of(self.state.db, self.focus_id)
            except StoreError as exc:
                self.notify(str(exc), severity="error")
                self.focus_id = None
                self.reload()
                return
            self._add_chain(chain, expand=True)
            self._cursor_to(under)
            self.query_one(PaneTitle).set_text(
                f"Chain of “{chain.head.title}” · {plural(len(chain.versions), 'version')} · "
                "escape: every chain")
            empty.display = False
            return
        if project is None:
            self.total = 0
            found: list[Chain] = []
        else:
            self.total = store_chains.count_chains(self.state.db, project.id)
            found = store_chains.chains(self.state.db, project.id, limit=PAGE)
        self.loaded = len(found)
        for chain in found:
            self._add_chain(chain, expand=any(v.record.id in self._open for v in chain.versions))
        name = project.name if project else "no project"
        self.query_one(PaneTitle).set_text(
            f"Chains · {name} · {self.loaded} of {self.total} · what was believed when, and why")
        empty.display = not found
        empty.update("No supersession chains yet: when a decision is replaced "
                     "(`agentctx supersede`, or extraction), its history shows here.")
        if found:
            self._cursor_to(under)

    def _cursor_to(self, record_id: str | None) -> None:
        """The cursor on the first line of ``record_id`` (else on the first line)."""
        tree = self.query_one(Tree)
        for chain in tree.root.children:
            for node in (chain, *chain.children):
                if record_id is not None and node.data == record_id and (
                        node is chain or chain.is_expanded):
                    # A node has a line only once the tree has laid its lines out again.
                    tree.call_after_refresh(tree.move_cursor, node)
                    return
        tree.move_cursor_to_line(0)

    def _add_chain(self, chain: Chain, *, expand: bool) -> None:
        tree = self.query_one(Tree)
        width = self.layout_width()
        head = chain.head
        label = Text(f"{head.type:<10} ", style="dim")
        label.append(ellipsize(head.title, max(10, width - 32)), style="bold")
        label.append(f"  {plural(len(chain.versions), 'version')}", style="dim")
        node: TreeNode[str] = tree.root.add(label, data=head.id, expand=expand)
        for index, version in enumerate(chain.versions):
            child = node.add(version_label(chain, index, width), data=version.record.id,
                             expand=True)
            if version.rationale:
                child.add_leaf(Text("why it changed: " + ellipsize(version.rationale,
                                                                   max(10, width - 26)),
                                    style="italic"), data=version.record.id)

    def jump_to(self, record_id: str) -> None:
        """``c`` on a record: its chain."""
        self.show_chain_of(record_id)

    def show_chain_of(self, record_id: str) -> None:
        """Show only the chain through ``record_id``, expanded."""
        self.focus_id = record_id
        self.reload()
        self.screen.set_focus(self.query_one(Tree))

    def action_open_version(self) -> None:
        """``enter``: a chain's line expands or collapses; a version opens in full (title,
        dates, body and why it changed)."""
        tree = self.query_one(Tree)
        node = tree.cursor_node
        if node is None:
            return
        if node.parent is tree.root:
            node.toggle()
            return
        record = self.edit_target()
        if record is None:
            return
        try:
            chain = store_chains.chain_of(self.state.db, record.id)
        except StoreError as exc:
            self.notify(str(exc), severity="error")
            return
        version = next((v for v in chain.versions if v.record.id == record.id), None)
        short = rec.short_ids(self.state.db, [record.id])[record.id]
        until = day(record.superseded_at) if record.superseded_at else "now"
        text = (f"# {as_written(record.title)}\n\n**{record.type}** · `{short}` · "
                f"{day(record.valid_from)} → {until}\n\n"
                f"{as_written(record.body.strip()) or '_(no body)_'}")
        if version is not None and version.rationale:
            text += f"\n\n## Why it changed\n\n{as_written(version.rationale)}"
        from agentctx.tui.widgets.reader import ReaderScreen  # late: markdown, 36 ms

        self.app.push_screen(ReaderScreen(text))

    def action_all_chains(self) -> None:
        """Back to every chain of the project."""
        if self.focus_id is not None:
            self.focus_id = None
            self.reload()

    def action_more(self) -> None:
        """Read the next page of chains."""
        project = self.state.project
        if project is None or self.focus_id is not None or self.loaded >= self.total:
            return
        more = store_chains.chains(self.state.db, project.id, limit=PAGE, offset=self.loaded)
        for chain in more:
            self._add_chain(chain, expand=False)
        self.loaded += len(more)
        self.query_one(PaneTitle).set_text(
            f"Chains · {project.name} · {self.loaded} of {self.total} · what was believed when, "
            "and why")

    def edit_target(self) -> Record | None:
        """The version (or the chain's newest version) under the cursor."""
        node = self.query_one(Tree).cursor_node
        if node is None or not node.data:
            return None
        try:
            return rec.get(self.state.db, node.data)
        except NotFound:
            return None

    def after_write(self, record: Record | None, *, follow: bool = True) -> None:
        """Follow a supersede: the chain shown is the one through the new version."""
        if self.focus_id is not None and record is not None:
            self.focus_id = record.id
        elif record is None:
            self.focus_id = None
        if record is not None and follow:
            self._follow = record.id
        super().after_write(record, follow=follow)

    def project_changed(self) -> None:
        self.focus_id = None
        super().project_changed()
