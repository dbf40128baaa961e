"""Consolidation speed with the real small model, against ``model.encode`` alone on the same texts.

A synthetic store of ``--size`` records (``bench/synth.py``, every record pending an embedding) is
built once; each round, interleaved in one loop and one process with the model already loaded:

* ``encode`` — the baseline: ``model.encode(texts)`` on exactly the texts consolidation embeds
  (the pending records' ``[type] [date] [project] title + body``);
* ``consolidate`` — a full ``agentctx consolidate`` run on a fresh copy of the store: embed every
  pending record and store its vector, the vector index, the near-duplicate scan, decay scores,
  the archive and the digest (no model judge: candidates only);
* ``scan`` — the near-duplicate scan alone over the embedded records (reported beside the run,
  absolute and per record).

It prints medians and ratios to the baseline's median. Target: consolidating ``--size`` pending
records takes ≤ 3× the baseline. The rows ``consolidate - scan`` and each step's median show
where the time goes. Run it in both environments: the default one (numpy scan; its interpreter
cannot load extensions) and ``.venv-vec`` (sqlite-vec ``vec0`` index).

Usage: ``.venv/bin/python bench/bench_consolidate.py [--size 10000] [--runs 5]
[--model ../shared/models/minilm-static-256]``
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.synth import build_store

REPO = Path(__file__).resolve().parent.parent
DEFAULT_MODEL = REPO.parent / "shared" / "models" / "minilm-static-256"
TARGET_RATIO = 3.0


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def main() -> int:
    """Run the benchmark and print the table; exit 1 when the target ratio is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="agentctx-bench-consolidate-"))
    os.environ["AGENTCTX_HOME"] = str(work / "home")
    os.environ["AGENTCTX_EMBED_MODEL"] = str(args.model)
    os.environ["AGENTCTX_LLM"] = "off"
    try:
        return _bench(work, args.size, args.runs)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _bench(work: Path, size: int, runs: int) -> int:
    from agentctx.consolidate import duplicates
    from agentctx.consolidate.run import consolidate
    from agentctx.ml.embedder import embedding_text, load_model
    from agentctx.store import Store, vectors

    pristine = work / "pristine" / "agentctx.db"
    began = time.perf_counter()
    project_id = build_store(pristine, size)
    with Store.open(pristine) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        pending = vectors.pending(db, limit=10 * size)
        current = int(db.scalar("SELECT count(*) FROM records WHERE superseded_at IS NULL"))
    texts = [embedding_text(p.type, p.valid_from, p.project, p.title, p.body) for p in pending]
    print(f"store: {size:,} records ({current:,} current, {len(texts):,} pending), built in "
          f"{time.perf_counter() - began:.1f} s")
    model = load_model()
    if model is None:
        print(f"cannot load the model {os.environ['AGENTCTX_EMBED_MODEL']}")
        return 2
    print(f"model: {model.name} ({model.dim} dims)")
    model.encode(texts[:256])  # warm the tokenizer and the embedding table

    timings: dict[str, list[float]] = {"encode": [], "consolidate": [], "scan": []}
    steps: dict[str, list[float]] = {}
    backend = ""
    candidates = 0
    for run in range(runs):
        began = time.perf_counter()
        model.encode(texts)
        timings["encode"].append(time.perf_counter() - began)

        target = work / f"run{run}" / "agentctx.db"
        target.parent.mkdir(parents=True)
        shutil.copy(pristine, target)
        with Store.open(target) as db:
            began = time.perf_counter()
            report = consolidate(db, model=model, judge=None, time_limit_s=3600)
            timings["consolidate"].append(time.perf_counter() - began)
            assert report.stopped is None and report.pending_left == 0, report
            assert report.embedded == len(texts), (report.embedded, len(texts))
            backend = report.backend
            for name, seconds in report.seconds.items():
                steps.setdefault(name, []).append(seconds)
            threshold = 0.92
            began = time.perf_counter()
            found = duplicates.scan(db, model.name, project_id, threshold)
            timings["scan"].append(time.perf_counter() - began)
            candidates = found.candidates
            scanned = found.scanned
        shutil.rmtree(target.parent)

    base = _median(timings["encode"])
    print(f"vector backend: {backend}; {runs} runs, medians\n")
    print(f"{'':<26}{'median s':>10}{'× encode':>10}")
    full = _median(timings["consolidate"])
    rows = [("encode (baseline)", base), ("consolidate (full run)", full)]
    rows += [(f"  step {name}", _median(values)) for name, values in steps.items()
             if name != "total"]
    rows.append(("consolidate - scan", _median(timings["consolidate"]) - _median(steps.get(
        "duplicates", [0.0]))))
    for label, value in rows:
        print(f"{label:<26}{value:>10.3f}{value / base:>10.2f}")
    scan = _median(timings["scan"])
    print(f"\nnear-duplicate scan over {scanned:,} current records: {scan:.3f} s "
          f"({scan / max(1, scanned) * 1e6:.1f} µs per record); {candidates} candidate pairs")
    ratio = _median(timings["consolidate"]) / base
    verdict = "ok" if ratio <= TARGET_RATIO else "MISSED"
    print(f"\ntarget: consolidating {len(texts):,} pending records ≤ {TARGET_RATIO:g}× encode: "
          f"{ratio:.2f}× — {verdict}")
    return 0 if ratio <= TARGET_RATIO else 1


if __name__ == "__main__":
    sys.exit(main())
