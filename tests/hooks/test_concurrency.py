"""Many hooks at once, with consolidation and MCP writes, on one store: no write is lost.

Each worker thread plays one Claude Code session and runs its hooks one after another as real
processes (so as many hooks run at once as there are workers): session start, a prompt, a file
written, a failing command, a test run and a compaction, round after round, then the session's
end (whose detached child extracts nothing, llm being off, and consolidates). Meanwhile a
consolidation loop embeds (the tiny model) and rebuilds digests, and the real MCP server records
and supersedes records. Afterwards every write of every hook is in the store, the supersession
chains are whole, and SQLite's and FTS5's integrity checks pass.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client, types

from agentctx.store import Store, graph, projects, records, sessions
from tests.hooks.conftest import at, payloads, read_log, run_hook
from tests.support import tiny_model

SIZES = [pytest.param(4, 4, 12, id="4-workers"),
         pytest.param(8, 6, 24, id="8-workers", marks=[pytest.mark.slow, pytest.mark.ci]),
         pytest.param(16, 34, 120, id="16-workers-x-200-hooks",
                      marks=[pytest.mark.slow, pytest.mark.timeout(3600)])]
HOOKS_PER_ROUND = 6


def _env(home: Path, model: Path) -> dict[str, str]:
    return {"AGENTCTX_HOOK_BUSY_TIMEOUT_MS": "30000", "AGENTCTX_BUSY_TIMEOUT_MS": "120000",
            "AGENTCTX_RECENT_PROMPTS": "200", "AGENTCTX_LLM": "off",
            "AGENTCTX_RESUME_DEDUP_SECONDS": "0", "AGENTCTX_EMBED_MODEL": str(model),
            "AGENTCTX_HOME": str(home)}


def _session(app: Path, worker: int, rounds: int, env: dict[str, str]) -> int:
    """One session's hooks, in order; returns how many hook processes ran."""
    session = f"worker-{worker:02d}"

    def hook(event: str, name: str, index: int = 0, **changes: Any) -> None:
        run_hook(event, at(payloads(name)[index], app, session_id=session, **changes),
                 env=env, cwd=app, launcher=True, timeout=300)

    for n in range(rounds):
        hook("session-start", "SessionStart")
        hook("prompt", "UserPromptSubmit", prompt=f"worker {worker} round {n}: what about grpc?")
        hook("post-tool", "PostToolUse", tool_input={"file_path": f"src/w{worker}_{n}.py",
                                                     "content": "x = 1\n"})
        hook("post-tool", "PostToolUseFailure", 0, tool_input={
            "command": f"tool-w{worker}-r{n} --check", "description": "run"},
            error=f"Exit code 1\nerror: worker {worker} round {n} broke")
        hook("post-tool", "PostToolUse", 1, tool_input={"command": f"pytest tests/test_w{worker}"
                                                                   f"_{n}.py"},
             tool_response={"stdout": "1 passed in 0.01s", "stderr": ""})
        hook("pre-compact", "PreCompact")
    hook("session-end", "SessionEnd")
    return rounds * HOOKS_PER_ROUND + 1


def _consolidate_until(done: threading.Event, app: Path, env: dict[str, str],
                       codes: list[int]) -> None:
    import os

    while not done.is_set():
        finished = subprocess.run([sys.executable, "-P", "-m", "agentctx", "consolidate",
                                   "--quiet"], cwd=app, env={**os.environ, **env},
                                  capture_output=True, text=True, timeout=600, check=False)
        codes.append(finished.returncode)
        assert finished.returncode == 0, finished.stderr


async def _mcp_writes(app: Path, env: dict[str, str], count: int, made: list[str]) -> None:
    import os

    params = StdioServerParameters(command=sys.executable, args=["-P", "-m", "agentctx", "mcp"],
                                   env={**env, "PATH": os.environ["PATH"],
                                        "CLAUDE_PROJECT_DIR": str(app)}, cwd=str(app))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        for n in range(count):
            result = await session.call_tool("ctx_record", arguments={
                "type": "decision", "title": f"MCP decision {n} about the storage schema",
                "body": f"Recorded while the hooks ran ({n}).", "files": [f"src/mcp_{n}.py"]})
            block = result.content[0]
            assert isinstance(block, types.TextContent) and not result.is_error, block
            record_id = block.text.split()[1]
            if n % 3 == 0:
                result = await session.call_tool("ctx_supersede", arguments={
                    "old_id": record_id, "new_body": f"Changed while the hooks ran ({n}).",
                    "rationale": "the schema moved"})
                block = result.content[0]
                assert isinstance(block, types.TextContent) and not result.is_error, block
                record_id = block.text.split("Current now: ")[1].split()[0]
            made.append(record_id)


def _wait_for_children(home: Path, sessions_ended: int, timeout: float = 600) -> None:
    log = home / "logs" / "finish-session.log"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = log.read_text(encoding="utf-8") if log.exists() else ""
        ends = (": agentctx consolidate done", ": agentctx consolidate exited",
                ": agentctx consolidate did not finish", ": already running")
        if sum(1 for line in text.splitlines() if any(e in line for e in ends)) >= \
                sessions_ended:
            return
        time.sleep(0.5)
    raise AssertionError(f"the finishing children did not end:\n{log.read_text()}")


@pytest.mark.parametrize(("workers", "rounds", "mcp_records"), SIZES)
def test_parallel_hooks_consolidation_and_mcp_writes_lose_nothing(
        workers: int, rounds: int, mcp_records: int, app: Path, isolated_home: Path,
        tmp_path: Path) -> None:
    model = tiny_model.build(tmp_path / "tiny")
    env = _env(isolated_home, model)
    with Store.open() as db:
        pid = projects.resolve(db, str(app)).project.id
    done = threading.Event()
    codes: list[int] = []
    made: list[str] = []
    with ThreadPoolExecutor(max_workers=workers + 2) as pool:
        consolidation = pool.submit(_consolidate_until, done, app, env, codes)
        mcp = pool.submit(anyio.run, _mcp_writes, app, env, mcp_records, made)
        hooks = [pool.submit(_session, app, w, rounds, env) for w in range(workers)]
        ran = sum(future.result() for future in hooks)
        mcp.result()
        done.set()
        consolidation.result()
    _wait_for_children(isolated_home, workers)
    assert ran == workers * (rounds * HOOKS_PER_ROUND + 1)
    print(f"concurrency: {ran} hook processes in {workers} sessions, {len(codes)} "
          f"consolidation runs, {len(made)} MCP records")
    assert codes and set(codes) == {0}
    assert read_log(isolated_home) == []  # no hook skipped a locked store or failed

    with Store.open() as db:
        assert db.scalar("PRAGMA integrity_check") == "ok"
        db.execute("INSERT INTO records_fts(records_fts, rank) VALUES ('integrity-check', 1)")
        for w in range(workers):
            session_id = f"worker-{w:02d}"
            session = sessions.get(db, session_id)
            assert session is not None and session.ended_at is not None
            kept, tests = session.meta["prompts"], session.meta["tests"]
            assert isinstance(kept, list) and isinstance(tests, list)
            prompts = [p["text"] for p in kept]
            assert prompts == [f"worker {w} round {n}: what about grpc?" for n in range(rounds)]
            assert len(tests) == rounds
            assert sorted(graph.files_touched(db, session_id)) == sorted(
                f"src/w{w}_{n}.py" for n in range(rounds))
            stubs = records.list_records(db, project_id=pid, types=("bugfix",),
                                         session_id=session_id)
            assert sorted(r.title.split(" failed")[0] for r in stubs) == sorted(
                f"tool-w{w}-r{n}" for n in range(rounds))
            starts = [r for r in sessions.receipts(db, session_id) if r.event == "SessionStart"]
            assert len(starts) == rounds
        # Every compaction left a handover; they form one chain with one current record.
        handovers = records.list_records(db, project_id=pid, types=("handover",),
                                         include_superseded=True)
        assert len(handovers) == workers * rounds
        assert sum(1 for h in handovers if h.current) == 1
        # Every MCP write is there, and every supersession is whole.
        assert len(made) == mcp_records
        assert all(records.get(db, rid).current for rid in made)
        broken = db.scalar(
            "SELECT count(*) FROM records r WHERE r.superseded_by IS NOT NULL AND NOT EXISTS "
            "(SELECT 1 FROM edges e WHERE e.rel_type = 'supersedes' AND e.to_id = r.id "
            "AND e.from_id = r.superseded_by) ")
        assert broken == 0
        assert db.scalar("SELECT count(*) FROM records WHERE superseded_by IS NOT NULL AND "
                         "superseded_by NOT IN (SELECT id FROM records UNION "
                         "SELECT id FROM records_archive)") == 0
