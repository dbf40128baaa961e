"""Fit the per-prompt evidence model (``agentctx/context/evidence.py``) on the tuning prompts only.

Builds, as ``agentctx bench projects`` does after consolidation, a store for the coding
benchmark's history (its five tuning files) and for each evaluation project (its tuning file),
gathers every prompt's candidates exactly as the per-prompt judgement does
(:func:`agentctx.context.judgement.candidates`: the keyword hits and the nearest records by
meaning) and describes each with :func:`agentctx.context.evidence.features`; a candidate is a
positive when it is one of the prompt's labelled answers. Held-out files are never read.

It then fits two logistic models with L2 regularisation by Newton's method (numpy only): one with
the semantic features (stores with embeddings), one without (keyword-only stores), and reports
each with leave-one-project-out predictions: the share of answerable prompts whose answer a
policy would show (in full at probability >= FULL, as a pointer from the gate on) against the
share of unanswerable prompts left clean, for a grid of thresholds. The weights it prints are
what ``agentctx/context/evidence.py`` holds (rounded).

Usage: ``.venv/bin/python bench/fit_evidence.py [--model ../shared/models/minilm-static-256]``
"""

from __future__ import annotations

import argparse
import pickle
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agentctx.benchmarks import coding_data as data
from agentctx.benchmarks import eval_judgement, retrieval
from agentctx.benchmarks import eval_projects as projects
from agentctx.context import evidence, judgement
from agentctx.store.db import Store

CANDIDATES = 10
DEFAULT_MODEL = Path(__file__).resolve().parent.parent.parent / "shared" / "models" / \
    "minilm-static-256"
SEMANTIC_ONLY = ("cosine", "cosine_margin", "vector_rank", "both", "vector_only", "meaning")


class Row:
    """One candidate: its features, whether it answers, and its prompt."""

    def __init__(self, group: str, prompt_id: str, found: evidence.Features, positive: bool,
                 answerable: bool) -> None:
        self.group, self.prompt_id, self.found = group, prompt_id, found
        self.positive, self.answerable = positive, answerable


def collect(model_path: str) -> list[Row]:
    """Every tuning prompt's candidates, with the consolidated store users would have."""
    cfg = eval_judgement.user_config(model_path)
    embedder = retrieval.load_embedder(model_path, cfg)
    if not isinstance(embedder, retrieval.Embedder):
        raise SystemExit(f"cannot load the model: {embedder.reason}")
    sets: list[tuple[str, Path, list[Path]]] = [
        ("ledgerline", data.HISTORY_PATH, [data.SPLIT_FILES[s] for s in data.TUNING_SPLITS])]
    sets += [(p.name, p.history_path, [p.queries_path("tuning")])
             for p in projects.eval_projects()]
    rows: list[Row] = []
    for name, history_path, query_paths in sets:
        history = data.load_history(history_path)
        queries = [q for path in query_paths for q in data.load_queries(path)]
        with tempfile.TemporaryDirectory(prefix="agentctx-fit-") as folder:
            db = Store.open(Path(folder) / "fit.db")
            try:
                built = data.build(db, history, Path(folder) / "projects")
                retrieval.consolidate(db, embedder, cfg)
                knobs = judgement.settings(cfg)
                for query in queries:
                    rows += _rows(db, built, name, query, knobs)
            finally:
                db.close()
        print(f"{name}: {len(queries)} prompts", file=sys.stderr)
    return rows


def _rows(db: Store, built: data.Built, group: str, query: data.BenchQuery,
          knobs: judgement.Settings) -> list[Row]:
    found = judgement.candidates(db, built.project_id, query.prompt, knobs)
    described = evidence.features(query.prompt, found.hits, found.cosines, found.terms,
                                  found.vector_ranks)
    answers = set(query.answers)
    return [Row(group, f"{group}/{query.id}", f, built.keys.get(h.record.id) in answers,
                query.answerable) for h, f in zip(found.hits, described, strict=True)]


def matrix(rows: Sequence[Row], drop: Sequence[str] = ()) -> np.ndarray[Any, Any]:
    """The feature matrix (columns in ``Features`` order, ``drop`` zeroed)."""
    names = evidence.Features._fields
    return np.array([[0.0 if n in drop else float(v) for n, v in zip(names, r.found,
                                                                     strict=True)]
                     for r in rows])


def fit(x: np.ndarray[Any, Any], y: np.ndarray[Any, Any], l2: float = 1.0,
        steps: int = 50) -> tuple[np.ndarray[Any, Any], float]:
    """Logistic regression with an L2 penalty on the weights (not the intercept), by Newton."""
    design = np.hstack([x, np.ones((len(x), 1))])
    beta = np.zeros(design.shape[1])
    penalty = np.full(design.shape[1], l2)
    penalty[-1] = 0.0
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-design @ beta))
        gradient = design.T @ (p - y) + penalty * beta
        hessian = (design * (p * (1 - p))[:, None]).T @ design + np.diag(penalty)
        step = np.linalg.solve(hessian + 1e-9 * np.eye(len(beta)), gradient)
        beta -= step
        if np.abs(step).max() < 1e-8:
            break
    return beta[:-1], float(beta[-1])


def held_out_probabilities(rows: Sequence[Row], drop: Sequence[str]) -> np.ndarray[Any, Any]:
    """Each row's probability from a model fitted without its project (leave one out)."""
    x, y = matrix(rows, drop), np.array([r.positive for r in rows], dtype=float)
    groups = np.array([r.group for r in rows])
    out = np.zeros(len(rows))
    for group in sorted(set(groups)):
        weights, intercept = fit(x[groups != group], y[groups != group])
        out[groups == group] = 1.0 / (1.0 + np.exp(-(x[groups == group] @ weights + intercept)))
    return out


def curve(rows: Sequence[Row], probabilities: np.ndarray[Any, Any]) -> list[str]:
    """The policy's outcome for a grid of (full, gate, pointer floor) thresholds."""
    by_prompt: dict[str, list[tuple[float, bool]]] = {}
    answerable: dict[str, bool] = {}
    for row, p in zip(rows, probabilities, strict=True):
        by_prompt.setdefault(row.prompt_id, []).append((float(p), row.positive))
        answerable[row.prompt_id] = row.answerable
    lines = []
    for full in (0.25, 0.3, 0.35, 0.4):
        for gate in (0.1, 0.15, 0.2, 0.25):
            found = found_full = clean = clean_full = asked = unasked = 0
            for prompt, candidates in by_prompt.items():
                ranked = sorted(candidates, reverse=True)
                shown = ranked[:3] if ranked and ranked[0][0] >= gate else []
                if answerable[prompt]:
                    asked += 1
                    found += any(pos for _p, pos in shown)
                    found_full += any(pos for p, pos in shown if p >= full)
                else:
                    unasked += 1
                    clean += not shown
                    clean_full += not any(p >= full for p, _pos in shown)
            lines.append(f"full>={full:.2f} gate>={gate:.2f}: recall@3 {found / asked:.3f} "
                         f"(full {found_full / asked:.3f}); unanswerable clean "
                         f"{clean / unasked:.3f} (no full record {clean_full / unasked:.3f})")
    return lines


def main(argv: list[str] | None = None) -> int:
    """Collect, fit and report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=str(DEFAULT_MODEL))
    parser.add_argument("--rows", help="keep the collected candidates in this file and read "
                        "them from it next time (to compare features without rebuilding)")
    args = parser.parse_args(argv)
    if args.rows and Path(args.rows).is_file():
        with open(args.rows, "rb") as handle:
            rows = pickle.load(handle)
    else:
        rows = collect(args.model)
        if args.rows:
            with open(args.rows, "wb") as handle:
                pickle.dump(rows, handle)
    y = np.array([r.positive for r in rows], dtype=float)
    prompts = len({r.prompt_id for r in rows})
    print(f"{len(rows)} candidates of {prompts} tuning prompts ({int(y.sum())} answers)")
    # A keyword-only store has no candidates by meaning: its model sees the keyword hits only.
    keyword_rows = [r for r in rows if not r.found.vector_only]
    for label, drop, fitted in (("SEMANTIC", (), rows), ("KEYWORD", SEMANTIC_ONLY, keyword_rows)):
        y = np.array([r.positive for r in fitted], dtype=float)
        weights, intercept = fit(matrix(fitted, drop), y)
        named = ", ".join(f"{n}={w:.2f}" for n, w in zip(evidence.Features._fields, weights,
                                                          strict=True))
        print(f"\n{label}: Features({named}), intercept {intercept:.2f}")
        print("leave-one-project-out:")
        for line in curve(fitted, held_out_probabilities(fitted, drop)):
            print("  " + line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
