"""The evaluation projects: histories of other kinds of software, with prompts labelled by kind.

Each project lives in ``agentctx/benchmarks/data/projects/<name>/``:

* ``history.json`` — ten months of the project in the coding benchmark's history format
  (:func:`agentctx.benchmarks.coding_data.load_history`), with a sibling project whose records
  must never be shown;
* ``queries_tuning.json`` and ``queries_heldout.json`` — the prompts of the day after the last
  session, each labelled with the records that answer it and its ``kind``
  (:data:`ANSWERABLE_KINDS`, :data:`UNANSWERABLE_KINDS`).

Every project was written by an author who had read neither agentctx's code nor its benchmark
files, from a one-page description of the format and of the prompt kinds. The prompts were split
before anything was run: :func:`split_by_kind` holds out 30% of every (kind, stratum) group with a
fixed seed, and the held-out files are scored once, never studied.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from agentctx.benchmarks import coding_data as data

PROJECTS_DIR = data.DATA_DIR / "projects"
SPLIT_SEED = 20261201
HELD_OUT_SHARE = 0.3

# Prompts some record answers, by how they are phrased.
ANSWERABLE_KINDS: dict[str, str] = {
    "terse": "a few words",
    "chatty": "long and conversational, with context, asides and hedging",
    "pasted_error": "an error message or stack trace, then a short question",
    "file_path": "names a file or folder path of the records",
    "paraphrase": "asks for a record's content in other words, no distinctive word shared",
    "temporal": "a time phrase (yesterday, last week, at the start of the project)",
}
# Prompts no record answers, by why.
UNANSWERABLE_KINDS: dict[str, str] = {
    "ack": "acknowledgements and chit-chat",
    "generic": "a generic programming question unrelated to the recorded facts",
    "edit": "a small edit of the code on screen",
    "same_domain": "a question about the project that no record answers, sharing its nouns",
    "neighbour": "a topic next to a recorded one, with a near-identical word",
    "sibling": "answered only by the sibling project's records",
}
KINDS = {**ANSWERABLE_KINDS, **UNANSWERABLE_KINDS}
SPLITS = ("tuning", "held-out")
_FILES = {"tuning": "queries_tuning.json", "held-out": "queries_heldout.json"}


class EvalProject(NamedTuple):
    """One evaluation project's files."""

    name: str
    folder: Path

    @property
    def history_path(self) -> Path:
        """The project's scripted history."""
        return self.folder / "history.json"

    def queries_path(self, split: str) -> Path:
        """The prompt file of ``split`` (``tuning`` or ``held-out``)."""
        if split not in _FILES:
            raise ValueError(f"unknown split {split!r}; expected one of {', '.join(SPLITS)}")
        return self.folder / _FILES[split]


def eval_projects(root: Path = PROJECTS_DIR) -> list[EvalProject]:
    """Every evaluation project under ``root``, by name."""
    if not root.is_dir():
        return []
    return [EvalProject(folder.name, folder) for folder in sorted(root.iterdir())
            if (folder / "history.json").is_file()]


def check_kinds(queries: Sequence[data.BenchQuery]) -> None:
    """Raise :class:`~agentctx.benchmarks.coding_data.DataError` unless every prompt has a known
    kind that agrees with whether it has answers."""
    problems = []
    for query in queries:
        if query.kind not in KINDS:
            problems.append(f"{query.id}: unknown kind {query.kind!r}")
        elif (query.kind in ANSWERABLE_KINDS) != query.answerable:
            problems.append(f"{query.id}: kind {query.kind} "
                            f"{'needs' if query.kind in ANSWERABLE_KINDS else 'takes no'} answers")
    if problems:
        raise data.DataError("evaluation queries: " + "; ".join(problems))


def split_by_kind(queries: Sequence[data.BenchQuery], seed: int = SPLIT_SEED,
                  share: float = HELD_OUT_SHARE) -> tuple[list[data.BenchQuery],
                                                          list[data.BenchQuery]]:
    """``(tuning, held_out)``: ``share`` of every (kind, stratum) group, drawn with
    ``random.Random(seed)``; both lists in id order. Deterministic for the same queries."""
    rng = random.Random(seed)
    groups: dict[tuple[str, str], list[str]] = {}
    for query in queries:
        groups.setdefault((query.kind, data.stratum(query)), []).append(query.id)
    held: set[str] = set()
    for key in sorted(groups):
        members = sorted(groups[key])
        rng.shuffle(members)
        held.update(members[:round(share * len(members))])
    ordered = sorted(queries, key=lambda q: q.id)
    return [q for q in ordered if q.id not in held], [q for q in ordered if q.id in held]


def query_file(split: str, queries: Sequence[data.BenchQuery], note: str) -> dict[str, object]:
    """The JSON document of one split's prompt file."""
    return {"format": 1, "split": split, "note": note,
            "queries": [q.to_json() for q in queries]}
