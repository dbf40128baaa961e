"""Pane 7, Drift: where CLAUDE.md and the other memory files no longer say what the store knows.

Candidates (missing, contradicted, stale) with their score, the proposed unified diff
highlighted, and the records dismissed as intentionally absent. ``A`` applies the diff after a
confirmation (nothing is written before), ``x`` dismisses the highlighted candidate, ``X`` flags
a dismissed record again. The scan runs in a worker thread on its own connection (it reads the
memory files and stores the drift scores, as ``agentctx sync`` does).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.syntax import Syntax
from textual import work
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Static
from textual.worker import get_current_worker

from agentctx import drift
from agentctx.store import drift_state
from agentctx.store import projects as proj
from agentctx.store import records as rec
from agentctx.store.errors import StoreError
from agentctx.store.models import Project, Record
from agentctx.tui.actions import Action
from agentctx.tui.cells import ellipsize, home_path, plural, tail
from agentctx.tui.pane import Pane, PaneTitle
from agentctx.tui.widgets.confirm import ConfirmScreen
from agentctx.tui.widgets.table import Column, PlainTable

if TYPE_CHECKING:
    from agentctx.tui.appstate import AppState

DISMISSED = "dismissed"
COLUMNS = (Column("class", "class", 12), Column("score", "score", 5),
           Column("record", "title", 24, grow=3), Column("where", "where", 14, grow=1))


class DriftPane(Pane):
    """Drift candidates of the active project and the diff that would fix them."""

    ACTIONS = (
        Action("A", "apply", "Apply", "apply the proposed diff to the memory files (asks first)",
               "Apply the diff"),
        Action("x", "dismiss", "Dismiss", "dismiss the candidate: intentionally absent, no "
               "longer flagged", "Dismiss candidate"),
        Action("X", "undismiss", "Undismiss", "flag a dismissed record again",
               "Undismiss record"),
        Action("s", "scan", "Scan", "scan the memory files again", "Scan again"),
    )

    def __init__(self, state: AppState, **kwargs: object) -> None:
        super().__init__(state, **kwargs)
        self.found: drift.Proposal | None = None
        self.dismissed: list[Record] = []
        self.scanning = False
        self._shown: tuple[Project, drift.Proposal | None, str] | None = None

    def compose(self) -> ComposeResult:
        yield PaneTitle("Drift", classes="pane-title")
        yield PlainTable(cursor_type="row", zebra_stripes=True, id="drift-table")
        with VerticalScroll(id="diff-box"):
            yield Static("", id="diff", markup=False)

    def _folder_cwd(self, project: Project) -> str:
        """Where the memory files are: the app's folder when it is in the project, else the
        project's root (so the scan never creates a project for an unrelated folder)."""
        here = proj.of_folder(self.state.db, self.state.cwd)
        return self.state.cwd if here is not None and here.id == project.id else project.root

    def reload(self) -> None:
        project = self.state.project
        if project is None:
            self.query_one(PaneTitle).set_text("Drift · no project")
            self.query_one("#diff", Static).update(
                "No project yet — run `agentctx init`, then use Claude Code.")
            return
        self.query_one(PaneTitle).set_text(f"Drift · {project.name} · scanning the memory "
                                           "files…")
        self.scanning = True
        self.scan(project, self._folder_cwd(project))

    @work(thread=True, exclusive=True, group="drift")
    def scan(self, project: Project, cwd: str) -> None:
        """Scan and propose on a connection of this thread."""
        worker = get_current_worker()
        try:
            with self.state.worker_store() as db:
                found = drift.proposal(db, project, cwd, encoder=drift.default_encoder(db))
            problem = ""
        except (StoreError, OSError) as exc:
            found, problem = None, str(exc)
        if not worker.is_cancelled:
            self.app.call_from_thread(self._show, project, found, problem)

    def relayout(self) -> None:
        shown = self._shown
        if shown is not None and not self.scanning:
            self._show(*shown)  # the columns to the new width; the scan is not run again

    def _show(self, project: Project, found: drift.Proposal | None, problem: str) -> None:
        self._shown = (project, found, problem)
        self.scanning = False
        self.found = found
        db = self.state.db
        ids = sorted(drift_state.dismissed(db, project.id))
        self.dismissed = rec.get_many(db, ids)[0] if ids else []
        table = self.query_one(PlainTable)
        keep, under = table.cursor_row, table.cursor_key()
        widths = table.fit_columns(COLUMNS, self.layout_width())
        diff = self.query_one("#diff", Static)
        if found is None:
            self.query_one(PaneTitle).set_text(f"Drift · {project.name} · the scan failed")
            diff.update(problem)
            return
        shorts = rec.short_ids(db, [p.candidate.id for p in found.candidates])
        for n, p in enumerate(found.candidates):
            c = p.candidate
            where = f"{p.file}:{p.line}" if p.file and p.line else (p.file or found.target)
            # A record may come twice (two older versions stated): the row key is made unique.
            table.add_row(c.kind, f"{c.score:.2f}",
                          ellipsize(f"{shorts[c.id]} {c.record.title}", widths["title"]),
                          tail(where, widths["where"]), key=f"{c.id}#{n}")
        for r in self.dismissed:
            table.add_row(DISMISSED, "-", ellipsize(r.title, widths["title"]), "X: flag again",
                          key=f"{DISMISSED}:{r.id}")
        table.cursor_to(under, keep)
        files = ", ".join(f.name for f in found.scan.memory.files) or "no memory files"
        self.query_one(PaneTitle).set_text(
            f"Drift · {project.name} · {plural(len(found.candidates), 'candidate')} · {files} · "
            "A apply · x dismiss · X undismiss")
        if found.diff:
            diff.update(Syntax(found.diff, "diff", theme="ansi_dark", word_wrap=True))
        elif found.candidates:
            diff.update("Nothing to change in the files: " + "; ".join(found.problems or (
                "the candidates need a person's judgement",)))
        else:
            diff.update(f"No drift: the memory files ({files}) say what the store knows.")

    def _highlighted_key(self) -> str | None:
        table = self.query_one(DataTable)
        if not table.row_count:
            return None
        return table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value

    def action_scan(self) -> None:
        """Read the memory files again."""
        self.reload()

    def action_apply(self) -> None:
        """Write the proposed diff after a confirmation."""
        found = self.found
        if found is None or not found.changes:
            self.notify("nothing to apply", timeout=2)
            return
        names = ", ".join(c.name for c in found.changes)
        question = (f"Write the proposed changes to {names}?\n\nThe files are written "
                    "atomically, with a backup; CLAUDE.local.md is never edited.")

        def done(yes: bool | None) -> None:
            if not yes:
                self.notify("nothing written", timeout=2)
                return
            try:
                applied = drift.apply(self.state.db, found)
            except drift.Changed as exc:
                self.notify(f"not written: {exc}; scanning again", severity="warning")
            except (StoreError, OSError) as exc:
                self.notify(f"not written: {exc}", severity="error")
            else:
                backup = home_path(applied.backup) if applied.backup else "-"
                self.notify(f"wrote {', '.join(applied.written) or 'nothing'} "
                            f"(backup: {backup})", timeout=5)
            self.reload()

        self.app.push_screen(ConfirmScreen(question), done)

    def action_dismiss(self) -> None:
        """Mark the highlighted candidate's record as intentionally absent."""
        key = self._highlighted_key()
        project = self.state.project
        if not key or project is None or key.startswith(f"{DISMISSED}:"):
            return
        record, changed = drift.dismiss(self.state.db, project, key.split("#", 1)[0])
        self.notify(f"dismissed: {record.title}" if changed else "already dismissed", timeout=3)
        self.reload()

    def action_undismiss(self) -> None:
        """Flag the highlighted dismissed record again."""
        key = self._highlighted_key()
        project = self.state.project
        if not key or project is None or not key.startswith(f"{DISMISSED}:"):
            self.notify("highlight a dismissed record to flag it again", timeout=2)
            return
        record, _changed = drift.undismiss(self.state.db, project, key.split(":", 1)[1])
        self.notify(f"flagged again: {record.title}", timeout=3)
        self.reload()

    def store_changed(self) -> None:
        """A scan writes scores itself; the pane rescans only when asked (s, r, a switch)."""
