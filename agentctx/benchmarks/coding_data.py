"""The coding-memory benchmark's data: a scripted project history, labelled prompts, the split.

Files (in ``agentctx/benchmarks/data/``, shipped in the wheel):

* ``coding_history.json`` — "ledgerline", a fictional B2B invoicing service, as scripted sessions
  over about nine months: every record type, changed facts as supersession chains (each successor
  names the record it ``supersedes`` and ``why``), file links, global developer preferences, and a
  sibling project (``other_projects``) whose records must never show up. Records carry stable
  keys (``id``); the store's own ULIDs differ on every build.
* ``coding_queries_tuning.json`` / ``coding_queries_heldout.json`` — prompts as a developer types
  them, each labelled with the keys of the records that answer it (``answers``; empty for a prompt
  nothing in the store answers) and whether it asks about the current state of something that
  changed (``about_change``). The held-out file is scored but never looked at while tuning.
* ``coding_queries_tuning2.json`` — 86 more prompts (56 unanswerable), written after the first
  round of tuning: 18 unanswerable tuning prompts had all come out clean while the held-out file
  still leaked one, so the threshold had fit them. These measure precision on prompts the first
  round never saw, and have been tuning data since; they are not part of the split.
* ``coding_queries_tuning3.json`` — 53 more (38 unanswerable), written after the second round,
  for the same purpose; its note records the two labels corrected after scoring.
* ``coding_queries_tuning4.json`` — 100 more (65 unanswerable), written after the third round by
  an author who had not read the search code: longer prompts, symptoms first, as people chat.
* ``coding_queries_tuning5.json`` — 110 more (75 unanswerable), written after the fourth, the
  same way; many unanswerable prompts name a library the store records but ask what it does not
  say.

The split is random but fixed: :func:`split_queries` with :data:`SPLIT_SEED` puts 30% of each
stratum (answerable about a change, other answerable, unanswerable) in the held-out file; a test
checks that the committed files are exactly that split.

Dates: session ``day`` counts from the start of the history (``span_days`` is the last session's
day). :func:`build` dates the history relative to the moment of the run — the last session one to
two days before it — so every record has the same age in every run. Search ranks by recency
measured from now; fixed ages keep every run's numbers comparable.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, NamedTuple

from agentctx.core.ids import to_iso
from agentctx.store import graph, projects, records, sessions
from agentctx.store.db import Store
from agentctx.store.models import GLOBAL_PROJECT, RECORD_TYPES, Draft

DATA_DIR = Path(__file__).resolve().parent / "data"
HISTORY_PATH = DATA_DIR / "coding_history.json"
TUNING_PATH = DATA_DIR / "coding_queries_tuning.json"
# Prompts written after the first round of tuning (more unanswerable ones than the split gave),
# when the held-out precision showed the threshold had fit the first tuning file. Tuning data.
TUNING_2_PATH = DATA_DIR / "coding_queries_tuning2.json"
# Prompts written after the second round (relevance weights, semantic check, intent fix).
TUNING_3_PATH = DATA_DIR / "coding_queries_tuning3.json"
# Prompts written after the third round, by an author who had not read the search code.
TUNING_4_PATH = DATA_DIR / "coding_queries_tuning4.json"
TUNING_5_PATH = DATA_DIR / "coding_queries_tuning5.json"
HELD_OUT_PATH = DATA_DIR / "coding_queries_heldout.json"
SPLIT_SEED = 20260808
HELD_OUT_SHARE = 0.3
# Every split and its file; only "held-out" is never studied.
SPLIT_FILES = {"tuning": TUNING_PATH, "tuning-2": TUNING_2_PATH, "tuning-3": TUNING_3_PATH,
               "tuning-4": TUNING_4_PATH, "tuning-5": TUNING_5_PATH, "held-out": HELD_OUT_PATH}
TUNING_SPLITS = ("tuning", "tuning-2", "tuning-3", "tuning-4", "tuning-5")
# Day 0 of the history is this many days (plus span_days) before the run: the last session, on
# day span_days, starts one to two days before the run.
ANCHOR_DAYS = 2
# Minutes between two records written in the same session.
RECORD_SPACING_MIN = 5


class DataError(ValueError):
    """The benchmark's data files are malformed or inconsistent; the message says where."""


class RecordSpec(NamedTuple):
    """One scripted record."""

    key: str
    type: str
    title: str
    body: str
    confidence: str
    scope: str
    store_key: str | None
    files: tuple[str, ...]
    supersedes: str | None
    why: str | None
    pinned: bool


class SessionSpec(NamedTuple):
    """One scripted session: when it happened and the records it produced."""

    id: str
    day: int
    start_minutes: int
    summary: str
    records: tuple[RecordSpec, ...]


class ProjectSpec(NamedTuple):
    """A project of the history: its git remote, a worktree path and its sessions."""

    name: str
    remote: str
    sessions: tuple[SessionSpec, ...]


class History(NamedTuple):
    """The whole scripted history."""

    project: ProjectSpec
    others: tuple[ProjectSpec, ...]
    span_days: int

    def all_records(self) -> Iterator[tuple[ProjectSpec, SessionSpec, RecordSpec]]:
        """Every record with its project and session, project by project, in script order."""
        for project in (self.project, *self.others):
            for session in project.sessions:
                for record in session.records:
                    yield project, session, record


class BenchQuery(NamedTuple):
    """One prompt and its labels."""

    id: str
    prompt: str
    answers: tuple[str, ...]
    about_change: bool
    # How the prompt is phrased or why nothing answers it (see
    # ``agentctx.benchmarks.eval_projects``); "" in files written before kinds were labelled.
    kind: str = ""

    @property
    def answerable(self) -> bool:
        """Whether some record answers the prompt."""
        return bool(self.answers)

    def to_json(self) -> dict[str, Any]:
        """The prompt as stored in a query file."""
        value: dict[str, Any] = {"id": self.id, "prompt": self.prompt,
                                 "answers": list(self.answers), "about_change": self.about_change}
        if self.kind:
            value["kind"] = self.kind
        return value


# ----------------------------------------------------------------------------------- loading


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"{path} does not exist") from None
    except (OSError, ValueError) as exc:
        raise DataError(f"cannot read {path}: {exc}") from None


def _field(data: dict[str, Any], name: str, kind: type, where: str) -> Any:
    value = data.get(name)
    if not isinstance(value, kind):
        raise DataError(f"{where}: field {name!r} must be a {kind.__name__}")
    return value


def _record(data: dict[str, Any], where: str) -> RecordSpec:
    key = _field(data, "id", str, where)
    where = f"{where} record {key!r}"
    files = data.get("files", [])
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        raise DataError(f"{where}: files must be a list of strings")
    supersedes = data.get("supersedes")
    if supersedes is not None and not (isinstance(supersedes, str) and data.get("why")):
        raise DataError(f"{where}: supersedes needs a record key and a 'why'")
    return RecordSpec(key=key, type=_field(data, "type", str, where),
                      title=_field(data, "title", str, where),
                      body=str(data.get("body", "")), confidence=str(data.get("confidence",
                                                                             "explicit")),
                      scope=str(data.get("scope", "project")), store_key=data.get("key"),
                      files=tuple(files), supersedes=supersedes,
                      why=data.get("why"), pinned=bool(data.get("pinned", False)))


def _project(data: dict[str, Any], where: str) -> ProjectSpec:
    name = _field(data, "name", str, where)
    found = []
    for raw in _field(data, "sessions", list, where):
        sid = _field(raw, "id", str, f"{where} session")
        spot = f"{where} session {sid!r}"
        hours, _, minutes = str(raw.get("start", "09:00")).partition(":")
        try:
            start = int(hours) * 60 + int(minutes or 0)
        except ValueError:
            raise DataError(f"{spot}: start must look like 09:30") from None
        found.append(SessionSpec(sid, _field(raw, "day", int, spot), start,
                                 str(raw.get("summary", "")),
                                 tuple(_record(r, spot) for r in _field(raw, "records", list,
                                                                          spot))))
    found.sort(key=lambda s: (s.day, s.start_minutes))
    return ProjectSpec(name, _field(data, "remote", str, where), tuple(found))


def load_history(path: Path = HISTORY_PATH) -> History:
    """Read and check the scripted history."""
    data = _read_json(path)
    if not isinstance(data, dict):
        raise DataError(f"{path}: expected a JSON object")
    main = _project(_field(data, "project", dict, str(path)) | {"sessions": data.get("sessions")},
                    f"{path}")
    others = tuple(_project(o, f"{path} other project")
                   for o in _field(data, "other_projects", list, str(path)))
    history = History(main, others, _field(data, "span_days", int, str(path)))
    check_history(history)
    return history


def load_queries(path: Path) -> list[BenchQuery]:
    """Read one query file."""
    data = _read_json(path)
    raw = data.get("queries") if isinstance(data, dict) else None
    if not isinstance(raw, list):
        raise DataError(f"{path}: expected an object with a 'queries' list")
    found = []
    for item in raw:
        qid = _field(item, "id", str, str(path))
        answers = _field(item, "answers", list, f"{path} query {qid!r}")
        found.append(BenchQuery(qid, _field(item, "prompt", str, f"{path} query {qid!r}"),
                                tuple(str(a) for a in answers), bool(item.get("about_change")),
                                str(item.get("kind", ""))))
    return found


# ----------------------------------------------------------------------------------- checks


def predecessors(history: History) -> dict[str, frozenset[str]]:
    """For every record key, all the keys it superseded, directly or through a chain."""
    direct = {r.key: r.supersedes for _, _, r in history.all_records()}
    found: dict[str, frozenset[str]] = {}
    for key in direct:
        chain: list[str] = []
        step = direct[key]
        while step is not None and step not in chain:
            chain.append(step)
            step = direct.get(step)
        found[key] = frozenset(chain)
    return found


def superseded_keys(history: History) -> frozenset[str]:
    """The keys of every record some later record supersedes."""
    return frozenset(r.supersedes for _, _, r in history.all_records() if r.supersedes)


def check_history(history: History) -> None:
    """Raise :class:`DataError` naming every inconsistency in the history."""
    problems: list[str] = []
    seen: dict[str, str] = {}
    for project, _, record in history.all_records():
        if record.key in seen:
            problems.append(f"record key {record.key!r} is used twice")
        if record.type not in RECORD_TYPES:
            problems.append(f"{record.key}: unknown type {record.type!r}")
        if record.supersedes is not None:
            if record.supersedes not in seen:
                problems.append(f"{record.key} supersedes {record.supersedes!r}, which is not "
                                "an earlier record")
            elif seen[record.supersedes] != project.name:
                problems.append(f"{record.key} supersedes a record of another project")
        seen[record.key] = project.name
    last = max((s.day for s in history.project.sessions), default=0)
    if history.span_days != last:
        problems.append(f"span_days is {history.span_days}, but the last session is on day {last}")
    taken = [r.supersedes for _, _, r in history.all_records() if r.supersedes]
    for key in {k for k in taken if taken.count(k) > 1}:
        problems.append(f"{key} is superseded twice")
    if problems:
        raise DataError("coding history: " + "; ".join(problems))


def check_queries(history: History, queries: Sequence[BenchQuery]) -> None:
    """Raise :class:`DataError` unless every label names a current record of the main project."""
    problems: list[str] = []
    main = {r.key for s in history.project.sessions for r in s.records}
    old = superseded_keys(history)
    chains = predecessors(history)
    ids = [q.id for q in queries]
    for qid in {i for i in ids if ids.count(i) > 1}:
        problems.append(f"query id {qid} is used twice")
    for query in queries:
        for key in query.answers:
            if key not in main:
                problems.append(f"{query.id}: answer {key!r} is not a record of the project")
            elif key in old:
                problems.append(f"{query.id}: answer {key!r} is a superseded record")
        if query.about_change and not any(chains.get(k) for k in query.answers):
            problems.append(f"{query.id}: about_change, but no answer has a superseded version")
        if query.about_change and not query.answers:
            problems.append(f"{query.id}: about_change needs answers")
    if problems:
        raise DataError("coding queries: " + "; ".join(problems))


# ------------------------------------------------------------------------------------ split


def stratum(query: BenchQuery) -> str:
    """The split stratum of a query: changed, answerable or unanswerable."""
    if not query.answerable:
        return "unanswerable"
    return "changed" if query.about_change else "answerable"


def split_queries(queries: Sequence[BenchQuery], seed: int = SPLIT_SEED,
                  share: float = HELD_OUT_SHARE) -> tuple[list[BenchQuery], list[BenchQuery]]:
    """``(tuning, held_out)``: ``share`` of each stratum, drawn with ``random.Random(seed)``.

    Both lists keep the queries' id order. Deterministic for the same queries and seed.
    """
    rng = random.Random(seed)
    held: set[str] = set()
    for name in ("changed", "answerable", "unanswerable"):
        members = sorted(q.id for q in queries if stratum(q) == name)
        rng.shuffle(members)
        held.update(members[:round(share * len(members))])
    ordered = sorted(queries, key=lambda q: q.id)
    return [q for q in ordered if q.id not in held], [q for q in ordered if q.id in held]


def query_file(split_name: str, queries: Sequence[BenchQuery]) -> dict[str, Any]:
    """The JSON document of one query file."""
    return {"format": 1, "split": split_name,
            "note": f"split_queries(seed={SPLIT_SEED}, share={HELD_OUT_SHARE}) of the union of "
                    "both files; the held-out file is scored, never used for tuning",
            "queries": [q.to_json() for q in queries]}


# ------------------------------------------------------------------------------------ build


class Built(NamedTuple):
    """A history loaded into a store: the project and the key ↔ record id maps."""

    project_id: str
    project_name: str
    ids: dict[str, str]  # record key -> record id
    keys: dict[str, str]  # record id -> record key
    foreign: frozenset[str]  # keys of the other projects' records
    superseded: frozenset[str]
    records: int  # records in the main project (global preferences included)


def _write_repo(folder: Path, remote: str) -> Path:
    (folder / ".git").mkdir(parents=True, exist_ok=True)
    (folder / ".git" / "config").write_text(
        f'[core]\n\tbare = false\n[remote "origin"]\n\turl = {remote}\n', encoding="utf-8")
    (folder / ".git" / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    return folder


def _source(spec: RecordSpec) -> str:
    if spec.type == "profile":
        return "detection"
    return "mcp_tool" if spec.confidence == "explicit" else "llm_extraction"


def build(db: Store, history: History, root: Path, now: datetime | None = None) -> Built:
    """Load the history into ``db`` through the store API, in one transaction.

    Each project gets a git-looking folder under ``root`` (so it resolves like a real checkout).
    """
    moment = (now or datetime.now(UTC)).astimezone(UTC)
    # Measured from the run's own moment (not its midnight), so every record's age — and with it
    # the search's recency factor — is the same whatever the time of day of the run.
    start = moment - timedelta(days=history.span_days + ANCHOR_DAYS)
    ids: dict[str, str] = {}
    foreign: set[str] = set()
    main_id = ""
    main_name = ""
    made = 0
    with db.write():
        for number, project in enumerate((history.project, *history.others)):
            folder = _write_repo(root / project.name, project.remote)
            resolved = projects.resolve(db, str(folder))
            pid = resolved.project.id
            if number == 0:
                main_id, main_name = pid, resolved.project.name
            for session in project.sessions:
                session_id = f"bench-{project.name}-{session.id}"
                sessions.ensure(db, session_id, pid, cwd=str(folder))
                began = start + timedelta(days=session.day, minutes=session.start_minutes)
                for index, spec in enumerate(session.records):
                    valid_from = to_iso(began + timedelta(minutes=RECORD_SPACING_MIN * index))
                    ids[spec.key] = _add(db, spec, pid, session_id, valid_from, ids)
                    for name in spec.files:
                        kind = "module" if name.endswith("/") else "file"
                        graph.link_record(db, ids[spec.key],
                                          graph.ensure_node(db, pid, kind, name.rstrip("/")))
                    if number == 0:
                        made += 1
                    else:
                        foreign.add(spec.key)
    return Built(main_id, main_name, ids, {rid: key for key, rid in ids.items()},
                 frozenset(foreign), superseded_keys(history), made)


def _add(db: Store, spec: RecordSpec, project_id: str, session_id: str, valid_from: str,
         ids: dict[str, str]) -> str:
    draft = Draft(type=spec.type, title=spec.title, body=spec.body, scope=spec.scope,
                  key=spec.store_key, confidence=spec.confidence, source=_source(spec),
                  session_id=session_id, valid_from=valid_from, pinned=spec.pinned,
                  reinforce_count=3 if spec.confidence == "reinforced" else 0)
    if spec.supersedes is not None:
        return records.supersede(db, ids[spec.supersedes], draft, spec.why or "",
                                 actor="import").id
    if spec.store_key is not None:
        target = GLOBAL_PROJECT if spec.scope == "global" else project_id
        clash = records.find_current_by_key(db, target, spec.type, spec.store_key)
        if clash is not None:
            raise DataError(f"{spec.key} reuses key {spec.store_key!r} of a current record "
                            "without naming it in 'supersedes'")
    return records.add(db, draft, project_id=project_id).id

