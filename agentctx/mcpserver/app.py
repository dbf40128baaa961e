"""The seven tools on an mcp 2.x ``MCPServer``, and the stdio entry point of ``agentctx mcp``.

Threading: every tool is ``async def``, so it runs on the event-loop thread, which owns the one
store connection of the server (opened on first use; SQLite connections are never shared across
threads, and no transaction spans an ``await``). Plain ``def`` tools would run on worker threads
and need a connection per call; ``bench/bench_mcp.py`` measures both and the shared connection is
the faster. Slow work (loading the embedding model and the vectors) runs on its own thread with
its own connection (:mod:`agentctx.mcpserver.semantic`).

The project is resolved on every call: the client's roots (``roots/list``), else
``CLAUDE_PROJECT_DIR``, else the working folder. Nothing but JSON-RPC goes to stdout.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import traceback
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import unquote, urlparse

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.types import ToolAnnotations
from pydantic import Field

from agentctx import __version__
from agentctx.core import config, logfile
from agentctx.core.config import Config, ConfigError
from agentctx.drift import encoder_for
from agentctx.mcpserver import service
from agentctx.mcpserver.semantic import ModelLoader, Semantic, default_model_loader
from agentctx.store import projects
from agentctx.store.db import Store
from agentctx.store.errors import StoreError

ROOTS_TIMEOUT_S = 2.0

INSTRUCTIONS = (
    "agentctx holds this project's context: decisions, conventions, preferences, discoveries, "
    "bugfixes, handovers and its profile, each superseded rather than overwritten. Search with "
    "ctx_search (a compact index), then read what you need with ctx_get. Record lasting "
    "decisions with ctx_record; when one changes, ctx_supersede it."
)

log = logging.getLogger("agentctx.mcp")
LOG_NAME = "mcp.log"

RecordType = Literal["decision", "convention", "preference", "discovery", "bugfix", "handover",
                     "profile"]
NewRecordType = Literal["decision", "convention", "preference", "discovery", "bugfix",
                        "handover"]
Scope = Literal["project", "global"]

_READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
_WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)


class ServerState:
    """What one server keeps between calls: the store connection and the vector side."""

    def __init__(self, db_path: Path | None = None, *,
                 model_loader: ModelLoader | None = None) -> None:
        try:
            cfg = Config.load()
            busy = cfg.get_int("busy_timeout_ms")
        except ConfigError as exc:
            log.warning("config: %s; using defaults", exc)
            cfg, busy = Config({}), 3000
        self.db_path = db_path or config.db_path()
        self.busy_timeout_ms = busy
        self.search_backend = cfg.get_str("search")  # read once: the knobs apply at start
        self.semantic = Semantic(self.db_path, model_loader or default_model_loader(cfg),
                                 busy_timeout_ms=busy)
        self._db: Store | None = None

    def store(self) -> Store:
        """The server's connection, opened on first use by the event-loop thread."""
        if self._db is None:
            if self.db_path == config.db_path():
                config.ensure_home()
            self._db = Store.open(self.db_path, busy_timeout_ms=self.busy_timeout_ms)
        return self._db

    def close(self) -> None:
        """Close the connection (it reopens on the next call)."""
        if self._db is not None:
            self._db.close()
            self._db = None


def create_server(state: ServerState | None = None) -> MCPServer:
    """An ``MCPServer`` with the seven context tools, serving ``state`` (a new one by default)."""
    own = state or ServerState()

    @asynccontextmanager
    async def lifespan(_server: MCPServer) -> AsyncIterator[None]:
        try:
            yield
        finally:
            own.close()

    async def ctx_search(
        query: Annotated[str, Field(description="Words to look for")],
        type: RecordType | None = None,  # noqa: A002 - the tool's documented parameter name
        file: Annotated[str | None, Field(description="Only records linked to this file")] = None,
        scope: Scope | None = None,
        as_of: Annotated[str | None, Field(description="ISO date: what was in force then")] = None,
        limit: Annotated[int, Field(ge=1, le=service.SEARCH_MAX_LIMIT)] = 8,
        ctx: Context | None = None,
    ) -> str:
        with _errors():
            db = own.store()
            where = await _where(ctx, db)
            query_ = service.build_query(where, query, type_=type, file=file, scope=scope,
                                         as_of=as_of, limit=limit, backend=own.search_backend)
            vector = await own.semantic.vector_side(db, query_)
            return service.search(db, where, query_, vector)

    async def ctx_get(
        ids: Annotated[list[str], Field(min_length=1, max_length=service.GET_MAX_IDS)],
        ctx: Context | None = None,
    ) -> str:
        with _errors():
            db = own.store()
            return service.get(db, await _where(ctx, db), ids)

    async def ctx_record(
        type: NewRecordType,  # noqa: A002 - the tool's documented parameter name
        title: Annotated[str, Field(description="One line")],
        body: Annotated[str, Field(description="What holds and why")],
        supersedes: str | None = None,
        scope: Scope = "project",
        files: Annotated[list[str] | None, Field(description="Files it applies to")] = None,
        ctx: Context | None = None,
    ) -> str:
        with _errors():
            db = own.store()
            return service.record(db, await _where(ctx, db), type, title, body,
                                  supersedes=supersedes, scope=scope, files=files or ())

    async def ctx_supersede(old_id: str, new_body: str, rationale: str,
                            title: str | None = None, ctx: Context | None = None) -> str:
        with _errors():
            db = own.store()
            return service.supersede(db, await _where(ctx, db), old_id, new_body, rationale,
                                     title)

    async def ctx_project(ctx: Context | None = None) -> str:
        with _errors():
            db = own.store()
            return service.project_profile(db, await _where(ctx, db))

    async def ctx_related(file: str, ctx: Context | None = None) -> str:
        with _errors():
            db = own.store()
            return service.related(db, await _where(ctx, db), file)

    async def ctx_sync_claudemd(ctx: Context | None = None) -> str:
        with _errors():
            db = own.store()
            where = await _where(ctx, db)

            encoder = encoder_for(db, await own.semantic.model())
            return service.sync_claudemd(db, where, encoder)

    tools = [
        _tool(ctx_search, _READ, "Search this project's context records. Returns a compact "
              "index, one line per record; read full records with ctx_get."),
        _tool(ctx_get, _READ, "Full records by id or unique id prefix: body, provenance, "
              "supersession and file links."),
        _tool(ctx_record, _WRITE, "Record a lasting fact explicitly. supersedes: id of the "
              "record it replaces. scope global: a developer-wide preference."),
        _tool(ctx_supersede, _WRITE, "Replace an outdated record. The successor keeps its type "
              "and, unless given, its title; the old one stays as history."),
        _tool(ctx_project, _READ, "The project profile: name, stack, test/build/lint/run "
              "commands, entry points."),
        _tool(ctx_related, _READ, "Records linked to a file, then to its folders."),
        _tool(ctx_sync_claudemd, _READ, "Proposed CLAUDE.md changes where it drifted from the "
              "records."),
    ]
    return MCPServer("agentctx", instructions=INSTRUCTIONS, version=__version__,
                     log_level="WARNING", lifespan=lifespan, tools=tools)


def _tool(fn: Callable[..., Awaitable[str]], annotations: ToolAnnotations,
          description: str) -> Tool:
    """A tool whose advertised input schema is compacted (it costs context on every session)."""
    tool = Tool.from_function(fn, description=description, annotations=annotations,
                              structured_output=False)
    tool.parameters = compact_schema(tool.parameters)
    return tool


def compact_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A JSON schema without pydantic's ``title`` noise, optional values written plainly.

    ``{"anyOf": [X, {"type": "null"}], "default": null}`` becomes ``X`` (the property is simply
    not required). Arguments are still validated against the full signature.
    """
    compact = {key: value for key, value in schema.items() if key != "title"}
    properties = {}
    for name, prop in schema.get("properties", {}).items():
        prop = {key: value for key, value in prop.items() if key != "title"}
        branches = prop.get("anyOf")
        if isinstance(branches, list) and prop.get("default", 0) is None:
            kept = [b for b in branches if b != {"type": "null"}]
            if len(kept) == 1:
                prop = {**{k: v for k, v in prop.items() if k not in ("anyOf", "default")},
                        **kept[0]}
        properties[name] = prop
    if properties:
        compact["properties"] = properties
    return compact


async def _where(ctx: Context | None, db: Store) -> service.Where:
    """The project of this call: client roots, else ``CLAUDE_PROJECT_DIR``, else the cwd."""
    path = await _client_root(ctx) if ctx is not None else None
    path = path or os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd()
    resolved = projects.resolve(db, path)
    return service.Where(resolved.project, resolved.worktree)


async def _client_root(ctx: Context) -> str | None:
    """The first local folder among the client's roots, when it offers roots at all."""
    try:
        capabilities = ctx.client_capabilities
        if capabilities is None or capabilities.roots is None:
            return None
        with anyio.fail_after(ROOTS_TIMEOUT_S):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                pending = ctx.session.list_roots()
            result = await pending
    except Exception:  # no back-channel, an error answer or a timeout: fall back
        return None
    for root in result.roots:
        uri = urlparse(str(root.uri))
        if uri.scheme == "file":
            path = unquote(uri.path)
            if os.path.isdir(path):
                return path
    return None


@contextmanager
def _errors() -> Iterator[None]:
    """Turn every failure into a ``ToolError`` whose message the model can read."""
    try:
        yield
    except ToolError:
        raise
    except (StoreError, ConfigError) as exc:
        raise ToolError(str(exc)) from None
    except sqlite3.Error as exc:
        log.error("store error: %s\n%s", exc, traceback.format_exc())
        raise ToolError(f"the agentctx store could not be used: {exc}") from None
    except Exception as exc:
        log.error("unexpected error: %s\n%s", exc, traceback.format_exc())
        raise ToolError(f"internal error in agentctx: {exc} (details in the agentctx log, "
                        "logs/mcp.log)") from None


def run() -> None:
    """Serve over stdio until the client closes the connection (``agentctx mcp``)."""
    _log_to_file()
    state = ServerState()
    log.info("agentctx %s serving MCP over stdio (store %s, pid %d)", __version__, state.db_path,
             os.getpid())
    try:
        create_server(state).run()
    finally:
        state.close()
        log.info("stdio closed; exiting")


class _LogFile(logging.Handler):
    """``logging`` records (tracebacks included) go to ``<home>/logs/mcp.log`` through the one
    log writer, redacted like every other log."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            logfile.append(LOG_NAME, self.format(record))
        except Exception:
            self.handleError(record)


def _log_to_file() -> None:
    """Send the server's own log to ``<home>/logs/mcp.log`` (stdout is the JSON-RPC wire)."""
    handler = _LogFile()
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    package = logging.getLogger("agentctx")  # the server's, the embedding model's, the store's
    package.addHandler(handler)
    package.setLevel(logging.INFO)
    package.propagate = False
