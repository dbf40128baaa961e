"""Web view first paint: navigation start to the first record row, in real headless Chromium.

A 10K-record store (``bench/synth.py``) behind the real server (``agentctx.web.server``), and
Chromium (Debian's ``chromium``) driven over the DevTools protocol (``tests/support/devtools``).
Each load navigates to the page and waits for its ``performance.mark('first-record-row')``,
which the page sets when the first row of records is in the DOM; the mark's ``startTime`` is
milliseconds since the navigation started. Interleaved in one loop, the same is timed for:

* ``empty`` — the baseline: an empty page served the same way (the same server, headers and
  policy) whose one script sets the same mark;
* ``page`` — the web view: the page, its scripts and stylesheet, ``/api/status``,
  ``/api/projects`` and the first ``/api/records`` page of the 10K-record project.

It prints the median of each over ``--loads`` (default 10) loads, the ratio, the page weight
(uncompressed bytes of the first load's assets) and checks the targets: ``page`` ≤ 300 ms and the
weight ≤ 200 KB.

Usage: ``.venv/bin/python bench/bench_web.py [--records 10000] [--loads 10]``
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agentctx.web import server as web_server
from bench.synth import build_store
from tests.support.devtools import Chromium, find_chromium

MARK = "first-record-row"
EMPTY_PAGE = (b"<!doctype html><html><head><meta charset=\"utf-8\"><title>empty</title>"
              b"<script src=\"/static/empty.js\"></script></head><body></body></html>")
EMPTY_SCRIPT = f"performance.mark({MARK!r});".encode()
TARGET_MS = 300.0
WEIGHT_MAX = 200 * 1024


def load_ms(browser: Chromium, url: str) -> float:
    """One load of ``url``: milliseconds from navigation start to the mark."""
    browser.navigate("about:blank")
    browser.navigate(url)
    value = browser.wait_for(
        f"performance.getEntriesByName({MARK!r}).length && "
        f"performance.getEntriesByName({MARK!r})[0].startTime", timeout=30)
    return float(value)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--loads", type=int, default=10)
    args = parser.parse_args(argv)
    if find_chromium() is None:
        print("no chromium on PATH: apt-get install chromium (make browser)")
        return 1
    with tempfile.TemporaryDirectory(prefix="agentctx-bench-web-") as folder:
        db_path = Path(folder) / "agentctx.db"
        started = time.perf_counter()
        project = build_store(db_path, args.records)
        print(f"store: {args.records} records in {time.perf_counter() - started:.1f} s")
        server, _ = web_server.bind(0, db_path=db_path, project=project)
        server.assets["/empty"] = web_server.Asset(EMPTY_PAGE, "text/html; charset=utf-8")
        server.assets["/static/empty.js"] = web_server.Asset(EMPTY_SCRIPT,
                                                             "text/javascript; charset=utf-8")
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                                  daemon=True)
        thread.start()
        weight = sum(len(server.assets[p].body) for p in server.assets
                     if p not in ("/empty", "/static/empty.js"))
        try:
            with Chromium.launch() as browser:
                load_ms(browser, server.url)  # warm-up: the browser's first start of a page
                load_ms(browser, server.url + "empty")
                empty, page = [], []
                for _ in range(args.loads):
                    empty.append(load_ms(browser, server.url + "empty"))
                    page.append(load_ms(browser, server.url))
        finally:
            server.shutdown()
            server.server_close()
            thread.join(timeout=10)
    empty_ms, page_ms = statistics.median(empty), statistics.median(page)
    print(f"\nnavigation start → first record row, median of {args.loads} loads "
          f"({args.records} records)")
    print(f"{'':8}{'median ms':>12}{'min':>9}{'max':>9}{'ratio':>9}")
    for name, values, median in (("empty", empty, empty_ms), ("page", page, page_ms)):
        print(f"{name:8}{median:12.1f}{min(values):9.1f}{max(values):9.1f}"
              f"{median / empty_ms:8.1f}×")
    print(f"\npage weight (first load, uncompressed): {weight:,} bytes "
          f"(target ≤ {WEIGHT_MAX:,})")
    ok = page_ms <= TARGET_MS and weight <= WEIGHT_MAX
    print(f"target: page ≤ {TARGET_MS:.0f} ms and weight ≤ 200 KB: "
          f"{'met' if ok else 'NOT met'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
