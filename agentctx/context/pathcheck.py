"""Whether a record is still true of the code: the files and folders it names, and which are gone.

A record names paths in its text — ``harbor/billing/``, ``src/api/users.py``,
``harbor/db/queries/*.sql`` (its folder is what is checked) — and through its file links. A path
counts when it is clearly one: it ends with ``/``, its last part has an extension
(``users.py``), or it starts with ``./``; a bare ``a/b`` (``REST/JSON``, ``and/or``) counts only
when its first part exists in the project. URLs, absolute and home paths, ``$VARS`` and anything
with characters no project path has are not paths. Paths are checked relative to the project
folder (the worktree the session runs in) with one ``stat`` each.

A record is **possibly stale** when it names at least one path and every one of them is gone:
what Claude sees then says so after the title (``(harbor/billing/ no longer exists)``) and ranks
it down. ``agentctx verify`` lists these and resolves them (supersede, forget or keep: a kept
record is not flagged again while the same paths are gone). Standard library only: this module
is on the hook path, where a check is bounded to :data:`MAX_CHECKS` ``stat`` calls.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence

TYPE_CHECKING = False
if TYPE_CHECKING:
    from agentctx.store.db import Store
    from agentctx.store.models import Record

# Stats one injection may spend on checking paths (a stat costs a few microseconds).
MAX_CHECKS = 32
# Paths kept per record (a record listing a whole tree is checked by its first ones).
MAX_PATHS = 8
_EDGE = "`'\"()[]{}<>,;:!?*"
_PATH_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-/*")
_EXTENSION: list[re.Pattern[str]] = []  # compiled on first use: most hook calls read no path


def _has_letter(part: str) -> bool:
    return any(ch.isascii() and ch.isalpha() for ch in part)


def _has_extension(name: str) -> bool:
    if not _EXTENSION:
        _EXTENSION.append(re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,7}$"))
    return _EXTENSION[0].search(name) is not None


def _candidate(token: str) -> tuple[str, bool] | None:
    """``(path, strong)`` when ``token`` reads as a project path, else ``None``."""
    token = token.strip(_EDGE).rstrip(".")
    if "/" not in token or "://" in token or token.startswith(("/", "~", "$", "@", "-")):
        return None
    if not _PATH_CHARS.issuperset(token) or "//" in token:
        return None
    explicit = token.startswith("./")
    if explicit:
        token = token[2:]
    parts = [part for part in token.split("/") if part]
    kept: list[str] = []
    for part in parts:
        if "*" in part:
            break  # a glob: its folder is what must exist
        if part in (".", "..") or not _has_letter(part):
            return None
        kept.append(part)
    if not kept:
        return None
    folder = token.endswith("/") or len(kept) < len(parts)
    path = "/".join(kept) + ("/" if folder else "")
    strong = explicit or folder or _has_extension(kept[-1])
    return path, strong


def named_paths(text: str, root: str | None = None, *, links: Iterable[str] = ()) -> list[str]:
    """The project paths ``text`` names (and ``links``, file names relative to the project), in
    order, at most :data:`MAX_PATHS`. A bare ``a/b`` counts when ``root`` is given and holds
    ``a``."""
    found: dict[str, None] = {}
    for link in links:
        if link and not os.path.isabs(link) and not link.startswith(".."):
            found.setdefault(link, None)
    for token in text.split():
        if "/" not in token:
            continue
        seen = _candidate(token)
        if seen is None:
            continue
        path, strong = seen
        if not strong:
            top = path.split("/", 1)[0]
            if root is None or not _exists(os.path.join(root, top)):
                continue
        found.setdefault(path, None)
        if len(found) >= MAX_PATHS:
            break
    return list(found)


def _exists(path: str) -> bool:
    try:
        os.stat(path)
    except (OSError, ValueError):
        return False
    return True


def gone(root: str, paths: Sequence[str]) -> list[str]:
    """The paths of ``paths`` that do not exist under ``root`` (one ``stat`` each)."""
    missing = []
    for path in paths:
        target = os.path.join(root, path.rstrip("/"))
        if path.endswith("/"):
            if not os.path.isdir(target):
                missing.append(path)
        elif not _exists(target):
            missing.append(path)
    return missing


def all_gone(root: str, paths: Sequence[str], kept: Sequence[str] | None = None) -> list[str]:
    """``paths`` when every one of them is gone under ``root`` (and they are not what
    ``agentctx verify`` was told to keep), else ``[]``."""
    if not paths:
        return []
    missing = gone(root, paths)
    if len(missing) != len(paths) or (kept is not None and sorted(kept) == sorted(missing)):
        return []
    return missing


def check_many(root: str, named: dict[str, list[str]], kept: dict[str, list[str]] | None = None,
               *, budget: int = MAX_CHECKS) -> dict[str, list[str]]:
    """For each record id of ``named`` (in order), its paths when all are gone: the records
    whose paths are not checked within ``budget`` stats are taken as fine."""
    result: dict[str, list[str]] = {}
    for record_id, paths in named.items():
        if not paths:
            continue
        if len(paths) > budget:
            break
        budget -= len(paths)
        missing = all_gone(root, paths, (kept or {}).get(record_id))
        if missing:
            result[record_id] = missing
    return result


def named(db: Store, root: str, records: Sequence[Record]) -> tuple[dict[str, list[str]],
                                                                    dict[str, list[str]]]:
    """The paths each record names (as consolidation stored them, file links included; else
    read from its text now) and what ``agentctx verify`` was told to keep, by record id."""
    from agentctx.store import pathstate  # late: a served digest checks its paths without it

    stored = pathstate.of_records(db, [r.id for r in records])
    paths: dict[str, list[str]] = {}
    kept: dict[str, list[str]] = {}
    for record in records:
        state = stored.get(record.id)
        if state is not None:
            paths[record.id] = list(state.paths)
            if state.kept is not None:
                kept[record.id] = list(state.kept)
        else:
            paths[record.id] = named_paths(f"{record.title} {record.body}", root)
    return paths, kept


def check(db: Store, root: str, records: Sequence[Record], *,
          budget: int = MAX_CHECKS) -> dict[str, list[str]]:
    """The records of ``records`` (in order) whose named paths are all gone under ``root``,
    with those paths; bounded by ``budget`` stats. The paths are read from each record's text;
    only for a record found stale are the stored ones (its file links too) and what ``agentctx
    verify`` was told to keep looked up, so a check that finds nothing reads nothing more."""
    named_now = {r.id: named_paths(f"{r.title} {r.body}", root) for r in records}
    found = check_many(root, named_now, budget=budget)
    if not found:
        return found
    paths, kept = named(db, root, [r for r in records if r.id in found])
    return check_many(root, paths, kept, budget=budget)
