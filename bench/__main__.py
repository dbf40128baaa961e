"""``python -m bench`` (``make bench``): every benchmark table of the project, one after another.

Runs, each as its own process with a fresh, empty ``AGENTCTX_HOME`` (so nothing reads or writes
the developer's store or configuration), with its output shown as it comes:

* ``bench/bench_hooks.py`` — hook start-up and latency against a bare Python start;
* ``bench/bench_mcp.py`` — ``ctx_search`` against a bare FTS5 query;
* ``bench/bench_consolidate.py`` — consolidation against the model's encode alone;
* ``bench/bench_retrieval.py`` — retrieval quality and latency (coding-memory, LongMemEval_S);
* ``bench/bench_drift.py`` — CLAUDE.md drift: quality on labelled fixtures, scan speed;
* ``bench/bench_team.py`` — the team file: sync and import against ``export md``, and the
  SessionStart hook with the team file on against off.
* ``bench/bench_web.py`` — the web view's first record row in headless Chromium, 10K records.
* ``bench/bench_tui.py`` — the TUI's open and keystroke-to-table times against a bare Textual
  App and one store search.
* ``bench/bench_digest.py`` — the SessionStart digest's token split (ids and metadata against
  the whole) and the records it shows, on the demo store and a 1,000-record store.

A benchmark file that does not exist is reported as missing and skipped. At the end a summary
lists each benchmark's outcome and time; the exit code is non-zero when any benchmark failed.

Usage: ``python -m bench [--only hooks,mcp,consolidation,retrieval,drift,team,web,tui,digest]``
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCHMARKS = (
    ("hooks", "bench_hooks.py"),
    ("mcp", "bench_mcp.py"),
    ("consolidation", "bench_consolidate.py"),
    ("retrieval", "bench_retrieval.py"),
    ("drift", "bench_drift.py"),
    ("team", "bench_team.py"),
    ("web", "bench_web.py"),
    ("tui", "bench_tui.py"),
    ("digest", "bench_digest.py"),
)


def run_one(name: str, script: Path) -> tuple[str, float]:
    """Run one benchmark script in a fresh home; returns its outcome and wall time."""
    if not script.is_file():
        print(f"[{name}] {script.relative_to(HERE.parent)} is missing: no {name} table",
              flush=True)
        return "missing", 0.0
    print(f"\n=== {name}: {script.relative_to(HERE.parent)} ===", flush=True)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix=f"agentctx-bench-{name}-",
                                     ignore_cleanup_errors=True) as home:
        env = {**{k: v for k, v in os.environ.items() if not k.startswith("AGENTCTX_")},
               "AGENTCTX_HOME": str(Path(home) / ".agentctx")}
        completed = subprocess.run([sys.executable, str(script)], cwd=HERE.parent, env=env,
                                   check=False)
    elapsed = time.perf_counter() - started
    outcome = "ok" if completed.returncode == 0 else f"failed (exit {completed.returncode})"
    return outcome, elapsed


def main(argv: list[str] | None = None) -> int:
    """Run the selected benchmarks and print a summary; returns the exit code."""
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="",
                        help="comma-separated subset of: "
                             + ", ".join(name for name, _ in BENCHMARKS))
    args = parser.parse_args(argv)
    wanted = [w.strip() for w in args.only.split(",") if w.strip()]
    unknown = sorted(set(wanted) - {name for name, _ in BENCHMARKS})
    if unknown:
        parser.error(f"unknown benchmark(s): {', '.join(unknown)}")
    results = []
    for name, file_name in BENCHMARKS:
        if wanted and name not in wanted:
            continue
        outcome, elapsed = run_one(name, HERE / file_name)
        results.append((name, file_name, outcome, elapsed))
    width = max(len(name) for name, *_ in results)
    print("\n=== summary ===")
    for name, file_name, outcome, elapsed in results:
        timing = f"{elapsed:7.1f} s" if outcome != "missing" else " " * 9
        print(f"{name.ljust(width)}  {timing}  {outcome}  (bench/{file_name})")
    failed = [name for name, _, outcome, _ in results if outcome.startswith("failed")]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
