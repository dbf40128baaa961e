"""CLAUDE.md drift: the scan's quality on labelled fixtures, and its speed against a bare baseline.

**Quality.** Every fixture under ``bench/data/drift/<split>/<fixture>/`` (``records.json``,
``memory/``, ``labels.json``; the format is :mod:`agentctx.benchmarks.eval_drift`) is loaded into a
fresh store and scanned, for each split that exists (``tuning``, ``heldout``) and two
configurations: keywords only, and keywords with the vectors of ``../shared/models/
minilm-static-256`` (``--model``; skipped when absent). Per split:

* **false-positive rate** on ``all_present`` fixtures — current checked records flagged missing or
  contradicted although the files state them in other words (target ≤ 10%);
* **recall** on ``drifted`` fixtures — records labelled missing or contradicted that the scan
  flags as either (target ≥ 90%); also the share flagged with the labelled class, present records
  of drifted fixtures flagged, and stale text found;

each with its 95% Wilson interval.

**Speed.** A synthetic project of ``--decisions`` (1,000) current decisions (a tenth of them with
a superseded version) and memory files of a few hundred lines (CLAUDE.md, rules files and
imports). Interleaved in one process, ``--runs`` times:

* ``baseline`` — reading the memory files (:func:`agentctx.drift.memfiles.discover`: entry points
  and imports), indexing their lines in an in-memory FTS5 table, and one FTS5 ``MATCH`` per
  decision (its terms OR-ed, best 5) — the decisions' query strings prepared beforehand;
* ``scan`` — the whole drift scan as ``agentctx sync`` runs it, from a cold stem cache: records
  and chains read from the store, files read and parsed, coverage and classification (nothing
  stored); and ``scan+vectors`` with the model when it is available, the records embedded
  beforehand as consolidation leaves them (the scan reads their vectors and embeds the files).

It prints medians and the ratio to the baseline (target: the scan ≤ 3×). The exit code is 1 when
a target is missed.

**Superseded text.** The fixtures under ``bench/data/drift-superseded/<split>/`` (``--superseded``)
label every statement of a superseded record's text in their memory files (a case: the record
in force, the older version stated, contradicted or stale, the file, the form — verbatim, in
backticks, inflected, a path, a paraphrase, a list item, a table row). Per split and
configuration: the cases found (a candidate names the stated record in that file; target
≥ 90%) and found with the labelled class (≥ 80%), per class and per form; present decisions
flagged (≤ 10%); missing decisions flagged as missing.

``--splits tuning`` scores one split only (the held-out split is scored once, at the end of a
change).

Usage: ``.venv/bin/python bench/bench_drift.py [--data bench/data/drift] [--superseded DIR]
[--splits tuning,heldout] [--model PATH] [--no-vectors] [--decisions 1000] [--runs 11]
[--misses] [--json]``
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agentctx.benchmarks import eval_drift as bench
from agentctx.drift import memfiles
from agentctx.drift.coverage import Embedder
from bench.synth import COMMANDS, NOUNS, REASONS, SUFFIXES, TECH

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO / "bench" / "data" / "drift"
DEFAULT_SUPERSEDED = REPO / "bench" / "data" / "drift-superseded"
DEFAULT_MODEL = REPO.parent / "shared" / "models" / "minilm-static-256"
SPLITS = ("tuning", "heldout")
MAX_FALSE_POSITIVE = 0.10
MIN_RECALL = 0.90
MAX_SPEED_RATIO = 3.0
MIN_SUPERSEDED_FOUND = 0.90
MIN_SUPERSEDED_CLASS = 0.80
MAX_PRESENT_FLAGGED = 0.10


# ----------------------------------------------------------------------------- quality


def quality(data: Path, encoders: dict[str, Embedder | None], misses: bool,
            splits: tuple[str, ...] = SPLITS) -> tuple[dict[str, Any], list[str]]:
    """Score every split under ``data`` in every configuration; returns the report and misses."""
    report: dict[str, Any] = {}
    failures: list[str] = []
    for split in splits:
        fixtures = bench.load_split(data / split)
        if not fixtures:
            print(f"{split}: no fixtures in {data / split}")
            continue
        kinds = {kind: sum(1 for f in fixtures if f.kind == kind) for kind in bench.KINDS}
        print(f"\n{split}: {len(fixtures)} fixtures ({kinds['all_present']} all_present, "
              f"{kinds['drifted']} drifted)")
        report[split] = {}
        for name, encoder in encoders.items():
            began = time.perf_counter()
            outcomes = [bench.evaluate(f, encoder=encoder) for f in fixtures]
            summary = bench.summarize(outcomes)
            seconds = time.perf_counter() - began
            fp, recall = summary.false_positive, summary.recall
            fp_ok = fp.total == 0 or fp.value <= MAX_FALSE_POSITIVE
            recall_ok = recall.total == 0 or recall.value >= MIN_RECALL
            print(f"  {name}  ({seconds:.1f} s)")
            print(f"    false positives (all_present)   {fp}   target <= "
                  f"{MAX_FALSE_POSITIVE:.0%}: {'met' if fp_ok else 'NOT met'}")
            print(f"    recall missing+contradicted     {recall}   target >= "
                  f"{MIN_RECALL:.0%}: {'met' if recall_ok else 'NOT met'}")
            print(f"    flagged with the right class    {summary.class_exact}")
            print(f"    present flagged (drifted)       {summary.drifted_false_positive}")
            print(f"    stale found / stale flags right {summary.stale_recall} / "
                  f"{summary.stale_precision}")
            for outcome in outcomes:
                ids = list(outcome.labels)
                wanted = [i for i, label in outcome.labels.items() if label in bench.FLAGS]
                flagged_present = outcome.flagged([i for i in ids
                                                   if outcome.labels[i] == "present"])
                print(f"      {outcome.name:<24} {outcome.kind:<12} present flagged "
                      f"{flagged_present}/{len(ids) - len(wanted)}, drift found "
                      f"{outcome.flagged(wanted)}/{len(wanted)}")
            if misses:
                for line in bench.misses(outcomes):
                    print(f"      miss: {line}")
            report[split][name] = {
                "fixtures": summary.fixtures,
                "false_positive": _rate(fp), "recall": _rate(recall),
                "class_exact": _rate(summary.class_exact),
                "drifted_false_positive": _rate(summary.drifted_false_positive),
                "stale_recall": _rate(summary.stale_recall),
                "stale_precision": _rate(summary.stale_precision),
                "seconds": round(seconds, 2)}
            if not fp_ok:
                failures.append(f"{split}/{name}: false positives {fp.value:.3f}")
            if not recall_ok:
                failures.append(f"{split}/{name}: recall {recall.value:.3f}")
    return report, failures


def superseded(data: Path, encoders: dict[str, Embedder | None], misses: bool,
               splits: tuple[str, ...] = SPLITS) -> tuple[dict[str, Any], list[str]]:
    """Score the superseded-text fixtures of each split (see the module docstring)."""
    report: dict[str, Any] = {}
    failures: list[str] = []
    for split in splits:
        fixtures = bench.load_split(data / split)
        if not fixtures:
            print(f"superseded {split}: no fixtures in {data / split}")
            continue
        cases = sum(len(f.cases) for f in fixtures)
        print(f"\nsuperseded text, {split}: {len(fixtures)} fixtures, {cases} statements of "
              "superseded text")
        report[split] = {}
        for name, encoder in encoders.items():
            began = time.perf_counter()
            outcomes = [bench.evaluate(f, encoder=encoder) for f in fixtures]
            s = bench.summarize(outcomes)
            checks = [("found (contradicted or stale)", s.superseded_found, MIN_SUPERSEDED_FOUND,
                       True),
                      ("found with the right class", s.superseded_class, MIN_SUPERSEDED_CLASS,
                       True),
                      ("present decisions flagged", s.drifted_false_positive,
                       MAX_PRESENT_FLAGGED, False)]
            print(f"  {name}  ({time.perf_counter() - began:.1f} s)")
            for label, rate, target, at_least in checks:
                met = rate.total == 0 or (rate.value >= target if at_least
                                          else rate.value <= target)
                sign = ">=" if at_least else "<="
                print(f"    {label:<31} {rate}   target {sign} {target:.0%}: "
                      f"{'met' if met else 'NOT met'}")
                if not met:
                    failures.append(f"superseded {split}/{name}: {label} {rate.value:.3f}")
            print(f"    missing flagged as missing      {s.missing_recall}")
            print(f"    missing or contradicted flagged {s.recall} (right class "
                  f"{s.class_exact.value:.3f})")
            for label, found, right in s.by_class:
                print(f"      {label:<14} found {found}  right class {right}")
            for label, found, right in s.by_form:
                print(f"      {label:<14} found {found}  right class {right}")
            if misses:
                for line in bench.misses(outcomes):
                    print(f"      miss: {line}")
            report[split][name] = {
                "cases": cases, "found": _rate(s.superseded_found),
                "right_class": _rate(s.superseded_class),
                "present_flagged": _rate(s.drifted_false_positive),
                "missing_recall": _rate(s.missing_recall), "recall": _rate(s.recall),
                "by_class": {k: {"found": _rate(f), "right_class": _rate(r)}
                             for k, f, r in s.by_class},
                "by_form": {k: {"found": _rate(f), "right_class": _rate(r)}
                            for k, f, r in s.by_form}}
    return report, failures


def _rate(rate: bench.Rate) -> dict[str, Any]:
    low, high = rate.interval
    return {"value": round(rate.value, 4), "hits": rate.hits, "total": rate.total,
            "wilson95": [round(low, 4), round(high, 4)]}


# ----------------------------------------------------------------------------- speed


def synthetic_project(folder: Path, decisions: int, rng: random.Random) -> list[dict[str, Any]]:
    """Write memory files into ``folder``; return the records (fixture format) of the project."""
    components = [f"{noun.replace('_', ' ')} {suffix}" for noun in NOUNS for suffix in SUFFIXES]
    rng.shuffle(components)
    records: list[dict[str, Any]] = []
    stated: list[str] = []
    for number in range(decisions):
        component = components[number % len(components)]
        tech, other = rng.sample(TECH, 2)
        reason = rng.choice(REASONS).format(
            t=rng.choice(TECH), c=rng.choice(components), f=f"sync_{rng.choice(NOUNS)}",
            i=rng.randrange(100, 900), j=rng.randrange(2, 12))
        if number % 10 == 0:  # a superseded version first
            records.append({"id": f"old-{number}", "type": "decision",
                            "title": f"The {component} uses {other}",
                            "body": f"{other} for the {component}; run `{rng.choice(COMMANDS)}`.",
                            "confidence": "explicit"})
        record = {"id": f"d-{number}", "type": rng.choice(("decision", "convention")),
                  "title": f"The {component} uses {tech}",
                  "body": f"{tech} for the {component} because {reason}.",
                  "confidence": rng.choice(("explicit", "reinforced"))}
        if number % 10 == 0:
            record["supersedes"] = f"old-{number}"
        records.append(record)
        if rng.random() < 0.35:
            stated.append(f"- {component.capitalize()}: built on {tech} ({reason}).")
    sections: list[str] = []
    for start in range(0, len(stated), 12):
        heading = rng.choice(NOUNS).replace("_", " ").capitalize()
        sections.append(f"## {heading}\n\n" + "\n".join(stated[start:start + 12]) + "\n\n"
                        f"```bash\n{rng.choice(COMMANDS)}\n{rng.choice(COMMANDS)}\n```\n")
    half = len(sections) // 2
    (folder / ".claude" / "rules").mkdir(parents=True)
    (folder / "docs").mkdir()
    (folder / "CLAUDE.md").write_text(
        "# Synthetic project ✨\n\nSee @docs/architecture.md and @docs/commands.md.\n\n"
        + "\n".join(sections[:half]), encoding="utf-8")
    (folder / "docs" / "architecture.md").write_text(
        "# Architecture\n\n" + "\n".join(sections[half:]) + "\nBack: @../CLAUDE.md\n",
        encoding="utf-8")
    (folder / "docs" / "commands.md").write_text(
        "# Commands\n\n| Task | Command |\n|---|---|\n"
        + "\n".join(f"| {c.split()[0]} | `{c}` |" for c in COMMANDS) + "\n", encoding="utf-8")
    (folder / ".claude" / "rules" / "style.md").write_text(
        "---\npaths: src/**\n---\n# Style\n\n- Type hints everywhere.\n- Small commits.\n",
        encoding="utf-8")
    return records


def _embed(db: Any, encoder: Embedder) -> None:
    from agentctx.ml.embedder import embedding_text
    from agentctx.store import vectors

    waiting = vectors.pending(db, limit=1_000_000)
    matrix = encoder.encode([embedding_text(p.type, p.valid_from, p.project, p.title, p.body)
                             for p in waiting])
    vectors.save(db, encoder.name, list(zip(waiting, matrix, strict=True)))


def _baseline(root: Path, matches: list[str]) -> int:
    files, _missing = memfiles.discover(root)
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE lines USING fts5(text, tokenize='porter unicode61')")
    conn.executemany("INSERT INTO lines (text) VALUES (?)",
                     [(line,) for f in files for line in f.text.splitlines() if line.strip()])
    found = 0
    for match in matches:
        found += len(conn.execute("SELECT rowid FROM lines WHERE lines MATCH ? ORDER BY rank "
                                  "LIMIT 5", (match,)).fetchall())
    conn.close()
    return found


def speed(decisions: int, runs: int, encoder: Embedder | None) -> tuple[dict[str, Any], list[str]]:
    """Time the scan against the baseline on a synthetic project (see the module docstring)."""
    from agentctx import drift
    from agentctx.store import Store, stems
    from agentctx.store import projects as proj
    from agentctx.store.textproc import fts_phrase, query_terms

    with tempfile.TemporaryDirectory(prefix="agentctx-bench-drift-") as tmp:
        work = Path(tmp)
        root = work / "project"
        root.mkdir()
        records = synthetic_project(root, decisions, random.Random(18))
        fixture = bench.Fixture("synthetic", work, "synthetic", records,
                                {"kind": "drifted"})
        with Store.open(work / "agentctx.db") as db:
            project_id, _ids = bench.populate(db, fixture, root)
            project = proj.get(db, project_id)
            if encoder is not None:  # as consolidation leaves it: every record embedded
                _embed(db, encoder)
            checked = drift.scan_project(db, project, root, record=False).checked
            matches = [" OR ".join(fts_phrase(t) for t in query_terms(f"{r.title} {r.body}"))
                       for r in checked]
            sizes = [len(f.text) for f in memfiles.discover(root)[0]]
            lines = sum(f.text.count("\n") for f in memfiles.discover(root)[0])
            times: dict[str, list[float]] = {"baseline": [], "scan": []}
            if encoder is not None:
                times["scan+vectors"] = []
            flagged = 0
            for _ in range(runs):
                began = time.perf_counter()
                _baseline(root, matches)
                times["baseline"].append(time.perf_counter() - began)
                stems._CACHE.clear()  # a fresh process: agentctx sync, consolidation
                began = time.perf_counter()
                result = drift.scan_project(db, project, root, record=False)
                times["scan"].append(time.perf_counter() - began)
                flagged = result.flagged
                if encoder is not None:
                    stems._CACHE.clear()
                    began = time.perf_counter()
                    drift.scan_project(db, project, root, encoder=encoder, record=False)
                    times["scan+vectors"].append(time.perf_counter() - began)
    medians = {name: statistics.median(values) for name, values in times.items()}
    base = medians["baseline"]
    print(f"\nspeed: {len(checked):,} current decisions, memory files of {lines} lines "
          f"({sum(sizes) / 1024:.0f} KiB in {len(sizes)} files), {runs} interleaved runs; "
          f"{flagged} flagged")
    print(f"  {'path':<14}{'median ms':>11}{'ratio':>8}")
    failures: list[str] = []
    for name, value in medians.items():
        ratio = value / base
        print(f"  {name:<14}{value * 1000:>11.1f}{ratio:>7.2f}x")
        if name != "baseline" and ratio > MAX_SPEED_RATIO:
            failures.append(f"{name}: {ratio:.2f}x the baseline")
    print(f"  target: the scan <= {MAX_SPEED_RATIO:g}x the baseline: "
          + ("met" if not failures else "NOT met"))
    return {"decisions": len(checked), "memory_lines": lines, "runs": runs,
            "median_ms": {k: round(v * 1000, 2) for k, v in medians.items()},
            "ratio": {k: round(v / base, 3) for k, v in medians.items()}}, failures


# ----------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    """Run both parts; returns 1 when a target is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--superseded", type=Path, default=DEFAULT_SUPERSEDED,
                        help="Fixtures of superseded text (a folder without splits: none).")
    parser.add_argument("--splits", default=",".join(SPLITS),
                        help="Splits to score, comma-separated (tuning, heldout).")
    parser.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    parser.add_argument("--no-vectors", action="store_true")
    parser.add_argument("--decisions", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--misses", action="store_true", help="List every wrong verdict.")
    parser.add_argument("--json", action="store_true", help="Also print one JSON document.")
    args = parser.parse_args(argv)

    encoders: dict[str, Embedder | None] = {"keyword": None}
    if not args.no_vectors:
        model = _model(args.model)
        if model is not None:
            encoders[f"keyword+vectors ({args.model.name})"] = model
    splits = tuple(x for x in (part.strip() for part in args.splits.split(",")) if x)
    unknown = [x for x in splits if x not in SPLITS]
    if unknown:
        parser.error(f"unknown split {unknown[0]!r}: use {', '.join(SPLITS)}")
    quality_report, failures = quality(args.data, encoders, args.misses, splits)
    superseded_report, superseded_failures = superseded(args.superseded, encoders, args.misses,
                                                        splits)
    failures += superseded_failures
    vector = next((e for n, e in encoders.items() if e is not None), None)
    speed_report, speed_failures = speed(args.decisions, args.runs, vector)
    failures += speed_failures
    print("\nresult: " + ("every target met" if not failures
                          else "MISSED: " + "; ".join(failures)))
    if args.json:
        print(json.dumps({"quality": quality_report, "superseded": superseded_report,
                          "speed": speed_report, "failures": failures}, indent=2))
    return 1 if failures else 0


def _model(path: Path) -> Embedder | None:
    if not path.is_dir():
        print(f"{path} is missing: keyword configuration only")
        return None
    try:
        from model2vec import StaticModel

        from agentctx.ml.embedder import EmbeddingModel
    except ImportError as exc:
        print(f"no embedding model ({exc}): keyword configuration only")
        return None
    model = EmbeddingModel(str(path), StaticModel.from_pretrained(path), path)
    return Embedder(model.name, model.encode)


if __name__ == "__main__":
    sys.exit(main())
