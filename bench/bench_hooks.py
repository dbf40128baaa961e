"""Hook speed: whole-process wall time of ``agentctx hook …`` against a bare Python start.

For stores of 1K, 10K and 100K records (``bench/synth.py``), each iteration runs, interleaved in
one loop with the same interpreter and environment:

* ``baseline`` — ``python -c "import sqlite3, json"`` (fed the same stdin);
* ``prompt`` — ``agentctx hook prompt`` with a realistic prompt, a new session each time, keyword
  relevance only (``prompt_semantic_check`` off);
* ``prompt-sem`` — the same with the semantic check on and the prompt's nearest records by
  meaning among the candidates: every record embedded with the real small model (``--model``),
  the model's query side file registered and the vector lists built, as consolidation leaves
  them (the vector side this interpreter picks: the standard-library lists unless sqlite-vec
  loads);
* ``post-tool`` — ``agentctx hook post-tool``, alternating a Write and a passing pytest run;
* ``start-fresh`` — ``agentctx hook session-start`` served from the pre-computed digest;
* ``start-inline`` — the same after a record change, so the digest is built inline;
* ``session-end`` — ``agentctx hook session-end``, in a second loop with the baseline: its
  detached finishing child (consolidation; ``llm`` and ``embeddings`` are off in the benchmark
  home) is waited for after each timed run, so no child competes with the next measurement.

It prints the median and the 90th percentile of each, its ratio to the baseline's median and
the targets: prompt ≤ 1.6× at 10K and ≤ 2.5× at 100K, prompt-sem (with vector candidates) ≤
1.8× at 10K and ≤ 2.8× at 100K, session-start fresh ≤ 1.4× at every size, post-tool ≤ 1.6×, and
session-end ≤ 1.6× (Claude Code gives all SessionEnd hooks 1.5 s together).

Bytecode: the environment may set ``PYTHONDONTWRITEBYTECODE`` (then every run recompiles every
module, which no installed copy does); the runs use a private ``PYTHONPYCACHEPREFIX`` instead,
warmed up before timing, for the baseline and the hooks alike.

Usage: ``.venv/bin/python bench/bench_hooks.py [--sizes 1000,10000,100000] [--runs 40]
[--knob prompt_full_confidence=0.4] [--model ../shared/models/minilm-static-256]``
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.synth import build_store, project_folder

PROMPTS = [
    "why did we move the billing service from REST to gRPC?",
    "the job queue breaks when Redis is restarted, what do we know about that?",
    "add a retry to the payments webhook",
    "which tests cover the auth api and how do we run them?",
    "fix the sqlite3.OperationalError database is locked in the scheduler",
    "what is our convention for logging in the notification worker",
    "rename the variable in this function please",
    "how should the cache layer read its settings at start-up",
]
END_RUNS = 15  # session-end runs per size (each waits for its consolidation child)
DEFAULT_MODEL = Path(__file__).resolve().parent.parent.parent / "shared" / "models" / \
    "minilm-static-256"
TARGETS: dict[str, dict[int | None, float]] = {  # name -> {size: max ratio}; None: every size
    "prompt": {10_000: 1.6, 100_000: 2.5},
    "prompt-sem": {10_000: 1.8, 100_000: 2.8},
    "start-fresh": {None: 1.4},
    "post-tool": {None: 1.6},
    "session-end": {None: 1.6},
}


def _agentctx() -> str:
    launcher = Path(sys.executable).with_name("agentctx")
    return str(launcher) if launcher.exists() else ""


def _command(event: str) -> list[str]:
    launcher = _agentctx()
    return [launcher, "hook", event] if launcher else [sys.executable, "-m", "agentctx", "hook",
                                                        event]


def _payload(kind: str, cwd: str, session_id: str, index: int) -> dict[str, object]:
    base: dict[str, object] = {"session_id": session_id, "cwd": cwd,
                               "transcript_path": f"{cwd}/.transcripts/{session_id}.jsonl"}
    if kind == "prompt":
        return {**base, "hook_event_name": "UserPromptSubmit", "permission_mode": "default",
                "prompt": PROMPTS[index % len(PROMPTS)]}
    if kind.startswith("start"):
        return {**base, "hook_event_name": "SessionStart", "source": "startup"}
    if kind == "session-end":
        return {**base, "hook_event_name": "SessionEnd", "reason": "prompt_input_exit"}
    if index % 2 == 0:
        path = f"{cwd}/src/module_{index}.py"
        return {**base, "hook_event_name": "PostToolUse", "tool_name": "Write",
                "tool_input": {"file_path": path, "content": "x = 1\n"},
                "tool_response": {"type": "create", "filePath": path, "content": "x = 1\n",
                                  "structuredPatch": [], "originalFile": None},
                "tool_use_id": f"toolu_{index}", "duration_ms": 9}
    return {**base, "hook_event_name": "PostToolUse", "tool_name": "Bash",
            "tool_input": {"command": "pytest -q tests/test_api.py", "description": "tests"},
            "tool_response": {"stdout": "....\n4 passed in 0.12s", "stderr": "",
                              "interrupted": False, "isImage": False},
            "tool_use_id": f"toolu_{index}", "duration_ms": 800}


def _timed(cmd: list[str], stdin: bytes, env: dict[str, str]) -> tuple[float, float, bytes]:
    """Wall time, CPU time (user + system, the child only) and stdout of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(cmd, input=stdin, capture_output=True, env=env, check=False)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{cmd} exited {done.returncode}: {done.stderr.decode()[-500:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu, done.stdout


def _invalidate_digest(home: Path, project_id: str, flip: int) -> None:
    """Change one record so the stored digest is stale (outside the timed region)."""
    from agentctx.store import Store, records

    with Store.open(home / "agentctx.db") as db:
        target = records.list_records(db, project_id=project_id, types=("discovery",), limit=1)[0]
        records.update(db, target.id, body=target.body.rstrip(" .") + ("." if flip else " ."))


def _wait_for_finish(home: Path, session_id: str, timeout: float = 300) -> None:
    """Wait until the finishing child of ``session_id`` has logged its last step."""
    log = home / "logs" / "finish-session.log"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
        for line in text.splitlines():
            if session_id in line and "consolidate" in line and any(
                    word in line for word in ("done", "exited", "not available", "stopped")):
                return
        time.sleep(0.05)
    raise SystemExit(f"the finishing child of {session_id} did not finish in {timeout} s")


def _prepare_semantic(db_path: Path, home: Path, model_path: Path) -> str:
    """Embed every record and register the model's query side file; returns what was done."""
    os.environ["AGENTCTX_EMBED_MODEL"] = str(model_path)
    os.environ["AGENTCTX_HOME"] = str(home)
    from agentctx.benchmarks.retrieval import embed_pending
    from agentctx.consolidate.query_side_file import ensure
    from agentctx.ml.embedder import load_model
    from agentctx.store import Store, vecside, vecside_build

    model = load_model()
    if model is None:
        return f"semantic check not measured: cannot load {model_path}"
    with Store.open(db_path) as db:
        started = time.perf_counter()
        embedded = embed_pending(db, model)
        outcome = ensure(db, model, home)
        lists = vecside_build.build(db, model.name)
    return (f"semantic check: {embedded:,} records embedded with {model_path.name} in "
            f"{time.perf_counter() - started:.1f} s, query side file {outcome}, vector side "
            f"{vecside.backend_name()}: {lists}")


def bench_size(size: int, runs: int, workdir: Path, knobs: dict[str, str] | None = None,
               model_path: Path | None = None,
               ) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Build a store of ``size`` records and time every command ``runs`` times, interleaved."""
    home = workdir / f"home-{size}"
    home.mkdir(parents=True)
    started = time.perf_counter()
    project_id = build_store(home / "agentctx.db", size)
    built_in = time.perf_counter() - started
    cwd = str(project_folder(home / "agentctx.db"))
    from agentctx.context import digest
    from agentctx.store import Store, projects

    with Store.open(home / "agentctx.db") as db:
        digest.refresh(db, projects.get(db, project_id), builder="bench")
    semantic = (_prepare_semantic(home / "agentctx.db", home, model_path) if model_path
                else "semantic check not measured (no model)")
    measure_semantic = semantic.startswith("semantic check:")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("AGENTCTX_") and k != "PYTHONDONTWRITEBYTECODE"}
    env.update(AGENTCTX_HOME=str(home), PYTHONPYCACHEPREFIX=str(workdir / "pycache"),
               AGENTCTX_LLM="off", AGENTCTX_EMBEDDINGS="off")
    env.update({f"AGENTCTX_{key.upper()}": value for key, value in (knobs or {}).items()})
    baseline = [sys.executable, "-c", "import sqlite3, json"]
    keyword_only = {**env, "AGENTCTX_PROMPT_SEMANTIC_CHECK": "off"}
    with_check = {**env, "AGENTCTX_PROMPT_SEMANTIC_CHECK": "on"}
    times: dict[str, list[float]] = {k: [] for k in ("baseline", "prompt", "prompt-sem",
                                                      "post-tool", "start-fresh", "start-inline",
                                                      "baseline-end", "session-end")}
    cpu: dict[str, list[float]] = {k: [] for k in times}
    injected = {"prompt": 0, "prompt-sem": 0, "start-fresh": 0, "start-inline": 0}
    for warm in range(3):  # compile bytecode, fill caches; not timed
        for kind, event in (("prompt", "prompt"), ("post-tool", "post-tool"),
                            ("start-fresh", "session-start")):
            _timed(_command(event),
                   json.dumps(_payload(kind, cwd, f"warm-{warm}-{kind}", warm)).encode(), env)
        _timed(_command("prompt"),
               json.dumps(_payload("prompt", cwd, f"warm-{warm}-sem", warm)).encode(), with_check)
        _timed(baseline, b"{}", env)
    for index in range(runs):
        session_id = str(uuid.uuid4())
        jobs = [
            ("baseline", baseline, b"{}"),
            ("prompt", _command("prompt"), _payload("prompt", cwd, session_id, index)),
            *([("prompt-sem", _command("prompt"),
                _payload("prompt", cwd, session_id + "-s", index))] if measure_semantic else []),
            ("post-tool", _command("post-tool"), _payload("post-tool", cwd, session_id, index)),
            ("start-fresh", _command("session-start"),
             _payload("start-fresh", cwd, session_id + "-f", index)),
        ]
        for name, cmd, payload in jobs:
            stdin = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            elapsed, used, out = _timed(cmd, stdin, with_check if name == "prompt-sem" else
                                        keyword_only if name == "prompt" else env)
            times[name].append(elapsed)
            cpu[name].append(used)
            if name in injected and out.strip():
                injected[name] += 1
        _invalidate_digest(home, project_id, index % 2)
        elapsed, used, out = _timed(_command("session-start"),
                                    json.dumps(_payload("start-inline", cwd, session_id + "-i",
                                                        index)).encode(), env)
        times["start-inline"].append(elapsed)
        cpu["start-inline"].append(used)
        injected["start-inline"] += bool(out.strip())
    for index in range(min(runs, END_RUNS)):
        session_id = f"end-{index}-{uuid.uuid4()}"
        for name, cmd, stdin in (
                ("baseline-end", baseline, b"{}"),
                ("session-end", _command("session-end"),
                 json.dumps(_payload("session-end", cwd, session_id, index)).encode())):
            elapsed, used, _ = _timed(cmd, stdin, env)
            times[name].append(elapsed)
            cpu[name].append(used)
        _wait_for_finish(home, session_id)
    log = home / "logs" / "hooks.log"
    problems = log.read_text(encoding="utf-8").strip() if log.exists() else ""
    print(f"\n{size:,} records (built in {built_in:.1f} s); {semantic}; injected: prompt "
          f"{injected['prompt']}/{runs}, prompt-sem {injected['prompt-sem']}/{runs}, "
          f"start-fresh {injected['start-fresh']}/{runs}, "
          f"start-inline {injected['start-inline']}/{runs}")
    if problems:
        print("hooks.log:\n" + problems)
        failed = problems.count("hook failed")
        if failed:  # a hook that failed open returned early: its time measures nothing
            HOOK_FAILURES.append(f"{failed} hook runs failed at {size:,} (see hooks.log above)")
    return times, cpu


HOOK_FAILURES: list[str] = []


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


NAMES = ["baseline", "prompt", "prompt-sem", "post-tool", "start-fresh", "start-inline",
         "session-end"]


def _table(title: str, results: dict[int, dict[str, list[float]]],
           cell: Callable[[str, dict[str, list[float]]], str]) -> None:
    print(f"\n{title}")
    print(f"{'records':>9} " + " ".join(f"{n:>17}" for n in NAMES))
    for size, values in results.items():
        print(f"{size:>9,} " + " ".join(f"{cell(name, values):>17}" for name in NAMES))


def _ratio_cell(name: str, values: dict[str, list[float]]) -> str:
    base = statistics.median(values["baseline-end" if name == "session-end" else "baseline"])
    if not values[name]:
        return "-"
    median = statistics.median(values[name])
    return f"{median * 1000:6.1f} ms {median / base:5.2f}x"


def main() -> None:
    """Run the benchmark and print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--knob", action="append", default=[], metavar="KEY=VALUE",
                        help="a configuration knob for the hooks, e.g. prompt_full_confidence=0.4")
    parser.add_argument("--model", default=str(DEFAULT_MODEL),
                        help="model2vec folder for the prompt-sem runs ('none' to skip them)")
    args = parser.parse_args()
    model_path = None if args.model == "none" else Path(args.model)
    if model_path is not None and not model_path.is_dir():
        print(f"no model at {model_path}: prompt-sem is not measured (pass --model)")
        model_path = None
    knobs = dict(item.split("=", 1) for item in args.knob)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    walls: dict[int, dict[str, list[float]]] = {}
    cpus: dict[int, dict[str, list[float]]] = {}
    with tempfile.TemporaryDirectory(prefix="agentctx-bench-") as tmp:
        for size in sizes:
            walls[size], cpus[size] = bench_size(size, args.runs, Path(tmp), knobs, model_path)
    _table(f"median wall time (ms) and ratio to the baseline, {args.runs} interleaved runs each "
           f"(session-end: {min(args.runs, END_RUNS)}, against the baseline of its own loop)",
           walls, _ratio_cell)
    _table("90th percentile wall time (ms): a median hides the slow prompts", walls,
           lambda name, values: f"{_percentile(values[name], 0.9) * 1000:6.1f} ms"
           if values[name] else "-")
    _table("median CPU time (user + system, ms) and ratio: steadier than wall time on a busy "
           "machine", cpus, _ratio_cell)
    failures = list(HOOK_FAILURES)
    for size, values in walls.items():
        for name, limits in TARGETS.items():
            limit = limits.get(size, limits.get(None))
            if not values[name]:
                continue
            base = statistics.median(values["baseline-end" if name == "session-end" else
                                            "baseline"])
            ratio = statistics.median(values[name]) / base
            if limit is not None and ratio > limit:
                failures.append(f"{name} at {size:,}: {ratio:.2f}x > {limit}x")
    print("\ntargets (wall time): prompt <= 1.6x at 10K and <= 2.5x at 100K; prompt-sem (vector "
          "candidates) <= 1.8x at 10K and <= 2.8x at 100K; start-fresh <= 1.4x; post-tool <= "
          "1.6x; session-end <= 1.6x")
    print("result: " + ("all targets met" if not failures else "MISSED: " + "; ".join(failures)))


if __name__ == "__main__":
    main()
