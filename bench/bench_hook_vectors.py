"""The hook's vector side: recall of the exact top 10, and time per query, by store size.

For synthetic stores (``bench/synth.py``) of each size, every current record is embedded with
the real small model and consolidation's build writes the vector lists; then for each prompt
(the evaluation projects' tuning prompts and the hook benchmark's prompts, embedded with the
standard library from the query side file, as the hook does) :func:`agentctx.store.vecside.nearest`
(the backend this interpreter picks: ``stdlib`` here unless sqlite-vec loads) is compared with
the exact numpy scan (:func:`agentctx.store.vectors.nearest` with the numpy backend). It prints
recall@10 (the share of the exact top 10 found), recall@10 over the records with cosine ≥ 0.3
(the ones a prompt could plausibly mean), and the median and 90th percentile time per query.

Synthetic records are all made of one vocabulary, so their cosines are close together (the
10th and the 200th neighbour differ by about 0.05): the hardest case for an approximate index.
``--turns PATH`` builds each store from real text instead: the conversation turns of a
LongMemEval file (``../shared/data/longmemeval/longmemeval_s_subset.json``, up to the size),
queried with its questions as well.

Usage: ``.venv/bin/python bench/bench_hook_vectors.py [--sizes 1000,10000,100000]
[--model ../shared/models/minilm-static-256] [--turns PATH]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.bench_hooks import DEFAULT_MODEL, PROMPTS
from bench.synth import build_store

MEANINGFUL = 0.3


def prompts() -> list[str]:
    """The evaluation projects' tuning prompts and the hook benchmark's."""
    from agentctx.benchmarks import eval_projects

    found = list(PROMPTS)
    for project in eval_projects.eval_projects():
        raw = json.loads(project.queries_path("tuning").read_text(encoding="utf-8"))
        found += [q["prompt"] for q in raw["queries"]]
    return found


def turn_store(path: Path, turns_file: Path, size: int) -> tuple[str, list[str]]:
    """A store of up to ``size`` LongMemEval turns in one project; its id and the questions."""
    from agentctx.benchmarks import longmemeval
    from agentctx.store import Store, projects, records
    from agentctx.store.errors import InvalidRecord
    from agentctx.store.models import Draft

    questions = longmemeval.load(turns_file)
    with Store.open(path) as db:
        project = projects.resolve(db, str(path.parent)).project
        added = 0
        with db.write():
            for question in questions:
                for turn in question.turns:
                    if added >= size:
                        break
                    title, body = longmemeval.split_turn(longmemeval.cut_text(turn.text)[0])
                    try:
                        records.add(db, Draft(type="discovery", title=title or "turn",
                                              body=body), project_id=project.id)
                    except InvalidRecord:
                        continue
                    added += 1
    return project.id, [q.question for q in questions]


def measure(size: int, model_path: Path, workdir: Path,
            turns: Path | None = None) -> dict[str, float]:
    """Build, embed and query one store; the recall and timing figures."""
    os.environ["AGENTCTX_HOME"] = str(workdir / f"home-{size}")
    os.environ["AGENTCTX_VECTOR_BACKEND"] = "numpy"
    from agentctx.benchmarks.retrieval import embed_pending
    from agentctx.consolidate.query_side_file import ensure
    from agentctx.ml.embedder import load_model
    from agentctx.store import Store, querymodel, vecside, vecside_build, vectors
    from agentctx.store.models import GLOBAL_PROJECT
    from agentctx.store.textproc import query_terms

    os.environ["AGENTCTX_EMBED_MODEL"] = str(model_path)
    model = load_model()
    if model is None:
        raise SystemExit(f"cannot load {model_path}")
    path = workdir / f"store-{size}.db"
    texts = prompts()
    if turns is None:
        project_id = build_store(path, size)
    else:
        project_id, questions = turn_store(path, turns, size)
        texts += questions
    import numpy as np

    with Store.open(path) as db:
        started = time.perf_counter()
        embed_pending(db, model)
        ensure(db, model, workdir / f"home-{size}")
        embedded = time.perf_counter() - started
        started = time.perf_counter()
        how = vecside_build.build(db, model.name)
        build_s = time.perf_counter() - started
        side = querymodel.open_registered(db)
        assert side is not None
        scope = [project_id, GLOBAL_PROJECT]
        recalls, meaningful, times = [], [], []
        for text in texts:
            vector = side.encode(query_terms(text))
            if vector is None:
                continue
            started = time.perf_counter()
            got = vecside.nearest(db, vector, project_ids=scope, limit=10)
            times.append(time.perf_counter() - started)
            exact = vectors.nearest(db, np.array(vector, dtype=np.float32), project_ids=scope,
                                    limit=10, model=side.model)
            found = {pk for pk, _ in got}
            recalls.append(len(found & {pk for pk, _ in exact}) / max(1, len(exact)))
            strong = {pk for pk, cos in exact if cos >= MEANINGFUL}
            if strong:
                meaningful.append(len(found & strong) / len(strong))
        side.close()
    times.sort()
    print(f"{size:>8,} records: embedded in {embedded:.1f} s, lists {how} in {build_s:.2f} s; "
          f"{'turns' if turns else 'synthetic'}; backend {vecside.backend_name()}; "
          f"{len(recalls)} prompts: recall@10 "
          f"{statistics.mean(recalls):.3f}, over cosine >= {MEANINGFUL} "
          f"{statistics.mean(meaningful) if meaningful else float('nan'):.3f} "
          f"({len(meaningful)} prompts); per query p50 {statistics.median(times) * 1e3:.2f} ms, "
          f"p90 {times[int(0.9 * len(times))] * 1e3:.2f} ms", flush=True)
    return {"recall": statistics.mean(recalls), "p50_ms": statistics.median(times) * 1e3}


def main() -> None:
    """Measure every size."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--model", default=str(DEFAULT_MODEL))
    parser.add_argument("--turns", help="a LongMemEval file: stores of its conversation turns")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="agentctx-vecside-") as tmp:
        for size in (int(s) for s in args.sizes.split(",") if s):
            measure(size, Path(args.model), Path(tmp), Path(args.turns) if args.turns else None)


if __name__ == "__main__":
    main()
