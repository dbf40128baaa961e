"""MCP search speed: ``ctx_search`` in process against a bare FTS5 ``MATCH`` on the same store.

For stores of 10K and 100K records (``bench/synth.py``), every iteration times, interleaved in one
loop on the same queries:

* ``bare`` — the baseline: one FTS5 ``MATCH`` (the query's terms OR-ed, ``ORDER BY rank LIMIT
  10``, rowid and title) on a plain ``sqlite3`` connection to the same file;
* ``tool`` — ``ctx_search`` called in process through ``MCPServer.call_tool`` (argument validation,
  project resolution, the store's search through the hybrid fusion, short ids, access counters,
  the formatted index), keyword path (no embedding model);
* ``client`` — the same through the in-memory ``mcp.Client`` (a full MCP request, no stdio);
* ``per-call`` — a variant server whose plain ``def`` tool runs on a worker thread and opens the
  store per call (the alternative to ``async def`` tools on one connection);
* ``stdio`` — the real ``agentctx mcp`` process over stdio after ``initialize``, with a client that
  answers ``roots/list`` as Claude Code does (one more round trip per call);
* ``hybrid`` — ``ctx_search`` with the real model (``shared/models/minilm-static-256``) and every
  record embedded, vectors held in memory by the server;
* ``hybrid-nearest`` — the fusion fed by ``agentctx.store.vectors.nearest`` instead of the
  server's in-memory index (for comparison).

It prints the median of each (ms), its ratio to ``bare``, and checks the target: ``tool`` ≤ 3×
``bare`` at 10K and 100K. The hybrid rows are reported beside it (absolute and ratio).

Usage: ``.venv/bin/python bench/bench_mcp.py [--sizes 10000,100000] [--runs 200]``
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from pydantic import FileUrl

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agentctx.store.selection import Selection
from bench.synth import build_store, project_folder

MODEL_DIR = Path(__file__).resolve().parent.parent.parent / "shared" / "models" / \
    "minilm-static-256"
QUERIES = [
    "billing gRPC migration",
    "redis job queue restart",
    "database is locked scheduler",
    "logging convention notification worker",
    "payments webhook retry",
    "auth api tests pytest",
    "why did we move the cache layer to Kubernetes",
    "feature flags settings at start-up",
]
TARGET = 3.0


def bare_query(text: str) -> str:
    """The baseline's MATCH expression: the query's terms OR-ed, as a hand-written FTS5 query."""
    from agentctx.store.textproc import fts_phrase, query_terms

    return "{title body} : (" + " OR ".join(fts_phrase(t) for t in query_terms(text)) + ")"


def text_of(result: Any) -> str:
    block = result.content[0]
    return str(block.text)


async def timed(fn: Callable[..., Awaitable[Any]], *args: Any) -> float:
    """Milliseconds one awaited call takes."""
    started = time.perf_counter()
    await fn(*args)
    return (time.perf_counter() - started) * 1000


def timed_sync(fn: Callable[..., Any], *args: Any) -> float:
    """Milliseconds one plain call takes."""
    started = time.perf_counter()
    fn(*args)
    return (time.perf_counter() - started) * 1000


def run_bare(conn: sqlite3.Connection, match: str) -> list[Any]:
    """The baseline query."""
    return conn.execute("SELECT rowid, title FROM records_fts WHERE records_fts MATCH ? "
                        "ORDER BY rank LIMIT 10", (match,)).fetchall()


def per_call_server(db_path: Path) -> Any:
    """A server whose ``ctx_search`` is a plain ``def`` (worker thread, a store per call)."""
    from mcp.server.mcpserver import MCPServer

    from agentctx.mcpserver import service
    from agentctx.store import Store, projects

    server = MCPServer("per-call", log_level="WARNING")

    @server.tool(structured_output=False)
    def ctx_search(query: str, limit: int = 8) -> str:
        with Store.open(db_path) as db:
            resolved = projects.resolve(db, os.environ["CLAUDE_PROJECT_DIR"])
            where = service.Where(resolved.project, resolved.worktree)
            return service.search(db, where, service.build_query(where, query, limit=limit))

    return server


def embed_everything(db_path: Path) -> tuple[str, float]:
    """Embed every current record with the real model (the consolidation API); (model, seconds)."""
    from agentctx.core.config import Config
    from agentctx.ml.embedder import embedding_text, load_model
    from agentctx.store import Store, vectors

    model = load_model(Config.load())
    if model is None:
        raise RuntimeError("the embedding model did not load")
    started = time.perf_counter()
    with Store.open(db_path) as db:
        while True:
            batch = vectors.pending(db, limit=5000)
            if not batch:
                break
            texts = [embedding_text(p.type, p.valid_from, p.project, p.title, p.body)
                     for p in batch]
            vectors.save(db, model.name, list(zip(batch, model.encode(texts), strict=True)))
    return model.name, time.perf_counter() - started


async def bench_size(size: int, runs: int, workdir: Path, hybrid: bool) -> dict[str, Any]:
    from mcp import Client, ClientSession, StdioServerParameters, stdio_client, types

    from agentctx.mcpserver import semantic
    from agentctx.mcpserver.app import ServerState, create_server
    from agentctx.store import Store

    home = workdir / f"home-{size}"
    os.environ["AGENTCTX_HOME"] = str(home)
    db_path = home / "agentctx.db"
    started = time.perf_counter()
    project_id = build_store(db_path, size, seed=size)
    built = time.perf_counter() - started
    os.environ["CLAUDE_PROJECT_DIR"] = str(project_folder(db_path))
    bare = sqlite3.connect(db_path)

    keyword = create_server(ServerState(db_path, model_loader=lambda: None))
    threaded = per_call_server(db_path)
    times: dict[str, list[float]] = {"bare": [], "tool": [], "client": [], "per-call": []}
    info: dict[str, Any] = {"built_s": built, "project": project_id}
    folder = project_folder(db_path)

    async def roots(context: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=FileUrl(folder.as_uri()),
                                                       name="app")])

    child = StdioServerParameters(command=sys.executable, args=["-m", "agentctx", "mcp"],
                                  env={"AGENTCTX_HOME": str(home), "AGENTCTX_EMBEDDINGS": "off"},
                                  cwd=str(folder))
    times["stdio"] = []
    async with Client(keyword) as client, Client(threaded) as threaded_client, \
            stdio_client(child) as (read, write), \
            ClientSession(read, write, list_roots_callback=roots) as session:
        await session.initialize()
        for index in range(runs + 10):  # the first 10 warm caches up and are not counted
            text = QUERIES[index % len(QUERIES)]
            arguments = {"query": text}
            match = bare_query(text)
            sample = {
                "bare": timed_sync(run_bare, bare, match),
                "tool": await timed(keyword.call_tool, "ctx_search", arguments),
                "client": await timed(client.call_tool, "ctx_search", arguments),
                "per-call": await timed(threaded_client.call_tool, "ctx_search", arguments),
                "stdio": await timed(session.call_tool, "ctx_search", arguments),
            }
            if index >= 10:
                for name, value in sample.items():
                    times[name].append(value)
        result = await keyword.call_tool("ctx_search", {"query": QUERIES[0]})
        info["sample"] = text_of(result).splitlines()[:3]

    if hybrid:
        os.environ["AGENTCTX_EMBED_MODEL"] = str(MODEL_DIR)
        model_name, embed_s = embed_everything(db_path)
        info["embed_s"] = embed_s
        state = ServerState(db_path)
        server = create_server(state)
        started = time.perf_counter()
        await server.call_tool("ctx_search", {"query": "warm up"})
        info["first_call_s"] = time.perf_counter() - started
        while "vectors in memory" not in state.semantic.status:
            await anyio.sleep(0.05)
        info["index_load_s"] = time.perf_counter() - started
        info["status"] = state.semantic.status
        times["hybrid"], times["hybrid-nearest"], times["bare-h"] = [], [], []
        from agentctx.store.hybrid import StoredVectors, hybrid_search
        from agentctx.store.search import Query

        nearest_db = Store.open(db_path)
        model = semantic.default_model_loader()()
        assert model is not None
        for index in range(runs + 5):
            text = QUERIES[index % len(QUERIES)]
            match = bare_query(text)

            async def via_store_vectors(text: str = text) -> None:
                query = Query(text, Selection(project_id=project_id, include_global=True), limit=8)
                hybrid_search(nearest_db, query, StoredVectors(
                    nearest_db, lambda words: (model.encode([words])[0], ""), model_name))

            sample = {
                "bare-h": timed_sync(run_bare, bare, match),
                "hybrid": await timed(server.call_tool, "ctx_search", {"query": text}),
            }
            if index % 4 == 0:  # the numpy scan is slow at 100K: sample it less often
                sample["hybrid-nearest"] = await timed(via_store_vectors)
            if index >= 5:
                for name, value in sample.items():
                    times[name].append(value)
        result = await server.call_tool("ctx_search", {"query": QUERIES[6]})
        info["hybrid_sample"] = text_of(result).splitlines()[:3]
        nearest_db.close()
        state.close()
        del os.environ["AGENTCTX_EMBED_MODEL"]
    bare.close()
    info["times"] = times
    return info


def main() -> None:
    """Run the benchmark and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--no-hybrid", action="store_true", help="Skip the embedding model.")
    args = parser.parse_args()
    hybrid = not args.no_hybrid
    if hybrid:
        try:
            import agentctx.ml.embedder  # noqa: F401
        except ImportError:
            print("agentctx.ml.embedder is missing: reporting the keyword path only")
            hybrid = False
        if not MODEL_DIR.is_dir():
            print(f"{MODEL_DIR} is missing: reporting the keyword path only")
            hybrid = False
    sizes = [int(s) for s in args.sizes.split(",")]
    failures = []
    with tempfile.TemporaryDirectory(prefix="agentctx-bench-mcp-") as tmp:
        for size in sizes:
            info = anyio.run(bench_size, size, args.runs, Path(tmp), hybrid)
            medians = {name: statistics.median(values) for name, values in info["times"].items()
                       if values}
            print(f"\n{size:,} records (store built in {info['built_s']:.1f} s), "
                  f"{args.runs} interleaved runs over {len(QUERIES)} queries")
            print(f"  {'path':<16}{'p50 ms':>10}{'ratio':>8}")
            for name in ("bare", "tool", "client", "per-call", "stdio"):
                print(f"  {name:<16}{medians[name]:>10.3f}{medians[name] / medians['bare']:>7.2f}x")
            if "hybrid" in medians:
                base = medians["bare-h"]
                for name in ("bare-h", "hybrid", "hybrid-nearest"):
                    print(f"  {name:<16}{medians[name]:>10.3f}{medians[name] / base:>7.2f}x"
                          + ("   (vs bare in the same loop)" if name == "hybrid" else ""))
                print(f"  embedding {size:,} records took {info['embed_s']:.1f} s; first hybrid "
                      f"call {info['first_call_s']:.2f} s; vectors ready after "
                      f"{info['index_load_s']:.2f} s ({info['status']})")
            ratio = medians["tool"] / medians["bare"]
            print(f"  tool/bare = {ratio:.2f}x (target <= {TARGET:g}x)")
            print("  sample: " + " | ".join(info["sample"]))
            if "hybrid_sample" in info:
                print("  hybrid sample: " + " | ".join(info["hybrid_sample"]))
            if ratio > TARGET:
                failures.append(f"{size:,}: {ratio:.2f}x")
    print("\nresult: " + ("target met at every size" if not failures
                          else "MISSED: " + "; ".join(failures)))


if __name__ == "__main__":
    main()
