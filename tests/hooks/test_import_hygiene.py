"""The hook path stays lean: proven on the real processes, by what they actually imported.

``python -X importtime`` makes the real ``agentctx hook <event>`` process list every module it
imports (the hook itself leaves through ``os._exit``, so ``sys.modules`` cannot be printed after
it). The heavy runtime dependencies must never appear; the start-up-expensive parts of the
standard library must not appear on the synchronous hot path either.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from agentctx.store import Store, projects, records
from agentctx.store.models import Draft
from tests.hooks.conftest import EVENT_OF, at, payloads

FORBIDDEN = ("typer", "click", "pydantic", "sqlite_utils", "numpy", "textual", "rich", "mcp",
             "anthropic", "httpx", "httpx2", "model2vec", "sqlite_vec", "tokenizers")
# Not forbidden by the design, but each costs milliseconds a synchronous hook does not have.
SLOW_STDLIB = ("typing", "pathlib", "logging", "dataclasses", "inspect", "subprocess",
               "contextlib", "tomllib", "email", "http", "asyncio", "threading")
HOOK_MODULES = ("dispatch", "event", "session_start", "prompt", "post_tool",
                "pre_compact", "stop", "session_end", "cwd_changed", "subagent_start")
_LINE = re.compile(r"^import time:\s+\d+ \|\s+\d+ \| (\s*)(\S+)$")


LAUNCHER = Path(sys.executable).with_name("agentctx")  # the console script Claude Code runs


def _imported(event: str, payload: dict[str, object]) -> set[str]:
    # Through the console script, as Claude Code runs it (``-m`` would add runpy's imports).
    entry = [str(LAUNCHER)] if LAUNCHER.exists() else ["-m", "agentctx"]
    done = subprocess.run([sys.executable, "-X", "importtime", *entry, "hook", event],
                          input=json.dumps(payload).encode(), capture_output=True, timeout=60,
                          env={**os.environ, "AGENTCTX_LLM": "off"}, check=False)
    assert done.returncode == 0
    modules = set()
    for line in done.stderr.decode().splitlines()[1:]:  # the first line is the table's header
        match = _LINE.match(line)
        assert match, f"unexpected stderr line from the hook: {line!r}"
        modules.add(match.group(2))
    assert "agentctx.hooks.dispatch" in modules
    return modules


def _top(modules: set[str]) -> set[str]:
    return {name.split(".")[0] for name in modules}


@pytest.fixture
def seeded(app: Path) -> Path:
    """A project with records and a stored digest (so no store upgrade runs in the hook)."""
    with Store.open() as db:
        pid = projects.resolve(db, str(app)).project.id
        records.add(db, Draft(type="decision", title="Use gRPC instead of REST for the internal "
                              "API"), project_id=pid)
    return app


@pytest.mark.parametrize("name", sorted(EVENT_OF))
def test_no_heavy_dependency_in_any_hook_process(name: str, seeded: Path) -> None:
    for payload in payloads(name):
        imported = _top(_imported(EVENT_OF[name], at(payload, seeded)))
        assert not imported & set(FORBIDDEN), sorted(imported & set(FORBIDDEN))


@pytest.mark.skipif(not LAUNCHER.exists(), reason="needs the installed agentctx console script")
@pytest.mark.parametrize("name", ["SessionStart", "UserPromptSubmit", "PostToolUse", "SessionEnd"])
def test_synchronous_hot_path_skips_slow_stdlib_modules(name: str, seeded: Path) -> None:
    start = at(payloads("SessionStart")[0], seeded)
    _imported("session-start", start)  # builds and stores the digest: the next start is fresh
    imported = _imported(EVENT_OF[name], at(payloads(name)[0], seeded))
    assert not _top(imported) & set(SLOW_STDLIB), sorted(_top(imported) & set(SLOW_STDLIB))


def test_importing_the_hook_package_and_digest_is_lean() -> None:
    code = ("import json, sys\n"
            + "".join(f"import agentctx.hooks.{m}\n" for m in HOOK_MODULES)
            + "import agentctx.context.digest\nimport agentctx.context.injection\n"
            + "import agentctx.context.judgement\n"
            + "print(json.dumps(sorted(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=True)
    loaded = _top(set(json.loads(done.stdout)))
    assert not loaded & set(FORBIDDEN), sorted(loaded & set(FORBIDDEN))
    assert "agentctx.core.background" not in json.loads(done.stdout)  # imported lazily
    assert not [m for m in json.loads(done.stdout)
                if m.startswith(("agentctx.drift", "agentctx.store.stems"))]


def test_session_start_reads_the_stored_drift_count_without_the_scan(seeded: Path) -> None:
    """A digest built inline reads the stored drift scores; no scan code is loaded."""
    with Store.open() as db:
        pid = projects.resolve(db, str(seeded)).project.id
        for title in ("Deploy with Helm", "Cache with Redis"):
            record = records.add(db, Draft(type="decision", title=title, confidence="explicit"),
                                 project_id=pid)
            db.execute("UPDATE records SET claudemd_drift_score = 0.9 WHERE id = ?", (record.id,))
    imported = _imported("session-start", at(payloads("SessionStart")[0], seeded))
    assert "agentctx.context.digest" in imported
    assert not [m for m in imported if m.startswith(("agentctx.drift", "agentctx.store.stems",
                                                     "agentctx.store.drift_state"))]


@pytest.mark.skipif(not LAUNCHER.exists(), reason="needs the installed agentctx console script")
def test_semantic_check_stays_in_the_standard_library(seeded: Path, isolated_home: Path) -> None:
    """A weak match makes the prompt hook embed the prompt from the query side file."""
    import struct

    import numpy as np

    from agentctx.store import querymodel, vectors

    with Store.open() as db:
        pid = projects.resolve(db, str(seeded)).project.id
        records.add(db, Draft(type="decision", title="Deploy with docker to staging"),
                    project_id=pid)
        records.add(db, Draft(type="convention", title="React components use css modules",
                              body="Tested in every supported browser."), project_id=pid)
        waiting = vectors.pending(db)
        vectors.save(db, "tiny", [(p, np.ones(3, dtype=np.float32)) for p in waiting])
        side = isolated_home / "models" / "query" / "tiny.db"
        querymodel.write(side, model="tiny", source="tiny", dim=3, unk=None, prefix="##",
                         max_chars=100, rows=[("docker", struct.pack("<3e", 1, 0, 0))])
        querymodel.register(db, "tiny", side)
    prompt = at(payloads("UserPromptSubmit")[0], seeded,
                prompt="docker react css browser")
    imported = _imported("prompt", prompt)
    assert "agentctx.store.querymodel" in imported
    heavy = _top(imported) & set(FORBIDDEN + SLOW_STDLIB)
    assert not heavy, sorted(heavy)
