"""Importing Claude Code's auto memory into the store (``agentctx import --claude-memory``).

The project's memory folder (:mod:`agentctx.drift.automemory`) is read, never written. Each
topic file becomes one record — its ``description`` (else its ``name``) as the title, the file's
text after the front matter as the body — and each line of ``MEMORY.md`` that is not a link to a
topic file (a list item) becomes one record too, all with source ``claude-memory`` and confidence
``inferred``. The front matter's type decides the record type (:func:`record_type`):

=============  ==========================================================================
``user``       a preference (global: it is about the developer)
``feedback``   a convention when it names something of the project's code (a path, a file,
               a command or identifier in backticks), else a global preference
``project``    a decision when it says what was chosen or must be done ("we use", "decided",
               "instead of", "always", "never", "must" …), else a discovery
``reference``  a discovery; so is a line of ``MEMORY.md`` or a file without a type
=============  ==========================================================================

**Idempotent** by file and content (``memory_imports``): a file whose text is unchanged is not
imported again, and one imported before and forgotten here is not brought back. **A changed
file** supersedes the record its earlier text became ("the auto memory file … changed"). **A
near-duplicate** of a current record of the same type — consolidation's own rule
(:mod:`agentctx.consolidate.duplicates`: the lexical overlap, and the embedding model's cosine
over ``near_duplicate_cosine`` when the model is on disk) — is not added: it reinforces that
record (one more ``reinforce_count``; an ``inferred`` one becomes ``reinforced``).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from agentctx.consolidate import duplicates
from agentctx.core import config, safeio
from agentctx.core.ids import normalize_time
from agentctx.drift import automemory
from agentctx.store import memimports
from agentctx.store import records as rec
from agentctx.store.db import Store
from agentctx.store.errors import InvalidRecord, NotFound
from agentctx.store.models import GLOBAL_PROJECT, TITLE_MAX_CHARS, Draft, Project, Record
from agentctx.store.selection import Selection

SOURCE = "claude-memory"
INDEX_MAX_BYTES = 1024 * 1024
_ITEM = re.compile(r"^\s{0,3}(?:[-*+]|\d{1,3}[.)])\s+(\S.*)$")
_LINK = re.compile(r"\[([^\]]*)\]\(([^)\s]+)[^)]*\)")
_CODE_MARK = re.compile(r"`[^`]+`|\b[\w.-]+/[\w./-]*|\b\w+\.(?:py|js|ts|tsx|go|rs|rb|java|kt|"
                        r"sql|toml|json|ya?ml|md|sh|css|html)\b")
_CHOICE = re.compile(r"\b(?:we use|we're using|use[sd]?|decided|decision|chose|chosen|switched|"
                     r"moved to|instead of|rather than|always|never|must|should|prefer|"
                     r"standardi[sz]ed|adopted|policy|rule)\b", re.IGNORECASE)


class Item(NamedTuple):
    """One thing of the memory folder to import."""

    key: str  # the topic file's name, or MEMORY.md#<hash of the line>
    type: str
    title: str
    body: str
    sha256: str
    modified: str | None


@dataclass
class Report:
    """What an import did."""

    folder: str
    enabled: bool
    why: str  # why auto memory is on or off
    items: int = 0
    added: list[str] = field(default_factory=list)
    superseded: list[tuple[str, str]] = field(default_factory=list)  # (old, new)
    reinforced: list[str] = field(default_factory=list)
    unchanged: int = 0
    forgotten: int = 0  # imported before, forgotten here since: not brought back
    problems: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """For ``--json``."""
        return {"folder": self.folder, "enabled": self.enabled, "why": self.why,
                "items": self.items, "added": self.added,
                "superseded": [{"old": old, "new": new} for old, new in self.superseded],
                "reinforced": self.reinforced, "unchanged": self.unchanged,
                "forgotten": self.forgotten, "problems": self.problems}


def record_type(kind: str | None, text: str) -> str:
    """The record type a memory of ``kind`` (its front matter's type) with ``text`` becomes."""
    if kind == "user":
        return "preference"
    if kind == "feedback":
        return "convention" if _CODE_MARK.search(text) else "preference"
    if kind == "project":
        return "decision" if _CHOICE.search(text) else "discovery"
    return "discovery"


def _plain(text: str) -> str:
    """A line of Markdown as text: links as their label, emphasis marks dropped."""
    text = _LINK.sub(lambda m: m.group(1), text)
    return " ".join(text.replace("**", "").replace("__", "").split())


def _title(text: str) -> str:
    title = _plain(text)
    return title if len(title) <= TITLE_MAX_CHARS else title[:TITLE_MAX_CHARS - 1].rstrip() + "…"


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def items(folder: Path) -> list[Item]:
    """What the memory folder holds to import: its topic files, then the lines of
    ``MEMORY.md`` that do not link to one."""
    found: list[Item] = []
    topics = automemory.topics(folder)
    for topic in topics:
        title = topic.description or topic.name
        if not title.strip() or not (topic.body or topic.description):
            continue
        kind = record_type(topic.type, f"{title}\n{topic.body}")
        found.append(Item(topic.path.name, kind, _title(title), topic.body.strip(),
                          _hash(topic.text), topic.modified))
    names = {topic.path.name for topic in topics}
    try:
        index = safeio.read_small(folder / automemory.INDEX_NAME, INDEX_MAX_BYTES).decode(
            "utf-8", errors="replace")
    except OSError:
        return found
    _fields, index = automemory.front_matter(index)
    for line in index.splitlines():
        listed = _ITEM.match(line)
        if listed is None:
            continue  # headings and prose: the index's items are its list items
        text = listed.group(1).strip()
        if not _plain(text):
            continue
        linked = [Path(target).name for _label, target in _LINK.findall(text)]
        if any(name in names for name in linked):
            continue  # the topic file itself is imported
        found.append(Item(f"{automemory.INDEX_NAME}#{_hash(text)[:16]}", "discovery",
                          _title(text), "", _hash(text), None))
    return found


def _project_of(project: Project, type_: str) -> str:
    return GLOBAL_PROJECT if type_ == "preference" else project.id


def _draft(item: Item, valid_from: str | None = None) -> Draft:
    return Draft(type=item.type, title=item.title, body=item.body,
                 scope="global" if item.type == "preference" else "project",
                 confidence="inferred", source=SOURCE, valid_from=valid_from)


class _Twins:
    """Finds an existing current record a draft restates (consolidation's near-duplicate rule),
    loading the embedding model only once a draft has a lexical twin."""

    def __init__(self, db: Store, cfg: config.Config) -> None:
        self._db = db
        self._cfg = cfg
        self._threshold = cfg.get_float("near_duplicate_cosine")
        self._model: Any = None
        self._loaded = False

    def _encoder(self) -> Any:
        if not self._loaded:
            self._loaded = True
            if self._cfg.get_bool("embeddings"):
                from agentctx.ml.embedder import load_model  # late: only for a lexical twin

                try:
                    self._model = load_model(self._cfg, allow_download=False)
                except Exception:  # no model, no cosine: the lexical rule alone decides
                    self._model = None
        return self._model

    def of(self, project_id: str, draft: Draft) -> Record | None:
        """The current record of ``project_id`` and ``draft``'s type that ``draft`` restates."""
        group = rec.list_records(self._db, Selection(project_id=project_id, types=(draft.type,)),
                                 limit=5000)
        if not group:
            return None
        docs = duplicates.docs_for([*((r.title, r.body) for r in group),
                                    (draft.title, draft.body)])
        df = duplicates.document_frequency(docs)
        close = [(overlap, record) for record, doc in zip(group, docs, strict=False)
                 if (overlap := duplicates.lexical_overlap(docs[-1], doc, df, len(docs)))
                 is not None]
        if not close:
            return None
        model = self._encoder()
        if model is not None:
            import numpy as np  # late: a model is loaded, so numpy already is

            texts = [f"[{draft.type}] {draft.title}\n{draft.body}".strip(),
                     *(f"[{r.type}] {r.title}\n{r.body}".strip() for _o, r in close)]
            matrix = np.asarray(model.encode(texts), dtype=np.float32)
            cosines = matrix[1:] @ matrix[0]
            close = [pair for pair, cosine in zip(close, cosines.tolist(), strict=True)
                     if cosine > self._threshold]
        return max(close, key=lambda pair: pair[0])[1] if close else None


def _reinforce(db: Store, record: Record) -> Record:
    confidence = "reinforced" if record.confidence == "inferred" else record.confidence
    return rec.update(db, record.id, reinforce_count=record.reinforce_count + 1,
                      confidence=confidence, actor=SOURCE)


def _valid_from(item: Item, floor: str | None = None) -> str | None:
    """When the memory was written (its ``modified``), never before ``floor``."""
    moment = None
    if item.modified:
        try:
            moment = normalize_time(item.modified)
        except ValueError:
            moment = None
    if floor is not None and (moment is None or moment < floor):
        return None  # now
    return moment


def import_memory(db: Store, project: Project, *, folder: Path | None = None,
                  cfg: config.Config | None = None) -> Report:
    """Import the auto memory of ``project`` (its folder, or ``folder``); see the module
    docstring. Each item is its own transaction; a record the store refuses is reported and the
    others still import."""
    cfg = cfg or config.Config.load()
    state = automemory.state(project.root)
    where = folder or state.folder
    report = Report(str(where), state.enabled, state.why)
    found = items(where)
    report.items = len(found)
    known = memimports.of_project(db, project.id)
    twins = _Twins(db, cfg)
    for item in found:
        before = known.get(item.key)
        try:
            with db.write():
                _import_one(db, project, item, before, twins, report)
        except InvalidRecord as exc:
            report.problems.append(f"{item.key}: {exc}")
    return report


def _import_one(db: Store, project: Project, item: Item, before: memimports.Imported | None,
                twins: _Twins, report: Report) -> None:
    if before is not None and before.sha256 == item.sha256:
        if _exists(db, before.record_id):
            report.unchanged += 1
        else:
            report.forgotten += 1
        return
    old = _current(db, before.record_id) if before is not None and not before.merged else None
    if old is not None and old.type == item.type:
        new = rec.supersede(db, old.id, _draft(item, _valid_from(item, old.valid_from)),
                            f"the auto memory file {item.key} changed", actor=SOURCE)
        memimports.put(db, project.id, item.key, item.sha256, item.modified, new.id)
        report.superseded.append((old.id, new.id))
        return
    draft = _draft(item, _valid_from(item))
    twin = twins.of(_project_of(project, item.type), draft)
    if twin is not None:
        _reinforce(db, twin)
        memimports.put(db, project.id, item.key, item.sha256, item.modified, twin.id,
                       merged=True)
        report.reinforced.append(twin.id)
        return
    added = rec.add(db, draft, project_id=_project_of(project, item.type))
    memimports.put(db, project.id, item.key, item.sha256, item.modified, added.id)
    report.added.append(added.id)


def _exists(db: Store, record_id: str) -> bool:
    try:
        rec.get(db, record_id)
    except NotFound:
        return False
    return True


def _current(db: Store, record_id: str) -> Record | None:
    try:
        record = rec.get(db, record_id)
    except NotFound:
        return None
    return record if record.current and not record.archived else None


def describe(report: Report) -> list[str]:
    """The import in a few lines for people."""
    state = "on" if report.enabled else "off"
    lines = [f"{report.folder}: {report.items} memories ({state}: {report.why}) · "
             f"{len(report.added)} added · {len(report.superseded)} superseded · "
             f"{len(report.reinforced)} reinforced · {report.unchanged} unchanged"
             + (f" · {report.forgotten} forgotten here, not imported again"
                if report.forgotten else "")]
    lines += [f"  not imported: {problem}" for problem in report.problems]
    return lines


def pending(project: Project, imported: Sequence[str]) -> int:
    """How many items of the project's memory folder an import would look at that were never
    imported (``imported``: the keys imported so far)."""
    done = set(imported)
    return sum(1 for item in items(automemory.state(project.root).folder) if item.key not in done)
