"""The SessionStart digest: a project's stable context on a hard budget (Tier 1 injection).

Sections, in this order:

1. **Project profile** — the detected name, stack and commands (``profile`` records).
2. **Active decisions and conventions** of the project.
3. **Last handover for this worktree** — added at serve time (the stored digest is per project,
   worktrees share it), from the current ``handover`` record keyed ``worktree:<path>``.
4. **Developer preferences** — global preferences with confidence ``reinforced`` or ``explicit``,
   within the ``profile_tokens`` knob.
5. **CLAUDE.md drift** — one line, :data:`DRIFT_NOTE`, only when at least
   :data:`DRIFT_MIN_RECORDS` current decisions or conventions have a ``claudemd_drift_score``
   above :data:`DRIFT_THRESHOLD` (seed ADR-013): the count the last drift scan stored
   (:mod:`agentctx.drift`), read here without scanning anything.
6. One line on what ``ctx_search`` can find, then the closing fence.

The whole served text is at most ``session_start_tokens`` (≤ 1,500) tokens and ``injection_chars``
(≤ 8,000) characters: sections get slices, and :func:`agentctx.core.budget.pack` drops whole entries
from the bottom whenever the total would overflow. Rendering is :mod:`agentctx.context.injection`.

API — consolidation pre-computes the digest, session-start serves it:

``build(db, project, *, rank=None, cfg=None) -> Built``
    The project's digest without the handover (a :data:`HANDOVER_TOKENS` slice stays free for it).
    ``rank(section, records) -> records`` reorders the candidates of a section — ``"profile"``,
    ``"decisions"`` (the current decisions and conventions, pinned ones first, then the most
    recent, :data:`RANK_CANDIDATES` in all) or ``"preferences"``; it may drop records but never
    adds any. Without it the order is
    pinned first, then confidence (explicit, reinforced, inferred), then the most recent.
``refresh(db, project, *, rank=None, builder="inline", cfg=None) -> Built``
    :func:`build`, then store it with :func:`agentctx.store.digests.save`, stamped with the change
    counter read *before* building (a write racing the build leaves the digest stale, not wrong).
``serve(db, project, worktree, *, cfg=None, save=True, fresh=None) -> Served``
    What session-start injects: the stored digest when it is fresh (no record changed since it was
    built), else one built inline (and stored when ``save``), plus the worktree's last handover.
``subagent_slice(db, project, *, max_tokens, cfg=None) -> Built``
    Active decisions and conventions only, for SubagentStart.

:class:`Built` and :class:`Served` carry ``text``, ``tokens`` (the one estimator's count) and
``record_ids`` (the ids of the records the text shows, read back from it).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from agentctx.context import injection
from agentctx.core import config
from agentctx.core.budget import char_limit, estimate_tokens, pack, truncate
from agentctx.core.lean import NamedTuple
from agentctx.store import digests, records
from agentctx.store.db import Store
from agentctx.store.models import GLOBAL_PROJECT, Project, Record

Rank = Callable[[str, list[Record]], list[Record]]

PROFILE, DECISIONS, HANDOVER, PREFERENCES, DRIFT = (
    "profile", "decisions", "handover", "preferences", "drift")
HEADERS = {
    PROFILE: "## Project profile",
    DECISIONS: "## Active decisions and conventions",
    HANDOVER: "## Last handover for this worktree",
    PREFERENCES: "## Developer preferences",
    DRIFT: "## CLAUDE.md drift",
}
PROFILE_TOKENS = 200
HANDOVER_TOKENS = 400
DRIFT_THRESHOLD = 0.5  # = agentctx.store.drift_state.FLAGGED (a test checks they agree)
DRIFT_MIN_RECORDS = 2
# The SessionStart note on drift (missing + contradicted records); it never mentions --yes: the
# user reviews the proposed diff before anything is written.
DRIFT_NOTE = ("{count} decisions in the context store are not reflected in {file} — suggest "
              "`agentctx sync` to the user.")
# Candidates read for the decisions section: pinned ones first, then the most recent ones.
DEFAULT_CANDIDATES = 100
RANK_CANDIDATES = 500
SNIPPET_CHARS = {PROFILE: 0, DECISIONS: 140, PREFERENCES: 100}
_CONFIDENCE_ORDER = {"explicit": 0, "reinforced": 1, "inferred": 2}
_PLURALS = (("decision", "decisions"), ("convention", "conventions"), ("bugfix", "bugfixes"),
            ("discovery", "discoveries"), ("preference", "preferences"),
            ("handover", "handovers"), ("profile", "profiles"))


class Built(NamedTuple):
    """A digest (or slice) as built: its text, estimated tokens and the record ids it shows."""

    text: str
    tokens: int
    record_ids: tuple[str, ...]


class Served(NamedTuple):
    """What session-start injects, and whether it came from the pre-computed digest."""

    text: str
    tokens: int
    record_ids: tuple[str, ...]
    stored: bool


EMPTY = Built("", 0, ())


def handover_key(worktree: str) -> str:
    """The record key of a worktree's handover (one current handover per worktree)."""
    return f"worktree:{worktree}"


def limits(cfg: config.Config | None = None) -> tuple[int, int]:
    """The session-start budget: (tokens, characters), never above the laws."""
    cfg = cfg or config.Config.load()
    tokens = min(cfg.get_int("session_start_tokens"), config.SESSION_START_MAX_TOKENS)
    chars = min(cfg.get_int("injection_chars"), config.INJECTION_MAX_CHARS)
    return tokens, chars


def default_order(records_: Sequence[Record]) -> list[Record]:
    """Pinned first, then by confidence (explicit, reinforced, inferred), then most recent."""
    newest_first = sorted(records_, key=lambda r: (r.valid_from, r.pk), reverse=True)
    return sorted(newest_first, key=lambda r: (not r.pinned,
                                               _CONFIDENCE_ORDER.get(r.confidence, 3)))


# ----------------------------------------------------------------------------- candidates


def _profile(db: Store, project: Project) -> list[Record]:
    from agentctx.context.project_profile import current

    return current(db, project.id)


def _decisions(db: Store, project: Project, many: bool) -> list[Record]:
    found = records.list_records(db, project_id=project.id, types=("decision", "convention"),
                                 pinned_first=True,
                                 limit=RANK_CANDIDATES if many else DEFAULT_CANDIDATES)
    return default_order(found)


def _preferences(db: Store) -> list[Record]:
    found = records.list_records(db, project_id=GLOBAL_PROJECT, types=("preference",))
    return default_order([r for r in found if r.confidence in ("reinforced", "explicit")])


def _apply(rank: Rank | None, section: str, candidates: list[Record]) -> list[Record]:
    if rank is None or not candidates:
        return candidates
    allowed = {r.id for r in candidates}
    return [r for r in rank(section, list(candidates)) if r.id in allowed]


# ----------------------------------------------------------------------------- assembly


def _section(name: str, items: Sequence[str], max_chars: int) -> list[str]:
    """The section header and the leading items that fit ``max_chars`` (nothing if none fit)."""
    if not items or max_chars <= 0:
        return []
    packed = pack(items, max_tokens=max_chars, max_chars=max_chars, header=HEADERS[name])
    if packed.kept == 0:
        return []
    return [HEADERS[name], *items[:packed.kept]]


def _size(lines: Sequence[str]) -> int:
    """Characters ``lines`` add to a newline-joined text (one separator each)."""
    return sum(len(line) + 1 for line in lines)


def _drop_empty_sections(items: list[str]) -> list[str]:
    kept: list[str] = []
    for index, item in enumerate(items):
        if item.startswith(injection.SECTION_PREFIX):
            following = items[index + 1] if index + 1 < len(items) else None
            if following is None or following.startswith(injection.SECTION_PREFIX):
                continue
        kept.append(item)
    return kept


def assemble(head: str, items: Sequence[str], foot: str, max_tokens: int, max_chars: int) -> str:
    """Join head, the leading items that fit and foot within both budgets.

    Whole items are dropped from the bottom (:func:`agentctx.core.budget.pack`), and a section
    header left without entries goes too.
    """
    current = _drop_empty_sections(list(items))
    while True:
        packed = pack(current, max_tokens=max_tokens, max_chars=max_chars, header=head,
                      footer=foot)
        kept = current[:packed.kept]
        cleaned = _drop_empty_sections(kept)
        if cleaned == kept:
            return packed.text
        current = cleaned


def _search_line(db: Store, project: Project) -> tuple[str, int]:
    from agentctx.store.stats import record_counts

    counts = {t: c["current"] for t, c in record_counts(db, project.id).items() if c["current"]}
    total = sum(counts.values())
    if not total:
        return ("ctx_search finds recorded decisions, conventions, bugfixes and discoveries by "
                "words or file; none are recorded for this project yet."), 0
    parts = [f"{counts[t]} {t if counts[t] == 1 else plural}" for t, plural in _PLURALS
             if t in counts]
    return (f"ctx_search finds the project's {total} current records ({', '.join(parts)}) by "
            "words or file; ctx_get <id> returns one in full."), total


def _built(text: str) -> Built:
    return Built(text, estimate_tokens(text), tuple(injection.ids_in(text)))


# ----------------------------------------------------------------------------- public API


def memory_file_name(root: str) -> str:
    """``AGENTS.md`` when the project has no ``CLAUDE.md`` but an ``AGENTS.md`` (Claude Code then
    reads that one, as :func:`agentctx.drift.memfiles.primary` says), else ``CLAUDE.md``."""
    isfile, join = os.path.isfile, os.path.join
    if isfile(join(root, "CLAUDE.md")) or isfile(join(root, ".claude", "CLAUDE.md")):
        return "CLAUDE.md"
    return "AGENTS.md" if isfile(join(root, "AGENTS.md")) else "CLAUDE.md"


def build(db: Store, project: Project, *, rank: Rank | None = None,
          cfg: config.Config | None = None) -> Built:
    """The project's digest without the handover (see the module docstring)."""
    cfg = cfg or config.Config.load()
    max_tokens, max_chars = limits(cfg)
    head = injection.header("session-start", project.name)
    line, total = _search_line(db, project)
    foot = line + "\n" + injection.FENCE_CLOSE
    handover_reserve = char_limit(HANDOVER_TOKENS, max_chars) + 1
    # What the body may use: the budget minus head, foot, their separators and the handover slice.
    room = char_limit(max_tokens, max_chars) - len(head) - len(foot) - 1 - handover_reserve

    profile_records = _apply(rank, PROFILE, _profile(db, project))
    profile_items = [injection.item_line(r, SNIPPET_CHARS[PROFILE]) for r in profile_records]
    profile = _section(PROFILE, profile_items, min(room, char_limit(PROFILE_TOKENS, max_chars)))
    room -= _size(profile)

    preference_items = [injection.item_line(r, SNIPPET_CHARS[PREFERENCES])
                        for r in _apply(rank, PREFERENCES, _preferences(db))]
    preference_slice = char_limit(min(cfg.get_int("profile_tokens"), max_tokens), max_chars)
    preferences = _section(PREFERENCES, preference_items, min(room, preference_slice))
    room -= _size(preferences)

    from agentctx.store.stats import drift_count

    drifted = drift_count(db, project.id, DRIFT_THRESHOLD)
    drift: list[str] = []
    if drifted >= DRIFT_MIN_RECORDS:
        note = DRIFT_NOTE.format(count=drifted, file=memory_file_name(project.root))
        drift = _section(DRIFT, ["- " + note], room)
        room -= _size(drift)

    decision_items = [injection.item_line(r, SNIPPET_CHARS[DECISIONS])
                      for r in _apply(rank, DECISIONS, _decisions(db, project, rank is not None))]
    decisions = _section(DECISIONS, decision_items, room)

    body = [*profile, *decisions, *preferences, *drift]
    # A folder whose only fact is its own name (nothing recorded, nothing detected) gets nothing.
    name_only = all(r.key == "name" for r in profile_records)
    if not (decisions or preferences or drift) and name_only and total <= len(profile_records):
        return EMPTY
    text = assemble(head, body, foot, max_tokens,
                    min(max_chars, char_limit(max_tokens, max_chars) - handover_reserve))
    return _built(text)


def refresh(db: Store, project: Project, *, rank: Rank | None = None, builder: str = "inline",
            cfg: config.Config | None = None) -> Built:
    """Build the project's digest and store it (see the module docstring)."""
    counter = db.change_counter()
    built = build(db, project, rank=rank, cfg=cfg)
    digests.save(db, project.id, built.text, tokens=built.tokens, record_ids=built.record_ids,
                 builder=builder, change_counter=counter)
    return built


def _split(text: str) -> tuple[str, list[str], str] | None:
    """A digest's head (fence and label), body lines and foot (search line and fence close)."""
    lines = text.split("\n")
    if (len(lines) < 4 or not lines[0].startswith("<agentctx-context")
            or lines[-1] != injection.FENCE_CLOSE):
        return None
    return "\n".join(lines[:2]), lines[2:-2], "\n".join(lines[-2:])


def _handover_items(db: Store, project: Project, worktree: str, max_chars: int) -> list[str]:
    record = records.find_current_by_key(db, project.id, "handover", handover_key(worktree))
    if record is None:
        return []
    room = max_chars - len(HEADERS[HANDOVER]) - 2
    entry = truncate(injection.item_block(record), room, f" … ctx_get {record.id}")
    if not entry.startswith(injection.ITEM_PREFIX):
        return []
    return [HEADERS[HANDOVER], entry]


def _insert_handover(body: list[str], handover: list[str]) -> list[str]:
    later = (HEADERS[PREFERENCES], HEADERS[DRIFT])
    for index, line in enumerate(body):
        if line in later:
            return [*body[:index], *handover, *body[index:]]
    return [*body, *handover]


def serve(db: Store, project: Project, worktree: str, *, cfg: config.Config | None = None,
          save: bool = True, fresh: digests.Digest | None = None) -> Served:
    """The session-start injection for a worktree of ``project`` (see the module docstring).

    ``fresh`` is the project's fresh stored digest when the caller has already loaded it.
    """
    cfg = cfg or config.Config.load()
    max_tokens, max_chars = limits(cfg)
    stored = fresh if fresh is not None else digests.load_fresh(db, project.id)
    parts = _split(stored.text) if stored is not None else None
    if parts is None:
        built = refresh(db, project, cfg=cfg) if save else build(db, project, cfg=cfg)
        parts = _split(built.text)
        stored = None
    if parts is None:
        return Served("", 0, (), False)
    head, body, foot = parts
    reserve = char_limit(HANDOVER_TOKENS, max_chars)
    handover = _handover_items(db, project, worktree, reserve)
    text = assemble(head, _insert_handover(body, handover) if handover else body, foot,
                    max_tokens, max_chars)
    return Served(text, estimate_tokens(text), tuple(injection.ids_in(text)), stored is not None)


def subagent_slice(db: Store, project: Project, *, max_tokens: int,
                   cfg: config.Config | None = None) -> Built:
    """Active decisions and conventions only, within ``max_tokens`` (SubagentStart)."""
    cfg = cfg or config.Config.load()
    tokens = min(max_tokens, config.SESSION_START_MAX_TOKENS)
    chars = min(cfg.get_int("injection_chars"), config.INJECTION_MAX_CHARS)
    items = [injection.item_line(r, SNIPPET_CHARS[DECISIONS])
             for r in _decisions(db, project, False)]
    if not items:
        return EMPTY
    head = injection.header("subagent-start", project.name)
    text = assemble(head, [HEADERS[DECISIONS], *items], injection.FENCE_CLOSE, tokens, chars)
    if not injection.ids_in(text):
        return EMPTY
    return _built(text)
