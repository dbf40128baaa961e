"""CLAUDE.md drift: where Claude Code's memory files no longer say what the store knows (ADR-013).

The one API every surface calls — ``agentctx sync``, the MCP tool ``ctx_sync_claudemd``,
consolidation, the TUI's drift pane::

    from agentctx import drift

    found = drift.proposal(db, project, cwd)        # scan (stores the scores) + proposed diff
    found.candidates                                # Proposed(candidate, file, line, edited, note)
    found.diff                                      # one unified diff, "" when nothing to change
    drift.as_json(found)                            # {"candidates": [...], "diff": "..."}
    applied = drift.apply(db, found)                # writes after the caller's confirmation
    drift.dismiss(db, project, record_id)           # stop flagging a record; undismiss undoes it

Reading never writes a memory file; :func:`apply` writes exactly what the diff shows, atomically,
with a backup under ``<home>/backups/sync/``. A scan (:func:`proposal` with ``record=True``,
:func:`scan_project`), a dismissal and an apply store the drift scores and mark the project's
SessionStart digest stale, so its drift note follows.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from agentctx.core import config
from agentctx.drift import writer
from agentctx.drift.coverage import DEFAULT, Embedder, Params
from agentctx.drift.propose import FileChange, Proposal, Proposed, propose
from agentctx.drift.scanner import CLASSES, CONTRADICTED, MISSING, STALE, Candidate, Scan, scan
from agentctx.drift.scanner import record as record_scan
from agentctx.drift.writer import Changed
from agentctx.ml.embedder import load_model, model_name
from agentctx.store import digests, vectors
from agentctx.store import drift_state as store_drift
from agentctx.store import projects as proj
from agentctx.store.db import Store
from agentctx.store.models import Project, Record

__all__ = [
    "CLASSES",
    "CONTRADICTED",
    "DEFAULT",
    "MISSING",
    "STALE",
    "Applied",
    "Candidate",
    "Changed",
    "Embedder",
    "FileChange",
    "Params",
    "Proposal",
    "Proposed",
    "Scan",
    "apply",
    "as_json",
    "default_encoder",
    "describe",
    "dismiss",
    "encoder_for",
    "project_folder",
    "proposal",
    "propose",
    "record_ids",
    "scan",
    "scan_project",
    "undismiss",
]


class Applied(NamedTuple):
    """What :func:`apply` wrote, where the backup is, and the scan made afterwards."""

    written: tuple[str, ...]
    created: tuple[str, ...]
    backup: Path | None
    scan: Scan


def project_folder(db: Store, project: Project, cwd: str | os.PathLike[str]) -> Path:
    """The folder whose memory files belong to ``project`` as seen from ``cwd``: the worktree
    of ``cwd`` when it is in the project, else the project's root. A folder the store does not
    know as the project's is not resolved (that would create a project for it)."""
    known = proj.of_folder(db, os.fspath(cwd))
    if known is None or known.id != project.id:
        return Path(project.root)
    resolved = proj.resolve(db, os.fspath(cwd))
    if resolved.project.id == project.id:
        return Path(resolved.worktree)
    return Path(project.root)


class _Model(Protocol):
    @property
    def name(self) -> str: ...

    def encode(self, texts: list[str]) -> Any: ...


def encoder_for(db: Store, model: _Model | None) -> Embedder | None:
    """``model`` for the scan when the store holds vectors made with it ("when embeddings
    exist"), else ``None``: every surface decides the same way, so they propose the same."""
    if model is None:
        return None

    if not any(row[0] == model.name for row in vectors.models(db)):
        return None
    return Embedder(model.name, model.encode)


def default_encoder(db: Store, cfg: config.Config | None = None) -> Embedder | None:
    """The configured embedding model when embeddings are on, the model is on disk
    and the store holds vectors made with it; else ``None`` (the scan is keyword-only)."""
    try:
        cfg = cfg or config.Config.load()
        if not cfg.get_bool("embeddings"):
            return None
        name = model_name(cfg)
    except config.ConfigError:
        return None

    if not any(row[0] == name for row in vectors.models(db)):
        return None  # checked first: loading the model costs time
    model = load_model(cfg, allow_download=False)
    return encoder_for(db, model)


def scan_project(db: Store, project: Project, root: Path, *, encoder: Embedder | None = None,
                 params: Params = DEFAULT, record: bool = True) -> Scan:
    """Scan ``root``'s memory files against ``project``; store the scores unless told not to."""
    result = scan(db, project, root, encoder=encoder, params=params)
    if record:
        record_scan(db, result)
    return result


def proposal(db: Store, project: Project, cwd: str | os.PathLike[str], *,
             encoder: Embedder | None = None, record: bool = True,
             params: Params = DEFAULT) -> Proposal:
    """Scan the memory files of ``cwd``'s folder (see :func:`project_folder`) and propose the
    changes; ``record=False`` stores nothing (the MCP tool)."""
    root = project_folder(db, project, cwd)
    return propose(scan_project(db, project, root, encoder=encoder, params=params,
                                record=record))


def apply(db: Store, found: Proposal, *, encoder: Embedder | None = None) -> Applied:
    """Write ``found``'s changes (the caller has the user's confirmation), then rescan and store
    the scores. Raises :class:`Changed` when a file was edited since ``found`` was made (nothing
    is written then)."""
    before = found.scan
    if not found.changes:
        return Applied((), (), None, before)
    backup = writer.backup_folder(config.ensure_home(), before.project.id)
    written = writer.write(found.changes, backup)
    after = scan_project(db, before.project, before.root, encoder=encoder)
    return Applied(written.written, written.created, written.backup, after)


def dismiss(db: Store, project: Project, ref: str) -> tuple[Record, bool]:
    """Mark a record as intentionally absent from CLAUDE.md; returns it and whether it changed."""
    with db.write():
        found, changed = store_drift.dismiss(db, project.id, ref)
        digests.mark_stale(db, project.id)
    return found, changed


def undismiss(db: Store, project: Project, ref: str) -> tuple[Record, bool]:
    """Flag a dismissed record again (from the next scan); returns it and whether it changed."""
    with db.write():
        found, changed = store_drift.undismiss(db, project.id, ref)
        digests.mark_stale(db, project.id)
    return found, changed


def as_json(found: Proposal, shorts: Mapping[str, str] | None = None) -> dict[str, Any]:
    """``{"candidates": [{"id", "class", "score", "file", "line", "stated", …}], "diff": "…"}``.

    ``id`` is the record in force (for a stale candidate its replacement; a retired record
    itself), ``stated`` the id of the superseded record whose text the file states (contradicted
    and stale candidates; ``None`` for missing ones): ``--dismiss`` it to stop a stale flag.
    ``file``/``line`` say where the text is (a missing record: where the proposal adds it).
    """
    items = []
    for p in found.candidates:
        c = p.candidate
        in_force = c.replacement if c.kind == STALE and c.replacement is not None else c.record
        item: dict[str, Any] = {"id": in_force.id, "class": c.kind, "score": c.score,
                                "file": p.file, "line": p.line, "title": in_force.title,
                                "edited": p.edited, "stated": c.stated}
        if c.old is not None:
            item["states_instead"] = c.old.id
        if c.kind == STALE:
            item["replaced_by"] = c.replacement.id if c.replacement else None
            item["stated_title"] = c.record.title
        elif c.old is not None:
            item["stated_title"] = c.old.title
        if p.note:
            item["note"] = p.note
        if shorts:
            item["short_id"] = shorts.get(in_force.id, in_force.id)
        items.append(item)
    scanned = found.scan
    return {"candidates": items, "diff": found.diff,
            "files": [f.name for f in scanned.memory.files],
            "missing_imports": [f"{m.importer}:{m.line}: @{m.target}"
                                for m in scanned.memory.missing],
            "checked": len(scanned.checked), "target": found.target,
            "problems": list(found.problems), "vectors": scanned.vectors}


def record_ids(found: Proposal) -> list[str]:
    """Every record a proposal's candidates name (for short ids): each candidate's record and
    the replacement of a stale one."""
    return list(dict.fromkeys(i for p in found.candidates for i in (
        p.candidate.id, *([p.candidate.replacement.id] if p.candidate.replacement else []))))


def describe(found: Proposal, shorts: Mapping[str, str] | None = None) -> list[str]:
    """One line per candidate: class, id, score, title and where."""
    lines = []
    for p in found.candidates:
        c = p.candidate
        rid = (shorts or {}).get(c.id, c.id)
        where = f"{p.file}:{p.line}" if p.file and p.line else (p.file or "")
        if c.kind == MISSING:
            detail = f"→ add to {where}" if p.edited else p.note
        elif c.kind == CONTRADICTED:
            assert c.old is not None
            detail = f"{where} still says: {c.old.title}"
        else:
            now = c.replacement.title if c.replacement else "nothing (retired)"
            detail = f"{where} still says it; now: {now}"
        if p.note and c.kind != MISSING:
            detail += f" ({p.note})"
        lines.append(f"{c.kind:<12}  {rid}  {c.score:.2f}  {c.record.title}  {detail}".rstrip())
    return lines
