"""The TUI's speed, against baselines measured in the same run (issue 16).

At each size (10K and 100K records, one synthetic project built by :mod:`bench.synth`):

* **open** — a new process, from its start to the first row of the records table painted
  (headless), against a bare Textual ``App`` showing one ``Static`` started the same way;
  target ≤ 1.5×.
* **keystroke** — in one app, the last key of a search typed into the records pane until the
  table shows that text's hits (the pane's coalescing of keystrokes included), against one call
  of the store's search on the same text (``ops.find.search``, what the pane calls);
  targets ≤ 2× and a median ≤ 100 ms.

Runs are interleaved (tui, baseline, tui, …) so a busy machine slows both alike. Usage:
``python -m bench.bench_tui [--sizes 10000,100000] [--runs 9] [--keys 25]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from agentctx.store.selection import Selection
from bench.synth import build_store

OPEN_TARGET = 1.5
KEY_TARGET = 2.0
KEY_P50_MS = 100.0

TUI_CHILD = """
import sys
from pathlib import Path
from agentctx.tui.app import make_app
from agentctx.tui.records_pane import RecordsPane
app = make_app(home=Path(sys.argv[1]), project=sys.argv[2])
def painted():
    sys.__stdout__.write("painted\\n"); sys.__stdout__.flush(); app.exit()
def look():
    if app.query_one(RecordsPane).records:
        timer.stop(); app.call_after_refresh(painted)
def start():
    global timer
    timer = app.set_interval(0.001, look)
app.call_later(start)
app.run(headless=True)
"""

BARE_CHILD = """
import sys
from textual.app import App
from textual.widgets import Static
class Bare(App[None]):
    def compose(self):
        yield Static("one static")
    def on_mount(self):
        self.call_after_refresh(self.painted)
    def painted(self):
        sys.__stdout__.write("painted\\n"); sys.__stdout__.flush(); self.exit()
Bare().run(headless=True)
"""


def _open_once(code: str, args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds from spawning ``python -c code`` to its "painted" line, and the CPU
    seconds (user + system) the whole child used (steadier on a busy machine)."""
    start = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, env=env)
    assert child.stdout is not None
    line = child.stdout.readline()
    took = time.perf_counter() - start
    _pid, _status, usage = os.wait4(child.pid, 0)
    child.returncode = 0
    child.stdout.close()
    if line.strip() != b"painted":
        raise RuntimeError(f"the child did not paint: {line!r}")
    return took, usage.ru_utime + usage.ru_stime


def bench_open(home: Path, project_id: str, runs: int,
               ) -> tuple[list[float], list[float], list[float], list[float]]:
    """Interleaved open times (wall, then CPU) of the TUI and of the bare App."""
    env = {**os.environ, "AGENTCTX_HOME": str(home)}
    tui: list[tuple[float, float]] = []
    bare: list[tuple[float, float]] = []
    _open_once(TUI_CHILD, [str(home), project_id], env)  # warm the page cache
    _open_once(BARE_CHILD, [], env)
    for _ in range(runs):
        tui.append(_open_once(TUI_CHILD, [str(home), project_id], env))
        bare.append(_open_once(BARE_CHILD, [], env))
    return ([w for w, _ in tui], [w for w, _ in bare], [c for _, c in tui],
            [c for _, c in bare])


def _queries(db_path: Path, project_id: str, count: int) -> list[str]:
    """Two-word searches taken from random record titles (what a user types)."""
    from agentctx.store import Store
    from agentctx.store import records as rec

    rng = random.Random(7)
    with Store.open(db_path) as db:
        titles = [r.title for r in rec.list_records(db, Selection(project_id=project_id),
                                                    limit=2000)]
    picked: list[str] = []
    while len(picked) < count:
        words = [w for w in rng.choice(titles).lower().split() if w.isalpha() and len(w) > 3]
        if len(words) >= 2:
            picked.append(" ".join(rng.sample(words, 2)))
    return picked


def bench_keys(home: Path, project_id: str, count: int) -> tuple[list[float], list[float]]:
    """Keystroke-to-table times in one app, and one store search on the same text each."""
    from textual.widgets import Input

    from agentctx.ops import find
    from agentctx.store import Store
    from agentctx.store.search import Query
    from agentctx.tui.app import make_app
    from agentctx.tui.records_pane import RecordsPane

    queries = _queries(home / "agentctx.db", project_id, count)
    app = make_app(home=home, project=project_id)
    shown: dict[str, float] = {}
    keys: list[float] = []
    searches: list[float] = []

    async def main() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            pane = app.query_one(RecordsPane)
            original = pane.show_hits

            def timed(text: str, hits: list, mode: str) -> None:  # type: ignore[type-arg]
                original(text, hits, mode)
                if pane.query_text == text:
                    shown.setdefault(text, time.perf_counter())
            pane.show_hits = timed  # type: ignore[method-assign]
            search_input = app.query_one("#search", Input)
            await pilot.press("slash")
            with Store.open(home / "agentctx.db") as db:
                for text in queries:
                    search_input.value = text[:-1]
                    search_input.action_end()
                    await pilot.pause()
                    await app.workers.wait_for_complete()
                    await pilot.pause()
                    shown.clear()
                    start = time.perf_counter()
                    await pilot.press(text[-1])
                    while text not in shown:
                        if time.perf_counter() - start > 30:
                            raise RuntimeError(f"the table never showed {text!r}")
                        await asyncio.sleep(0.0005)
                    keys.append(shown[text] - start)
                    begin = time.perf_counter()
                    find.search(db, Query(text, Selection(project_id=project_id),
                                                limit=100),
                                      find.stored_vectors(db), substrings=True)
                    searches.append(time.perf_counter() - begin)

    asyncio.run(main())
    return keys, searches


def _ms(values: list[float]) -> float:
    return statistics.median(values) * 1000


def main() -> None:
    """Build the stores, measure, print the table and whether the targets are met."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--runs", type=int, default=9, help="process starts per size and side")
    parser.add_argument("--keys", type=int, default=25, help="searches typed per size")
    args = parser.parse_args()
    rows = []
    cpu_rows: list[tuple[int, float, float, float]] = []
    failures = []
    with tempfile.TemporaryDirectory(prefix="agentctx-bench-tui-") as tmp:
        for size in (int(s) for s in args.sizes.split(",") if s):
            home = Path(tmp) / f"home-{size}"
            home.mkdir()
            project_id = build_store(home / "agentctx.db", size)
            tui, bare, tui_cpu, bare_cpu = bench_open(home, project_id, args.runs)
            keys, searches = bench_keys(home, project_id, args.keys)
            open_ratio = _ms(tui) / _ms(bare)
            key_ratio = _ms(keys) / _ms(searches)
            rows.append((size, _ms(tui), _ms(bare), open_ratio, _ms(keys), _ms(searches),
                         key_ratio))
            cpu_rows.append((size, _ms(tui_cpu), _ms(bare_cpu), _ms(tui_cpu) / _ms(bare_cpu)))
            if open_ratio > OPEN_TARGET:
                failures.append(f"open at {size:,}: {open_ratio:.2f}x > {OPEN_TARGET}x")
            if key_ratio > KEY_TARGET:
                failures.append(f"keystroke at {size:,}: {key_ratio:.2f}x > {KEY_TARGET}x")
            if _ms(keys) > KEY_P50_MS:
                failures.append(f"keystroke at {size:,}: p50 {_ms(keys):.1f} ms > {KEY_P50_MS}")
    print(f"\nmedians: open over {args.runs} interleaved process starts, keystroke over "
          f"{args.keys} searches")
    print(f"{'records':>8}  {'open':>9}  {'bare App':>9}  {'ratio':>6}  {'keystroke':>9}  "
          f"{'search':>8}  {'ratio':>6}")
    for size, t, b, r, k, s, kr in rows:
        print(f"{size:>8,}  {t:>6.0f} ms  {b:>6.0f} ms  {r:>5.2f}x  {k:>6.1f} ms  {s:>5.1f} ms  "
              f"{kr:>5.2f}x")
    print("\nopen, CPU time of the whole process (user + system), steadier on a busy machine:")
    for size, t, b, r in cpu_rows:
        print(f"{size:>8,}  {t:>6.0f} ms  {b:>6.0f} ms  {r:>5.2f}x")
    print(f"\ntargets: open <= {OPEN_TARGET}x the bare App; keystroke <= {KEY_TARGET}x one store "
          f"search and p50 <= {KEY_P50_MS:.0f} ms")
    print("result: " + ("all targets met" if not failures else "MISSED: " + "; ".join(failures)))


if __name__ == "__main__":
    main()
