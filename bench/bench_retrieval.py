"""Retrieval quality and latency: the per-prompt judgement on the evaluation projects, the
coding-memory benchmark and LongMemEval_S, side by side.

Runs what ``agentctx bench projects``, ``agentctx bench coding`` and ``agentctx bench longmemeval``
run (fresh stores in a temporary folder; the user's store is never touched) and prints the reports:

* the per-prompt judgement on every project's tuning prompts, before and after consolidation
  (the held-out prompts are scored on request only, ``--held-out``: once, at the end of a round);

* the coding-memory benchmark shipped in the package — tuning and held-out prompts reported
  separately, with the issue's held-out targets checked;
* LongMemEval_S — the subset in ``../shared/data/longmemeval`` when present (or ``--data PATH``);
  when no file is found it says how to get one and skips, it does not fail.

The hybrid configurations use ``../shared/models/minilm-static-256`` when present (``--model``
overrides; without a model they are reported unavailable).

Usage: ``.venv/bin/python bench/bench_retrieval.py [--model PATH] [--data PATH]
[--skip-longmemeval] [--held-out] [--json]``
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agentctx.benchmarks import coding, eval_judgement, longmemeval

REPO = Path(__file__).resolve().parent.parent
DEFAULT_MODEL = REPO.parent / "shared" / "models" / "minilm-static-256"


def _progress(number: int, total: int, question_id: str) -> None:
    if number == 1 or number % 10 == 0 or number == total:
        print(f"  longmemeval: question {number}/{total} ({question_id})", file=sys.stderr,
              flush=True)


def main(argv: list[str] | None = None) -> int:
    """Run both retrieval benchmarks and print their tables; returns the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=str(DEFAULT_MODEL) if DEFAULT_MODEL.is_dir() else None,
                        help="model2vec folder for the hybrid configurations")
    parser.add_argument("--data", default=None, help="LongMemEval_S JSON file")
    parser.add_argument("--skip-longmemeval", action="store_true")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--held-out", action="store_true",
                        help="score the projects' held-out prompts (once, at the end of a round)")
    args = parser.parse_args(argv)

    document: dict[str, Any] = {}
    started = time.perf_counter()
    judged = eval_judgement.run(split="held-out" if args.held_out else "tuning",
                                model_path=args.model)
    document["projects"] = eval_judgement.to_json(judged)
    document["projects"]["seconds"] = round(time.perf_counter() - started, 2)
    if not args.json:
        print(eval_judgement.render(judged))
        print(f"(evaluation projects: {document['projects']['seconds']:.1f} s)\n", flush=True)
    started = time.perf_counter()
    report = coding.run(model_path=args.model)
    document["coding"] = coding.to_json(report)
    document["coding"]["seconds"] = round(time.perf_counter() - started, 2)
    if not args.json:
        print(coding.render(report))
        print(f"(coding benchmark: {document['coding']['seconds']:.1f} s)\n", flush=True)

    if args.skip_longmemeval:
        document["longmemeval"] = {"skipped": "--skip-longmemeval"}
    else:
        try:
            path = longmemeval.find_data(args.data)
        except longmemeval.DataMissing as exc:
            document["longmemeval"] = {"skipped": str(exc)}
            if not args.json:
                print(f"LongMemEval_S skipped: {exc}")
        else:
            started = time.perf_counter()
            lme = longmemeval.run(path, model_path=args.model, progress=_progress)
            document["longmemeval"] = longmemeval.to_json(lme)
            document["longmemeval"]["seconds"] = round(time.perf_counter() - started, 2)
            if not args.json:
                print(longmemeval.render(lme))
                print(f"(LongMemEval_S: {document['longmemeval']['seconds']:.1f} s)")
    if args.json:
        print(json.dumps(document, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
