"""The CLAUDE.md drift benchmark: fixtures of records and memory files, scored against labels.

A fixture is a folder (the format fixture authors write to):

* ``records.json`` — ``{"project": …, "records": [{"id", "type", "title", "body", "confidence",
  "supersedes"?, "why"?}, …]}``; a record named in another's ``supersedes`` is superseded;
* ``memory/`` — the project's memory files as they sit in the repository root;
* ``labels.json`` — ``{"kind": "all_present" | "drifted", "present": [ids], "missing": [ids],
  "contradicted": [ids], "stale": [ids of superseded records], "notes": …}``; every current
  decision or convention of confidence explicit or reinforced is in exactly one of present,
  missing and contradicted; optionally ``"cases"``: ``[{"current", "stated", "class", "file",
  "form"}]``, one per statement of superseded text (``stated`` an older version of ``current``,
  ``class`` contradicted or stale, ``file`` the memory file relative to ``memory/``).

:func:`evaluate` loads a fixture into a fresh store (a real SQLite file, records added and
superseded through the records API, in file order), runs the real scan on ``memory/`` and
compares. :func:`summarize` pools fixtures: the false-positive rate over all_present fixtures
(current records flagged missing or contradicted), and the recall of missing + contradicted
records on drifted fixtures, each with a 95% Wilson interval; where fixtures list cases, how
many statements of superseded text were found (a candidate names the stated record and places
it in the labelled file) and how many with the labelled class, in all, per class and per form.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, NamedTuple

from agentctx.benchmarks.metrics import wilson_interval
from agentctx.drift.coverage import DEFAULT, Embedder, Params
from agentctx.drift.scanner import CONTRADICTED, MISSING, STALE, scan
from agentctx.store import Store
from agentctx.store import projects as proj
from agentctx.store import records as rec
from agentctx.store.drift_state import CHECKED_CONFIDENCES, CHECKED_TYPES
from agentctx.store.errors import AlreadySuperseded
from agentctx.store.models import Draft

KINDS = ("all_present", "drifted")
LABELS = ("present", "missing", "contradicted")
FLAGS = ("missing", "contradicted")
CASE_CLASSES = ("contradicted", "stale")
BASE_TIME = datetime(2025, 1, 6, 9, 0, tzinfo=UTC)


class FixtureError(ValueError):
    """A fixture that does not follow the format; the message names the rule."""


class Fixture(NamedTuple):
    """A fixture as read from its folder."""

    name: str
    folder: Path
    project: str
    records: list[dict[str, Any]]
    labels: dict[str, Any]

    @property
    def memory(self) -> Path:
        """The folder of memory files (the project root the scan reads)."""
        return self.folder / "memory"

    @property
    def kind(self) -> str:
        """``all_present`` or ``drifted``."""
        return str(self.labels["kind"])

    @property
    def cases(self) -> list[dict[str, str]]:
        """The labelled statements of superseded text (empty for fixtures without them)."""
        return list(self.labels.get("cases", []))


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FixtureError(f"{path} is missing") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise FixtureError(f"{path}: {exc}") from None


def checked_ids(records: Sequence[dict[str, Any]]) -> list[str]:
    """Ids of the current decisions and conventions of confidence explicit or reinforced."""
    superseded = {r["supersedes"] for r in records if r.get("supersedes")}
    return [r["id"] for r in records if r["id"] not in superseded
            and r.get("type") in CHECKED_TYPES and r.get("confidence") in CHECKED_CONFIDENCES]


def load(folder: Path) -> Fixture:
    """Read and check one fixture folder; raises :class:`FixtureError` naming what is wrong."""
    document = _json(folder / "records.json")
    labels = _json(folder / "labels.json")
    if not isinstance(document, dict) or not isinstance(document.get("records"), list):
        raise FixtureError(f"{folder.name}: records.json needs a 'records' list")
    records: list[dict[str, Any]] = document["records"]
    seen: set[str] = set()
    for record in records:
        rid = record.get("id")
        if not isinstance(rid, str) or not rid or rid in seen:
            raise FixtureError(f"{folder.name}: record id {rid!r} is missing or repeated")
        for key in ("type", "title"):
            if not isinstance(record.get(key), str) or not record[key].strip():
                raise FixtureError(f"{folder.name}: record {rid} has no {key}")
        old = record.get("supersedes")
        if old is not None and old not in seen:
            raise FixtureError(f"{folder.name}: record {rid} supersedes {old!r}, which is not an "
                               "earlier record")
        seen.add(rid)
    if not isinstance(labels, dict) or labels.get("kind") not in KINDS:
        raise FixtureError(f"{folder.name}: labels.json kind must be one of {', '.join(KINDS)}")
    labelled = [i for key in LABELS for i in labels.get(key, [])]
    wanted = checked_ids(records)
    if sorted(labelled) != sorted(wanted):
        extra = sorted(set(labelled) - set(wanted))
        absent = sorted(set(wanted) - set(labelled))
        repeated = sorted({i for i in labelled if labelled.count(i) > 1})
        raise FixtureError(f"{folder.name}: labels must cover each checked record once "
                           f"(unexpected {extra}, unlabelled {absent}, repeated {repeated})")
    if not (folder / "memory").is_dir():
        raise FixtureError(f"{folder.name}: memory/ is missing")
    _check_cases(folder, records, labels.get("cases", []))
    return Fixture(folder.name, folder, str(document.get("project") or folder.name), records,
                   labels)


def _check_cases(folder: Path, records: Sequence[dict[str, Any]], cases: Any) -> None:
    supersedes = {r["id"]: r.get("supersedes") for r in records}
    if not isinstance(cases, list):
        raise FixtureError(f"{folder.name}: cases must be a list")
    for case in cases:
        if not isinstance(case, dict) or not all(isinstance(case.get(k), str) for k in
                                                  ("current", "stated", "class", "file")):
            raise FixtureError(f"{folder.name}: a case needs current, stated, class and file")
        older, seen = supersedes.get(case["current"]), set()
        while older is not None and older != case["stated"] and older not in seen:
            seen.add(older)
            older = supersedes.get(older)
        if older is None:
            raise FixtureError(f"{folder.name}: case {case['stated']} is not an older version "
                               f"of {case['current']}")
        if case["class"] not in CASE_CLASSES:
            raise FixtureError(f"{folder.name}: case class must be one of "
                               f"{', '.join(CASE_CLASSES)}")
        if not (folder / "memory" / case["file"]).is_file():
            raise FixtureError(f"{folder.name}: case file {case['file']} is not in memory/")


def load_split(folder: Path) -> list[Fixture]:
    """Every fixture in a split folder (one sub-folder each), sorted by name."""
    if not folder.is_dir():
        return []
    return [load(child) for child in sorted(folder.iterdir())
            if child.is_dir() and (child / "records.json").exists()]


def populate(db: Store, fixture: Fixture, root: Path | None = None) -> tuple[str, dict[str, str]]:
    """Add the fixture's records to ``db`` under the project of ``root`` (default: the fixture's
    memory folder); returns the project id and the map from fixture ids to store ids."""
    project = proj.resolve(db, str(root or fixture.memory)).project
    ids: dict[str, str] = {}
    for position, record in enumerate(fixture.records):
        moment = (BASE_TIME + timedelta(hours=position)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
        confidence = record.get("confidence", "inferred")
        draft = Draft(type=record["type"], title=record["title"], body=record.get("body", ""),
                      confidence=confidence if confidence in ("explicit", "reinforced",
                                                              "inferred") else "inferred",
                      source="import", valid_from=moment)
        added = rec.add(db, draft, project_id=project.id)
        ids[record["id"]] = added.id
        old = record.get("supersedes")
        if old:
            target = rec.get(db, ids[old])
            while target.superseded_by is not None:  # a second successor of one record
                target = rec.get(db, target.superseded_by)
            try:
                rec.supersede(db, target.id, added.id, record.get("why") or "superseded",
                              actor="import")
            except AlreadySuperseded:
                pass  # retired on the way: keep the successor as an independent record
    return project.id, ids


class CaseOutcome(NamedTuple):
    """One labelled statement of superseded text, and what the scan made of it."""

    current: str
    stated: str
    label: str  # contradicted | stale
    form: str
    file: str
    found: str | None  # the class of the candidate naming ``stated`` in ``file``; None: not found


class Outcome(NamedTuple):
    """One fixture scored."""

    name: str
    kind: str
    predicted: dict[str, str]  # fixture id -> present | missing | contradicted
    labels: dict[str, str]
    stale_predicted: frozenset[str]
    stale_labelled: frozenset[str]
    seconds: float
    cases: tuple[CaseOutcome, ...] = ()

    def flagged(self, ids: Sequence[str]) -> int:
        """How many of ``ids`` the scan flagged (missing or contradicted)."""
        return sum(1 for i in ids if self.predicted.get(i) in FLAGS)


def evaluate(fixture: Fixture, *, params: Params = DEFAULT, encoder: Embedder | None = None,
             work: Path | None = None) -> Outcome:
    """Load ``fixture`` into a fresh store, scan its memory files and compare with its labels."""

    with tempfile.TemporaryDirectory(dir=work, ignore_cleanup_errors=True) as folder, \
            Store.open(Path(folder) / "drift.db") as db:
        project_id, ids = populate(db, fixture)
        back = {store_id: fid for fid, store_id in ids.items()}
        began = time.perf_counter()
        result = scan(db, proj.get(db, project_id), fixture.memory, encoder=encoder,
                      params=params)
        seconds = time.perf_counter() - began
    labels = {i: key for key in LABELS for i in fixture.labels.get(key, [])}
    predicted = dict.fromkeys(labels, "present")
    stale: set[str] = set()
    # (stated fixture id, file) -> the classes of the candidates placing that text there
    placed: dict[tuple[str, str], set[str]] = {}
    for candidate in result.candidates:
        fid = back.get(candidate.id)
        if fid is None:
            continue
        if candidate.kind in (MISSING, CONTRADICTED) and fid in predicted:
            predicted[fid] = candidate.kind
        elif candidate.kind == STALE:
            stale.add(fid)
        if candidate.stated is not None:
            stated = back.get(candidate.stated, candidate.stated)
            for unit in candidate.units:
                placed.setdefault((stated, result.memory.units[unit].file), set()).add(
                    candidate.kind)
    cases = []
    for case in fixture.cases:
        classes = placed.get((case["stated"], case["file"]), set())
        found = case["class"] if case["class"] in classes else min(classes, default=None)
        cases.append(CaseOutcome(case["current"], case["stated"], case["class"],
                                 case.get("form", ""), case["file"], found))
    return Outcome(fixture.name, fixture.kind, predicted, labels, frozenset(stale),
                   frozenset(fixture.labels.get("stale", [])), seconds, tuple(cases))


class Rate(NamedTuple):
    """A proportion with its 95% Wilson interval."""

    hits: int
    total: int

    @property
    def value(self) -> float:
        """The share (0 when there is nothing to count)."""
        return self.hits / self.total if self.total else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        """The 95% Wilson interval ((0, 1) when there is nothing to count)."""
        return wilson_interval(self.hits, self.total) if self.total else (0.0, 1.0)

    def __str__(self) -> str:
        low, high = self.interval
        return f"{self.value:.3f} ({self.hits}/{self.total}; 95% {low:.2f}-{high:.2f})"


class Summary(NamedTuple):
    """A split's pooled numbers."""

    fixtures: int
    false_positive: Rate  # all_present: current records flagged
    recall: Rate  # drifted: missing + contradicted records flagged
    class_exact: Rate  # drifted: flagged with the labelled class
    drifted_false_positive: Rate  # drifted: records labelled present but flagged
    stale_recall: Rate
    stale_precision: Rate
    missing_recall: Rate = Rate(0, 0)  # drifted: records labelled missing flagged missing
    superseded_found: Rate = Rate(0, 0)  # cases: the stated text found (either class)
    superseded_class: Rate = Rate(0, 0)  # cases: found with the labelled class
    # per class ("contradicted", "stale") and per form: (name, found, with the labelled class)
    by_class: tuple[tuple[str, Rate, Rate], ...] = ()
    by_form: tuple[tuple[str, Rate, Rate], ...] = ()


def summarize(outcomes: Sequence[Outcome]) -> Summary:
    """Pool outcomes of one split (see the module docstring)."""
    fp = recall = exact = dfp = Rate(0, 0)
    stale_hit = stale_total = stale_flagged = 0
    for o in outcomes:
        if o.kind == "all_present":
            ids = list(o.labels)
            fp = Rate(fp.hits + o.flagged(ids), fp.total + len(ids))
        else:
            wanted = [i for i, label in o.labels.items() if label in FLAGS]
            recall = Rate(recall.hits + o.flagged(wanted), recall.total + len(wanted))
            exact = Rate(exact.hits + sum(1 for i in wanted if o.predicted[i] == o.labels[i]),
                         exact.total + len(wanted))
            present = [i for i, label in o.labels.items() if label == "present"]
            dfp = Rate(dfp.hits + o.flagged(present), dfp.total + len(present))
        stale_hit += len(o.stale_predicted & o.stale_labelled)
        stale_total += len(o.stale_labelled)
        stale_flagged += len(o.stale_predicted)
    missing = [(o, i) for o in outcomes if o.kind != "all_present"
               for i, label in o.labels.items() if label == "missing"]
    cases = [c for o in outcomes for c in o.cases]
    return Summary(len(outcomes), fp, recall, exact, dfp, Rate(stale_hit, stale_total),
                   Rate(stale_hit, stale_flagged),
                   Rate(sum(1 for o, i in missing if o.predicted[i] == "missing"), len(missing)),
                   *_case_rates(cases),
                   tuple((k, *_case_rates([c for c in cases if c.label == k]))
                         for k in CASE_CLASSES if any(c.label == k for c in cases)),
                   tuple((k, *_case_rates([c for c in cases if c.form == k]))
                         for k in sorted({c.form for c in cases})))


def _case_rates(cases: Sequence[CaseOutcome]) -> tuple[Rate, Rate]:
    """How many of ``cases`` were found, and how many with the labelled class."""
    return (Rate(sum(1 for c in cases if c.found is not None), len(cases)),
            Rate(sum(1 for c in cases if c.found == c.label), len(cases)))


def misses(outcomes: Sequence[Outcome]) -> list[str]:
    """One line per wrong verdict (for tuning): fixture, record, labelled and predicted class."""
    lines: list[str] = []
    for o in outcomes:
        for fid, label in o.labels.items():
            got = o.predicted[fid]
            if (label in FLAGS) != (got in FLAGS) or (label in FLAGS and got != label):
                lines.append(f"{o.name}: {fid} labelled {label}, scanned {got}")
        for fid in sorted(o.stale_labelled - o.stale_predicted):
            lines.append(f"{o.name}: {fid} labelled stale, not flagged")
        for fid in sorted(o.stale_predicted - o.stale_labelled):
            lines.append(f"{o.name}: {fid} flagged stale, not labelled")
        for case in o.cases:
            if case.found != case.label:
                lines.append(f"{o.name}: {case.stated} ({case.form}, {case.file}) for "
                             f"{case.current} labelled {case.label}, "
                             f"{'found ' + case.found if case.found else 'not found'}")
    return lines
