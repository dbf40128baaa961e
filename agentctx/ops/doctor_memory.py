"""``agentctx doctor``'s auto memory line: is Claude Code's own memory on for this project, how
much of it every session loads, and how that compares with agentctx's SessionStart digest."""

from __future__ import annotations

from pathlib import Path

from agentctx.core import config, gitinfo
from agentctx.core.budget import estimate_tokens
from agentctx.drift import automemory
from agentctx.install import jsonfile
from agentctx.ops.doctor import OK, Check
from agentctx.store import Store, digests, memimports
from agentctx.store import projects as proj


def check_auto_memory(cwd: Path | None = None) -> Check:
    """Auto memory for the project of ``cwd``: on or off (and why), what ``MEMORY.md`` costs
    every session against the digest, and whether its files were imported."""
    root = gitinfo.identify(cwd or Path.cwd()).root
    state = automemory.state(root)
    folder = jsonfile.display(state.folder)
    head = automemory.index_head(state.folder)
    loaded, topics = len(head), len(automemory.topics(state.folder))
    if not state.enabled:
        return Check("auto memory", OK, f"off for this project ({state.why}); {folder} "
                     f"holds {topics} topic files")
    digest_tokens, imported = _store_side(root)
    detail = (f"on ({state.why}): MEMORY.md loads {estimate_tokens(head):,} tokens "
              f"every session, {topics} topic files in {folder}; agentctx's digest "
              + (f"{digest_tokens:,} tokens" if digest_tokens is not None else "not built yet"))
    fix = ""
    if topics or loaded:
        detail += f"; {imported} imported"
        if not imported:
            fix = "'agentctx import --claude-memory' brings them into search and the digest"
    return Check("auto memory", OK, detail, fix)


def _store_side(root: str) -> tuple[int | None, int]:
    """The project's stored digest size (tokens) and how many memories were imported; read
    only (a folder the store does not know is not added to it)."""
    if not config.db_path().exists():
        return None, 0
    try:
        with Store.open() as db:
            project = proj.of_folder(db, root)
            if project is None:
                return None, 0
            stored = digests.load(db, project.id)
            return (stored.tokens if stored else None), memimports.count(db, project.id)
    except Exception:  # a damaged or locked store has its own doctor line
        return None, 0
