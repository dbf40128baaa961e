"""Turning an extraction into records: :func:`plan` (reads only) then :func:`apply` (writes).

``plan`` decides, for every extracted item, what would happen — a new record, a supersession, a
reinforcement, a bugfix stub enriched, a new handover, or nothing because the store already holds
it — so ``--dry-run`` can print exactly what a real run would do. ``apply`` carries the plan out
through the records API; the caller wraps it in one transaction with the offset update.

Rules:

* Records get ``source = llm_extraction``, the session's id, a ``derives_from`` edge to the
  session, ``confidence`` explicit or inferred as the model said (gotchas: inferred; the handover:
  explicit), and ``valid_from`` = the transcript's date when backfilling.
* Extracting the same content twice adds nothing: an item whose normalized text (case, accents,
  punctuation and spacing ignored) equals a current record of its type in the project, or a
  record this session already produced, is a duplicate.
* ``supersedes`` must name a current decision or convention of the same project; an unknown,
  ambiguous or already superseded id gives a plain new record.
* A convention with file or module scope becomes entity links (``file`` / ``module`` nodes) on a
  project-scope record.
* A preference that matches an existing one of its scope (global, or this project) reinforces it
  instead of being added again. A match is, in order: the same normalized text; a cosine of at
  least :data:`REINFORCE_COSINE` (0.92) between their embeddings when an embedding model is
  available; else an FTS hit from the store's one search with ``relevance`` of at least
  :data:`FTS_MIN_RELEVANCE` (0.8: the existing rule holds 80% of the new rule's IDF-weighted
  terms) whose own terms overlap the new rule's by a Jaccard index of at least
  :data:`FTS_MIN_JACCARD` (0.6, on crudely stemmed terms) — the second test keeps a long record
  that merely contains a short rule's words from matching it. Reinforcing adds one to
  ``reinforce_count`` and a ``derives_from`` edge to the session (a session counts once);
  an inferred preference becomes ``reinforced`` once it was seen in ``reinforce_sessions``
  distinct sessions, or at once when this session states it explicitly. A preference the
  developer cleared (``agentctx profile clear``) is not learned again from an inferred match
  (same tests against the cleared rules); only an explicit statement adds it back.
* The handover (active_work) is a ``handover`` record keyed ``worktree:<root>``; the store
  supersedes the previous one of that key. A backfilled handover older than the current one is
  skipped.
* A bugfix stub of this session (``source = hook_observation``, empty body) named by the model
  gets the cause and fix as its body.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any, NamedTuple, Protocol

from agentctx.core.budget import truncate
from agentctx.core.redact import redact
from agentctx.core.words import tokens
from agentctx.extract.request import ActiveWork, Extraction
from agentctx.store import graph, records, upkeep
from agentctx.store.db import Store
from agentctx.store.errors import AlreadySuperseded, AmbiguousId, InvalidRecord, NotFound
from agentctx.store.models import GLOBAL_PROJECT, Draft, Record
from agentctx.store.search import Query, search
from agentctx.store.textproc import query_terms

REINFORCE_COSINE = 0.92
FTS_MIN_RELEVANCE = 0.8
FTS_MIN_JACCARD = 0.6
TITLE_CHARS = 200
SOURCE = "llm_extraction"
ACTOR = "llm_extraction"


class Embedder(Protocol):
    """What reinforcement needs from an embedding model: normalized float32 rows."""

    def encode(self, texts: list[str]) -> Any:
        """One normalized vector per text."""


class Target(NamedTuple):
    """Where and as of when an extraction is written."""

    project_id: str
    session_id: str
    worktree: str | None
    project_root: str | None = None
    valid_from: str | None = None  # the transcript's date when backfilling; else now
    reinforce_sessions: int = 3


class Action(NamedTuple):
    """One planned change (or a planned no-op, with the reason)."""

    kind: str  # add | supersede | reinforce | enrich | handover | duplicate | skip
    type: str  # the record type concerned
    title: str
    draft: Draft | None = None
    record_id: str | None = None  # superseded, reinforced, duplicated or enriched record
    note: str = ""  # supersede rationale, or why nothing happens
    links: tuple[tuple[str, str], ...] = ()  # (node kind, name) for conventions
    confidence: str | None = None  # reinforce: the record's confidence afterwards
    reinforce_count: int | None = None
    body: str | None = None  # enrich: the stub's new body

    @property
    def writes(self) -> bool:
        """Whether carrying this action out changes the store."""
        return self.kind not in ("duplicate", "skip")


class Applied(NamedTuple):
    """What :func:`apply` did."""

    written: list[Record]  # new records (supersessions and the handover included)
    reinforced: list[Record]
    enriched: list[Record]
    unchanged: int  # duplicates and skips

    @property
    def changes(self) -> int:
        """Records created or changed."""
        return len(self.written) + len(self.reinforced) + len(self.enriched)


# ----------------------------------------------------------------------------------- planning


def plan(db: Store, extraction: Extraction, target: Target,
         embedder: Embedder | None = None) -> list[Action]:
    """Every action :func:`apply` would take for ``extraction`` (reads only, writes nothing)."""
    if extraction.flush_ok:
        return []  # the model judged the transcript not worth keeping: nothing is written
    index = _Index(db, target)
    actions: list[Action] = []
    claimed: set[str] = set()  # records already superseded by an earlier item of this plan
    for decision in extraction.decisions:
        draft = _draft("decision", decision.what, decision.rationale, decision.confidence, target)
        actions.append(_new_or_superseding(db, index, draft, decision.supersedes,
                                           decision.rationale, target, claimed))
    for convention in extraction.conventions:
        paths = [p.strip().rstrip("/") for p in convention.applies_to if p.strip().strip("/")]
        body = ("Applies to: " + ", ".join(paths) + "." if paths and convention.scope != "project"
                else "Applies to the whole project.")
        draft = _draft("convention", convention.convention, body, convention.confidence, target)
        action = _new_or_superseding(db, index, draft, convention.supersedes, body, target,
                                     claimed)
        if action.writes and convention.scope in ("file", "module"):
            kind = "file" if convention.scope == "file" else "module"
            action = action._replace(links=tuple(
                (kind, graph.relative_name(path, target.project_root)) for path in paths
                if len(path) <= graph.NAME_MAX_CHARS))
        actions.append(action)
    for gotcha in extraction.gotchas:
        draft = _draft("discovery", gotcha.pattern, gotcha.why_it_matters, "inferred", target)
        actions.append(_new(index, draft))
    for preference in extraction.preferences:
        actions.append(_preference(db, index, preference.rule, preference.category,
                                   preference.confidence, preference.scope, target, embedder))
    for note in extraction.bugfixes:
        actions.append(_enrich(db, note.stub_id, f"Cause: {note.cause}\nFix: {note.fix}", target))
    if extraction.active_work is not None:
        handover = _handover(db, extraction.active_work, target)
        if handover is not None:
            actions.append(handover)
    return actions


class _Index:
    """Normalized titles of what the project (and this session) already holds, per type."""

    def __init__(self, db: Store, target: Target) -> None:
        self.db = db
        self.target = target
        self._by_type: dict[tuple[str, str], dict[str, str]] = {}

    def find(self, type_: str, project_id: str, title: str) -> str | None:
        key = (type_, project_id)
        if key not in self._by_type:
            known: dict[str, str] = {}
            for record in records.list_records(self.db, project_id=project_id, types=[type_]):
                known.setdefault(normalize(record.title), record.id)
            for record in records.list_records(self.db, session_id=self.target.session_id,
                                               types=[type_], include_superseded=True):
                if record.project_id == project_id:
                    known.setdefault(normalize(record.title), record.id)
            self._by_type[key] = known
        return self._by_type[key].get(normalize(title))

    def remember(self, type_: str, project_id: str, title: str, marker: str) -> None:
        self.find(type_, project_id, title)
        self._by_type[(type_, project_id)].setdefault(normalize(title), marker)


def normalize(text: str) -> str:
    """Text compared for sameness: folded case and accents, words only."""
    return " ".join(tokens(text))


def _draft(type_: str, title: str, body: str, confidence: str, target: Target,
           scope: str = "project") -> Draft:
    # Redacted before it is cut: half a secret would no longer match its pattern.
    return Draft(type=type_, title=truncate(" ".join(redact(title).split()), TITLE_CHARS, "…"),
                 body=truncate(redact(body.strip()), 8000, " […]"), scope=scope,
                 confidence=confidence,
                 source=SOURCE, session_id=target.session_id, valid_from=target.valid_from)


def _new(index: _Index, draft: Draft) -> Action:
    project = GLOBAL_PROJECT if draft.scope == "global" else index.target.project_id
    if not normalize(draft.title):
        return Action("skip", draft.type, draft.title, note="empty title")
    existing = index.find(draft.type, project, draft.title)
    if existing is not None:
        return Action("duplicate", draft.type, draft.title, record_id=existing,
                      note="already recorded")
    index.remember(draft.type, project, draft.title, "(planned)")
    return Action("add", draft.type, draft.title, draft=draft)


def _new_or_superseding(db: Store, index: _Index, draft: Draft, supersedes: str | None,
                        rationale: str, target: Target, claimed: set[str]) -> Action:
    action = _new(index, draft)
    if action.kind != "add" or not supersedes:
        return action
    old = _supersedable(db, supersedes.strip(), target)
    if old is None or old.id in claimed:
        return action._replace(note=f"supersedes {supersedes!r} ignored: not a current decision "
                                    "or convention of this project")
    claimed.add(old.id)
    why = " ".join(rationale.split()) or "replaced by a newer decision"
    return action._replace(kind="supersede", record_id=old.id, note=why)


def _supersedable(db: Store, ref: str, target: Target) -> Record | None:
    try:
        old = records.get(db, ref)
    except (NotFound, AmbiguousId):
        return None
    if (old.archived or not old.current or old.project_id != target.project_id
            or old.type not in ("decision", "convention")):
        return None
    if target.valid_from and old.valid_from > target.valid_from:
        return None  # a backfilled record cannot end a fact that started after it
    return old


def _preference(db: Store, index: _Index, rule: str, category: str, confidence: str,
                scope: str, target: Target, embedder: Embedder | None) -> Action:
    draft = _draft("preference", rule, f"Category: {category}.", confidence, target, scope=scope)
    project = GLOBAL_PROJECT if scope == "global" else target.project_id
    if not normalize(draft.title):
        return Action("skip", "preference", draft.title, note="empty rule")
    planned = index.find("preference", project, draft.title)
    if planned == "(planned)":
        return Action("duplicate", "preference", draft.title, note="twice in this extraction")
    match = _matching_preference(db, draft.title, project, embedder)
    if match is None:
        cleared = _matching_preference(db, draft.title, project, embedder, retired=True)
        if cleared is not None and confidence != "explicit":
            return Action("skip", "preference", draft.title, record_id=cleared.id,
                          note="cleared with agentctx profile clear; only an explicit "
                               "statement brings it back")
        return _new(index, draft)
    counted = _sessions_of(db, match)
    if target.session_id in counted:
        return Action("duplicate", "preference", draft.title, record_id=match.id,
                      note="this session already counted")
    sessions_seen = len(counted | {target.session_id})
    new_confidence = match.confidence
    if match.confidence == "inferred" and (confidence == "explicit"
                                           or sessions_seen >= target.reinforce_sessions):
        new_confidence = "reinforced"
    index.remember("preference", project, draft.title, match.id)
    return Action("reinforce", "preference", match.title, record_id=match.id,
                  confidence=new_confidence, reinforce_count=match.reinforce_count + 1,
                  note=f"seen in {sessions_seen} session(s)")


def _sessions_of(db: Store, record: Record) -> set[str]:
    found = {edge.to_id for edge in graph.edges_of(db, record.id)
             if edge.rel_type == "derives_from" and edge.from_id == record.id}
    if record.session_id:
        found.add(record.session_id)
    return found


def _matching_preference(db: Store, rule: str, project: str, embedder: Embedder | None, *,
                         retired: bool = False) -> Record | None:
    """The preference of ``project`` that says ``rule``: a current one, or with ``retired`` one
    the developer cleared (by normalized text, the embedding, else keyword overlap)."""
    if retired:
        current = upkeep.retired(db, project, "preference")
    else:
        current = records.list_records(db, project_id=project, types=["preference"], limit=500)
    wanted = normalize(rule)
    for record in current:
        if normalize(record.title) == wanted:
            return record
    if not current:
        return None
    if embedder is not None:
        match = _cosine_match(embedder, rule, current)
        if match is not None:
            return match
    rule_terms = _stems(rule)
    if retired:
        # A short list: compare every cleared rule's words directly.
        return next((r for r in current if _same_words(rule_terms, r.title)), None)

    for hit in search(db, Query(text=rule, project_id=project, include_global=False,
                                types=("preference",), limit=5)):
        if hit.relevance < FTS_MIN_RELEVANCE:
            continue
        if _same_words(rule_terms, hit.record.title):
            return hit.record
    return None


def _cosine_match(embedder: Embedder, rule: str, current: Sequence[Record]) -> Record | None:
    try:
        rows = embedder.encode([rule, *[r.title for r in current]])
        scores = [float(value) for value in rows[1:] @ rows[0]]  # rows are L2-normalized
        best, best_score = None, REINFORCE_COSINE
        for record, score in zip(current, scores, strict=True):
            if score >= best_score:
                best, best_score = record, score
        return best
    except Exception:  # an embedding failure falls back to FTS, never breaks extraction
        return None


def _same_words(rule_terms: set[str], title: str) -> bool:
    """Whether ``title``'s stemmed words overlap ``rule_terms`` by at least FTS_MIN_JACCARD."""
    other = _stems(title)
    union = rule_terms | other
    return bool(union) and len(rule_terms & other) / len(union) >= FTS_MIN_JACCARD


def _stems(text: str) -> set[str]:
    """Query terms with common English suffixes cut, so "prefers" meets "prefer"."""
    stems = set()
    for term in query_terms(text):
        for suffix in ("ing", "es", "ed", "s"):
            if len(term) > len(suffix) + 3 and term.endswith(suffix):
                term = term[: -len(suffix)]
                break
        stems.add(term)
    return stems


def _enrich(db: Store, stub_ref: str, body: str, target: Target) -> Action:
    try:
        stub = records.get(db, stub_ref.strip())
    except (NotFound, AmbiguousId):
        return Action("skip", "bugfix", stub_ref, note="no such bugfix stub")
    if (stub.type != "bugfix" or stub.session_id != target.session_id or stub.archived
            or stub.project_id != target.project_id or stub.source != "hook_observation"):
        return Action("skip", "bugfix", stub.title, record_id=stub.id,
                      note="not a bugfix stub of this session")
    if stub.body.strip():
        return Action("duplicate", "bugfix", stub.title, record_id=stub.id,
                      note="stub already enriched")
    return Action("enrich", "bugfix", stub.title, record_id=stub.id,
                  body=truncate(redact(body.strip()), 8000, " […]"))


def handover_key(worktree: str) -> str:
    """The key of a worktree's handover record."""
    return f"worktree:{worktree}"


def _handover(db: Store, work: ActiveWork, target: Target) -> Action | None:
    task = " ".join(redact(work.current_task).split())
    if not task and not (work.blockers or work.next_steps or work.open_questions):
        return None
    worktree = target.worktree or target.project_root or target.project_id
    key = handover_key(worktree)
    title = truncate(f"Handover: {task or 'open items'}", TITLE_CHARS, "…")
    sections = [f"Current task: {task or '(none)'}"]
    for heading, items in (("Blockers", work.blockers), ("Next steps", work.next_steps),
                           ("Open questions", work.open_questions)):
        kept = [" ".join(redact(item).split()) for item in items if item.strip()]
        if kept:
            sections.append(f"{heading}:\n" + "\n".join(f"- {item}" for item in kept))
    body = truncate("\n\n".join(sections), 8000, " […]")
    existing = records.find_current_by_key(db, target.project_id, "handover", key)
    if existing is not None:
        if existing.title == title and existing.body == body:
            return Action("duplicate", "handover", title, record_id=existing.id,
                          note="same handover")
        if target.valid_from and existing.valid_from > target.valid_from:
            return Action("skip", "handover", title, record_id=existing.id,
                          note="a newer handover exists")
    draft = Draft(type="handover", title=title, body=body, key=key, confidence="explicit",
                  source=SOURCE, session_id=target.session_id, valid_from=target.valid_from)
    return Action("handover", "handover", title, draft=draft,
                  record_id=existing.id if existing else None)


# ----------------------------------------------------------------------------------- applying


def apply(db: Store, actions: Sequence[Action], target: Target) -> Applied:
    """Carry out a plan through the records and graph APIs (inside one transaction)."""
    written: list[Record] = []
    reinforced: list[Record] = []
    enriched: list[Record] = []
    unchanged = 0
    with db.write():
        for action in actions:
            if action.kind in ("add", "supersede") and action.draft is not None:
                record = _add(db, action, target)
                written.append(record)
                _link_session(db, record.id, target.session_id)
                for kind, name in action.links:
                    if name:
                        graph.link_record(db, record.id,
                                          graph.ensure_node(db, target.project_id, kind, name))
            elif action.kind == "reinforce" and action.record_id:
                record = records.update(db, action.record_id,
                                        reinforce_count=action.reinforce_count,
                                        confidence=action.confidence, actor=ACTOR)
                _link_session(db, record.id, target.session_id)
                reinforced.append(record)
            elif action.kind == "enrich" and action.record_id and action.body:
                enriched.append(records.update(db, action.record_id, body=action.body,
                                               actor=ACTOR))
            elif action.kind == "handover" and action.draft is not None:
                try:
                    record = records.add(db, action.draft, project_id=target.project_id)
                except InvalidRecord:
                    unchanged += 1  # an older (backfilled) handover never replaces a newer one
                    continue
                written.append(record)
                _link_session(db, record.id, target.session_id)
            else:
                unchanged += 1
    return Applied(written, reinforced, enriched, unchanged)


def _add(db: Store, action: Action, target: Target) -> Record:
    assert action.draft is not None
    if action.kind == "supersede" and action.record_id:
        with contextlib.suppress(InvalidRecord, AlreadySuperseded, NotFound):
            return records.supersede(db, action.record_id, action.draft, action.note,
                                     actor=ACTOR)
    return records.add(db, action.draft, project_id=target.project_id)


def _link_session(db: Store, record_id: str, session_id: str) -> None:
    graph.add_edge(db, record_id, session_id, "derives_from")
