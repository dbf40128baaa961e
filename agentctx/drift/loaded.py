"""Which current records the memory files Claude Code loads already state (measured offline).

The files are those Claude Code puts in every session of a project folder: ``CLAUDE.md``,
``.claude/CLAUDE.md``, ``.claude/rules/**/*.md``, ``CLAUDE.local.md`` and their imports
(:mod:`agentctx.drift.memfiles`); ``AGENTS.md`` when the folder has no ``CLAUDE.md`` (Claude Code
reads it instead); and the head of the project's auto memory index, ``MEMORY.md`` (its first 200
lines), while auto memory is on (:mod:`agentctx.drift.automemory`). They are measured against
the project's current decisions, conventions and discoveries with the drift scan's own coverage
(:func:`agentctx.drift.scanner.scan`: a record is stated where the scan finds it present), and
the outcome is stored with each file's size and mtime (:mod:`agentctx.store.memcoverage`) for the
hooks to check with a ``stat`` (:mod:`agentctx.context.already`).

Consolidation measures every project's root and its most recently used worktrees; ``agentctx
sync`` measures the folder it runs in. Nothing here writes a memory file.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

from agentctx.context.already import fingerprint
from agentctx.drift import automemory, memfiles, scanner
from agentctx.drift.coverage import Embedder
from agentctx.drift.memfiles import Memory, MemoryFile, Unit
from agentctx.store import memcoverage as store_stated
from agentctx.store import projects as proj
from agentctx.store import records as rec
from agentctx.store.db import Store
from agentctx.store.models import Project, Record
from agentctx.store.selection import Selection

TYPES = ("decision", "convention", "discovery")
# Worktrees of a project measured by consolidation besides its root, the most recently used.
WORKTREES_MAX = 3
CANDIDATES_MAX = 2000


class Measured(NamedTuple):
    """What one folder's memory files state."""

    folder: str
    files: list[list[object]]  # what was read, as the hooks check it
    stated: dict[str, tuple[str, str]]  # record id -> (file, fingerprint)
    names: tuple[str, ...]  # the files read, as they are named in notes


def _signature(path: Path) -> list[object]:
    try:
        found = path.stat()
    except OSError:
        return ["f", str(path), -1, 0]
    if path.is_dir():
        return ["f", str(path), -2, found.st_mtime_ns]
    return ["f", str(path), found.st_size, found.st_mtime_ns]


def loaded(root: Path, project_root: Path) -> tuple[Memory, list[list[object]]]:
    """The memory files Claude Code loads for the folder ``root`` (of the project whose main
    root is ``project_root``) as one :class:`Memory`, and their signatures."""
    root = root.resolve()
    files, missing = memfiles.discover(root)  # AGENTS.md stands in where there is no CLAUDE.md
    probes = [root / "CLAUDE.md", root / ".claude" / "CLAUDE.md", root / memfiles.LOCAL_FILE,
              root / memfiles.AGENTS_FILE, root / ".claude" / "rules"]
    signatures = [_signature(p) for p in probes]
    signatures += [_signature(f.path) for f in files if f.path not in probes]
    auto = automemory.state(project_root)
    index_name = automemory.INDEX_NAME  # these entries decide about MEMORY.md's statements only
    signatures.append(["e", automemory.DISABLE_ENV, os.environ.get(automemory.DISABLE_ENV, ""),
                       index_name])
    signatures += [[*_signature(p), index_name] for p in automemory.settings_files(project_root)]
    if auto.enabled:
        index = auto.folder / automemory.INDEX_NAME
        signatures.append([*_signature(index), index_name])
        head = automemory.index_head(auto.folder)
        if head.strip():
            files.append(MemoryFile(index, automemory.INDEX_NAME, head, False, None, 0))
    units: list[Unit] = []
    block = section = 0
    for memory_file in files:
        found, block, section = memfiles.parse(memory_file, len(units), block, section + 1)
        units.extend(found)
    return Memory(root, tuple(files), tuple(missing), tuple(units)), signatures


def candidates(db: Store, project: Project) -> list[Record]:
    """The project's current records a memory file may state."""
    return rec.list_records(db, Selection(project_id=project.id, types=TYPES),
                            limit=CANDIDATES_MAX)


def measure(db: Store, project: Project, folder: str | os.PathLike[str], *,
            encoder: Embedder | None = None) -> Measured:
    """Which of the project's current records the memory files of ``folder`` state."""
    root = Path(folder)
    memory, signatures = loaded(root, Path(project.root))
    stated: dict[str, tuple[str, str]] = {}
    if memory.units:
        checked = candidates(db, project)
        found = scanner.scan(db, project, root, encoder=encoder, memory=memory, checked=checked)
        by_id = {r.id: r for r in checked}
        for record_id in found.present:
            where = found.stated_in.get(record_id)
            if where is not None and record_id in by_id:
                stated[record_id] = (where, fingerprint(by_id[record_id]))
    return Measured(os.fspath(folder), signatures, stated,
                    tuple(f.name for f in memory.files))


def refresh(db: Store, project: Project, folder: str | os.PathLike[str], *,
            encoder: Embedder | None = None) -> Measured:
    """:func:`measure` ``folder`` and store it for the hooks."""
    measured = measure(db, project, folder, encoder=encoder)
    with db.write():
        store_stated.save(db, project.id, measured.folder, measured.files, measured.stated)
    return measured


def folders_of(db: Store, project: Project) -> list[str]:
    """The project's root and its most recently used other worktrees that exist."""
    found = [project.root]
    for worktree in proj.worktrees(db, project.id, limit=WORKTREES_MAX + 1):
        if worktree not in found and os.path.isdir(worktree):
            found.append(worktree)
    return found[:WORKTREES_MAX + 1]
