"""The team file (``.agentctx/context.md``): what keeping it costs, against same-run baselines.

A synthetic project of ``--records`` (5,000) records, about half of them decisions, conventions
and discoveries (a tenth superseded, so blocks carry history), team file on. Interleaved,
``--runs`` times each, in one process:

* ``export md`` (baseline) — today's ``agentctx export`` of the project
(:mod:`agentctx.ops.export`);
* ``render`` — the team file's text from the store;
* ``sync, in step`` — what follows every CLI / MCP write when nothing shared changed: read and
  parse the file, plan the import, render, compare (no write);
* ``import into empty`` — the whole file into a fresh store (fewer runs: it builds a store).

And what the team file adds to SessionStart: the hook's check (two reads and a ``stat``), in
process, against the hook's own digest freshness check (baseline); and the hook as a process
(``--hook-runs``), team off and team on with the file in step (nothing is spawned), interleaved —
on a shared machine that difference is within the noise.

Prints medians and ratios. Targets: ``sync, in step`` ≤ 3× ``export md``; the team file check
≤ 3× the digest freshness check. The exit code is 1 when a target is missed.

Usage: ``.venv/bin/python bench/bench_team.py [--records 5000] [--runs 9] [--hook-runs 15]
[--json]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agentctx import team
from agentctx.hooks.session_start import team_file_stale
from agentctx.ops.export import render_markdown
from agentctx.store import Project, Store, digests, teamstate
from agentctx.store import projects as proj
from agentctx.team import reconcile
from bench.synth import build_store, project_folder

SYNC_TARGET = 3.0
CHECK_TARGET = 3.0
CHECK_REPEAT = 200


def _repeat(work: Callable[[], object]) -> None:
    for _ in range(CHECK_REPEAT):
        work()


def _median_ms(work: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def _interleaved(cases: dict[str, Callable[[], object]], runs: int) -> dict[str, float]:
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(runs):
        for name, work in cases.items():
            start = time.perf_counter()
            work()
            samples[name].append((time.perf_counter() - start) * 1000)
    return {name: statistics.median(values) for name, values in samples.items()}


def _hook_once(folder: Path) -> float:
    payload = json.dumps({"session_id": "bench-session", "cwd": str(folder),
                          "hook_event_name": "SessionStart", "source": "startup"}).encode()
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "agentctx", "hook", "session-start"],
                          input=payload, capture_output=True, check=False, cwd=folder)
    elapsed = (time.perf_counter() - start) * 1000
    if done.returncode != 0:
        raise SystemExit(f"the hook exited {done.returncode}: {done.stderr.decode()[-400:]}")
    return elapsed


def _hook_ms(db: Store, project: Project, folder: Path, runs: int) -> tuple[float, float]:
    """Medians of the SessionStart hook with the team file off and on (in step), interleaved:
    the switch is flipped between runs, outside the timed region."""
    off: list[float] = []
    on: list[float] = []
    _hook_once(folder)  # the first start detects the profile and builds the digest
    for _ in range(runs):
        team.turn_off(db, project)
        off.append(_hook_once(folder))
        team.turn_on(db, project, folder)
        on.append(_hook_once(folder))
    return statistics.median(off), statistics.median(on)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; returns the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--hook-runs", type=int, default=15)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="agentctx-bench-team-"))
    os.environ.setdefault("AGENTCTX_HOME", str(work / "home"))
    path = Path(os.environ["AGENTCTX_HOME"]) / "agentctx.db"
    project_id = build_store(path, args.records)
    folder = project_folder(path)
    db = Store.open(path)
    project = proj.get(db, project_id)
    shared = len(teamstate.shared_records(db, project.id))

    hook_off, hook_on = _hook_ms(db, project, folder, args.hook_runs)
    text = (folder / team.TEAM_FILE).read_text(encoding="utf-8")

    medians = _interleaved({
        "export md": lambda: render_markdown(db, project, stamp="-"),
        "render": lambda: reconcile.render_project(db, project),
        "sync, in step": lambda: team.sync(db, project, folder),
    }, args.runs)
    counter = [0]

    def import_fresh() -> None:
        counter[0] += 1
        with Store.open(work / f"fresh-{counter[0]}.db") as fresh:
            target = proj.resolve(fresh, str(folder)).project
            team.import_text(fresh, target, text, "context.md")

    medians["import into empty"] = _median_ms(import_fresh, max(3, args.runs // 3))
    checks = _interleaved({
        "digest freshness": lambda: _repeat(lambda: digests.load_fresh(db, project.id)),
        "team file check": lambda: _repeat(lambda: team_file_stale(db, project.id, str(folder))),
    }, args.runs)
    check_us = {k: v * 1000 / CHECK_REPEAT for k, v in checks.items()}
    db.close()

    base = medians["export md"]
    result: dict[str, Any] = {
        "records": args.records, "shared_records": shared, "file_bytes": len(text.encode()),
        "medians_ms": {k: round(v, 2) for k, v in medians.items()},
        "ratios_to_export_md": {k: round(v / base, 2) for k, v in medians.items()},
        "hook_ms": {"team off": round(hook_off, 1), "team on, in step": round(hook_on, 1)},
        "hook_ratio": round(hook_on / hook_off, 3),
        "check_us": {k: round(v, 1) for k, v in check_us.items()},
        "check_ratio": round(check_us["team file check"] / check_us["digest freshness"], 2),
    }
    ok = (result["ratios_to_export_md"]["sync, in step"] <= SYNC_TARGET
          and result["check_ratio"] <= CHECK_TARGET)
    if args.json:
        print(json.dumps({**result, "ok": ok}, indent=2))
        return 0 if ok else 1
    print(f"team file: {args.records} records, {shared} shared, "
          f"{result['file_bytes'] / 1000:.0f} kB file; medians of {args.runs} runs")
    print(f"{'case':<20} {'median ms':>10} {'× export md':>12}")
    for name, value in medians.items():
        print(f"{name:<20} {value:>10.1f} {value / base:>12.2f}")
    print(f"SessionStart's team file check {check_us['team file check']:.1f} µs vs its digest "
          f"freshness check {check_us['digest freshness']:.1f} µs: {result['check_ratio']:.2f}× "
          f"(target ≤ {CHECK_TARGET})")
    print(f"SessionStart hook process: team off {hook_off:.1f} ms, team on (in step) "
          f"{hook_on:.1f} ms, ratio {hook_on / hook_off:.3f} (noise on a shared machine: "
          "the check above is what the file adds)")
    print(f"sync, in step: {medians['sync, in step'] / base:.2f}× export md "
          f"(target ≤ {SYNC_TARGET})")
    print("targets met" if ok else "TARGET MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
