"""Typed values the store hands out and takes in.

NamedTuples rather than dataclasses: this module is imported on the hook hot path, and
``dataclasses`` pulls in ``inspect`` (about 10 ms of start-up).
"""

from __future__ import annotations

from agentctx.core.laws import BODY_MAX_CHARS as BODY_MAX_CHARS
from agentctx.core.laws import TITLE_MAX_CHARS as TITLE_MAX_CHARS
from agentctx.core.lean import NamedTuple

RECORD_TYPES: tuple[str, ...] = (
    "decision", "convention", "preference", "discovery", "bugfix", "handover", "profile",
)
SCOPES: tuple[str, ...] = ("project", "global")
CONFIDENCES: tuple[str, ...] = ("explicit", "inferred", "reinforced")
# Who wrote a record: a face (cli, tui, web, mcp_tool), a hook, extraction, an import, detection.
SOURCES: tuple[str, ...] = (
    "llm_extraction", "hook_observation", "mcp_tool", "cli", "import", "detection", "tui", "web",
    "claude-memory",
)
GLOBAL_PROJECT = "global"


def project_scope(project_id: str | None, include_global: bool = True) -> list[str] | None:
    """The project ids a read over ``project_id`` covers: the project, and the developer's
    global profile with it when ``include_global``; ``None`` for every project."""
    if project_id is None:
        return None
    if include_global and project_id != GLOBAL_PROJECT:
        return [project_id, GLOBAL_PROJECT]
    return [project_id]


class Record(NamedTuple):
    """One typed, bi-temporal context record as stored."""

    pk: int
    id: str
    project_id: str
    type: str
    key: str | None
    title: str
    body: str
    scope: str
    pinned: bool
    confidence: str
    reinforce_count: int
    valid_from: str
    recorded_at: str
    superseded_at: str | None
    superseded_by: str | None
    access_count: int
    last_accessed: str | None
    score: float
    claudemd_drift_score: float
    source: str
    session_id: str | None
    pending_embedding: bool
    updated_at: str | None
    archived: bool = False

    @property
    def current(self) -> bool:
        """Whether the record is in force now (not superseded)."""
        return self.superseded_at is None


class Draft(NamedTuple):
    """What a caller supplies to create a record; everything else is filled in by the store."""

    type: str
    title: str
    body: str = ""
    scope: str = "project"
    key: str | None = None
    confidence: str = "inferred"
    source: str = "cli"
    session_id: str | None = None
    valid_from: str | None = None
    pinned: bool = False
    reinforce_count: int = 0


class Project(NamedTuple):
    """A project: a git repository (by remote, else root) or a plain folder."""

    id: str
    name: str
    root: str
    remote: str | None
    paused: bool = False


class Hit(NamedTuple):
    """One search result."""

    record: Record
    rank: float  # higher is better; comparable within one search only
    relevance: float  # 0-1: IDF-weighted share of the query's terms the record matches
    matched: tuple[str, ...]  # query terms found in the record
    via: str | None = None  # id of a superseded record whose match surfaced this current one
    dated: bool = False  # valid_from inside the prompt's time window ("last week")
    # Absolute evidence: the summed weight (IDF) of the matched terms, in units of the weight of
    # a term found in a single record, so about how many telling words it matches;
    # relevance is their share of all the prompt's terms, so a long prompt dilutes relevance but
    # not strength.
    strength: float = 0.0


class Edge(NamedTuple):
    """A typed link between two ids (records, nodes or sessions)."""

    id: str
    from_id: str
    to_id: str
    rel_type: str
    weight: float
    note: str | None
    created_at: str


class Node(NamedTuple):
    """A code entity (file, module, symbol, package, branch) in one project."""

    id: str
    project_id: str
    kind: str
    name: str


class ReceiptItem(NamedTuple):
    """One record of an injection and why it was chosen."""

    record_id: str
    score: float | None  # its relevance, for a per-prompt injection
    matched: tuple[str, ...]  # the prompt words it matched
    pointer: bool = False  # shown as a one-line pointer, not in full


class Receipt(NamedTuple):
    """One injection: what was put into Claude's context, why, and what it cost."""

    id: int
    session_id: str
    project_id: str
    event: str
    source: str | None
    record_ids: tuple[str, ...]
    scores: tuple[float, ...]  # per record: its relevance to the prompt (per-prompt injections)
    tokens: int
    chars: int
    created_at: str
    prompt: str | None = None  # the prompt's first characters, redacted (per-prompt injections)
    matched: tuple[tuple[str, ...], ...] = ()  # per record: the prompt words it matched
    pointers: tuple[str, ...] = ()  # the records shown as one-line pointers, not in full
    # (record id, file): left out because a memory file Claude Code loads already states them
    left_out: tuple[tuple[str, str], ...] = ()

    @property
    def items(self) -> tuple[ReceiptItem, ...]:
        """Each injected record with its score, matched words (missing ones: ``None``/()) and
        whether it was a pointer."""
        return tuple(ReceiptItem(rid, self.scores[i] if i < len(self.scores) else None,
                                 self.matched[i] if i < len(self.matched) else (),
                                 rid in self.pointers)
                     for i, rid in enumerate(self.record_ids))


class Session(NamedTuple):
    """One Claude Code session as agentctx saw it."""

    session_id: str
    project_id: str
    cwd: str | None
    transcript_path: str | None
    started_at: str
    ended_at: str | None
    tokens_injected: int
    extraction_cost_usd: float
    meta: dict[str, object]
