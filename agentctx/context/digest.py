"""The SessionStart digest: a project's stable context on a hard budget (Tier 1 injection).

Sections, in this order:

1. **Project profile** — at most two lines without ids: the name, stack and entry points, then
   the commands (``profile`` records; :func:`agentctx.context.project_profile.lines`).
2. **Decisions**, then **Conventions** — the project's current ones, chosen in one ranked order
   (pinned first, …) and shown grouped by type. Those the memory files Claude Code loads already
   state (:mod:`agentctx.context.already`: CLAUDE.md and its imports, AGENTS.md where it is the
   one read, MEMORY.md's head) are left out, with one line per file saying how many ("3
   decisions are left out: CLAUDE.md already states them."). A record whose named paths are all
   gone (:mod:`agentctx.context.pathcheck`) comes last, marked ``(harbor/billing/ no longer
   exists)``.
3. **Last handover for this worktree** — added at serve time (the stored digest is per project,
   worktrees share it), from the current ``handover`` record keyed ``worktree:<path>``.
4. **Developer preferences** — global preferences with confidence ``reinforced`` or ``explicit``,
   within the ``profile_tokens`` knob.
5. **CLAUDE.md drift** — one line, :data:`DRIFT_NOTE`, only when at least
   :data:`DRIFT_MIN_RECORDS` current decisions or conventions have a ``claudemd_drift_score``
   above :data:`DRIFT_THRESHOLD` (seed ADR-013): the count the last drift scan stored
   (:mod:`agentctx.drift`), read here without scanning anything.
6. One line on what ``ctx_search`` can find, then the closing fence.

Each record line is ``- [<short id>] <marks> · <title> — <start of the body>``: the store's short
id, and metadata only where it informs (:mod:`agentctx.context.injection`): ``inferred``, a date
for a change made in the last :data:`RECENT_CHANGE_DAYS` days and for the handover, a team file
mark. The whole served text is at most ``session_start_tokens`` (≤ 1,500) tokens and
``injection_chars`` (≤ 8,000) characters: sections get slices, and
:func:`agentctx.core.budget.pack` drops whole entries from the bottom whenever the total would
overflow.

API — consolidation pre-computes the digest, session-start serves it:

``build(db, project, *, rank=None, cfg=None, folder=None) -> Built``
    The digest of ``project`` as seen from ``folder`` (default: its root) without the handover
    (a :data:`HANDOVER_TOKENS` slice stays free for it). ``rank(section, records) -> records``
    reorders the candidates of a section — ``"profile"``, ``"decisions"`` (the current decisions
    and conventions, pinned ones first, then the most recent, :data:`RANK_CANDIDATES` in all) or
    ``"preferences"``; it may drop records but never adds any. Without it the order is pinned
    first, then confidence (explicit, reinforced, inferred), then the most recent.
``refresh(db, project, *, rank=None, builder="inline", cfg=None) -> Built``
    :func:`build`, then store it with :func:`agentctx.store.digests.save`, stamped with the change
    counter read *before* building (a write racing the build leaves the digest stale, not wrong)
    and with its basis: the folder, the memory files' coverage it left records out by, and the
    paths it checked.
``serve(db, project, worktree, *, cfg=None, save=True, fresh=None) -> Served``
    What session-start injects: the stored digest when it is fresh (no record changed since it was
    built) and its basis still holds (same folder, same coverage, the same paths gone — a few
    ``stat`` calls), else one built inline (stored when ``save`` and the worktree is the project's
    root), plus the worktree's last handover.
``subagent_slice(db, project, *, max_tokens, cfg=None) -> Built``
    Active decisions and conventions only, for SubagentStart.

:class:`Built` and :class:`Served` carry ``text``, ``tokens`` (the one estimator's count),
``record_ids`` (the whole ids of the records the text shows, the profile's included) and
``left_out`` (``(record id, file)`` of the records left out as already stated).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from datetime import timedelta

from agentctx.context import already as memory_stated
from agentctx.context import injection, pathcheck
from agentctx.core import config
from agentctx.core.budget import char_limit, estimate_tokens, pack, truncate
from agentctx.core.ids import now as clock_now
from agentctx.core.ids import to_iso
from agentctx.core.lean import NamedTuple
from agentctx.store import digests, records
from agentctx.store.db import Store
from agentctx.store.models import GLOBAL_PROJECT, Project, Record
from agentctx.store.selection import Selection

Rank = Callable[[str, list[Record]], list[Record]]

PROFILE, DECISIONS, CONVENTIONS, HANDOVER, PREFERENCES, DRIFT = (
    "profile", "decisions", "conventions", "handover", "preferences", "drift")
HEADERS = {
    DECISIONS: "## Decisions",
    CONVENTIONS: "## Conventions",
    HANDOVER: "## Last handover for this worktree",
    PREFERENCES: "## Developer preferences",
    DRIFT: "## CLAUDE.md drift",
}
SECTION_OF_TYPE = {"decision": DECISIONS, "convention": CONVENTIONS}
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
SNIPPET_CHARS = {DECISIONS: 140, PREFERENCES: 100}
# A record that replaced an earlier version this recently shows since when it holds.
RECENT_CHANGE_DAYS = 90
PROFILE_LEADS = injection.PROFILE_LEADS
SHORT_BATCH = 40  # short ids are looked up for this many candidates at a time
_CONFIDENCE_ORDER = {"explicit": 0, "reinforced": 1, "inferred": 2}
_PLURALS = (("decision", "decisions"), ("convention", "conventions"), ("bugfix", "bugfixes"),
            ("discovery", "discoveries"), ("preference", "preferences"),
            ("handover", "handovers"), ("profile", "profiles"))


class Built(NamedTuple):
    """A digest (or slice) as built: its text, estimated tokens, the record ids it shows, the
    records left out as already stated (with the file) and what it was built on."""

    text: str
    tokens: int
    record_ids: tuple[str, ...]
    left_out: tuple[tuple[str, str], ...] = ()
    basis: dict[str, object] = {}  # noqa: RUF012 - a NamedTuple default, never mutated
    profile_ids: tuple[str, ...] = ()


class Served(NamedTuple):
    """What session-start injects, and whether it came from the pre-computed digest."""

    text: str
    tokens: int
    record_ids: tuple[str, ...]
    stored: bool
    left_out: tuple[tuple[str, str], ...] = ()


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
    found = records.list_records(db,
                                 Selection(project_id=project.id, types=("decision", "convention")),
                                 pinned_first=True,
                                 limit=RANK_CANDIDATES if many else DEFAULT_CANDIDATES)
    return default_order(found)


def _preferences(db: Store) -> list[Record]:
    found = records.list_records(db, Selection(project_id=GLOBAL_PROJECT, types=("preference",)))
    return default_order([r for r in found if r.confidence in ("reinforced", "explicit")])


def _apply(rank: Rank | None, section: str, candidates: list[Record]) -> list[Record]:
    if rank is None or not candidates:
        return candidates
    allowed = {r.id for r in candidates}
    return [r for r in rank(section, list(candidates)) if r.id in allowed]


class _Shorts:
    """The store's short ids of candidates, looked up a batch at a time (most never show)."""

    def __init__(self, db: Store, candidates: Sequence[Record]) -> None:
        self._db = db
        self._order = [r.id for r in candidates]
        self._known: dict[str, str] = {}
        self._next = 0

    def __call__(self, record_id: str) -> str:
        while record_id not in self._known and self._next < len(self._order):
            batch = self._order[self._next:self._next + SHORT_BATCH]
            self._next += len(batch)
            self._known.update(records.short_ids(self._db, batch))
        if record_id not in self._known:
            self._known.update(records.short_ids(self._db, [record_id]))
        return self._known[record_id]


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


def _recent_changes(db: Store, candidates: Sequence[Record]) -> set[str]:
    """Candidates that replaced an earlier version within :data:`RECENT_CHANGE_DAYS` days."""
    cutoff = to_iso(clock_now() - timedelta(days=RECENT_CHANGE_DAYS))
    recent = [r.id for r in candidates if r.valid_from >= cutoff]
    return records.successors(db, recent) if recent else set()


def _grouped(chosen: Sequence[tuple[str, str]], notes: Mapping[str, list[str]]) -> list[str]:
    """``(section, line)`` pairs in ranked order, as sections in :data:`HEADERS` order, each
    ending with its notes of what was left out."""
    lines: list[str] = []
    for section in (DECISIONS, CONVENTIONS):
        mine = [line for name, line in chosen if name == section]
        if mine or notes.get(section):
            lines.extend([HEADERS[section], *mine, *notes.get(section, [])])
    return lines


def _choose(entries: Sequence[tuple[str, str]], room: int,
            opened: set[str]) -> list[tuple[str, str]]:
    """The leading ``(section, line)`` entries that fit ``room`` with the headers of their
    sections not ``opened`` yet."""
    chosen: list[tuple[str, str]] = []
    used = 0
    opened = set(opened)
    for section, line in entries:
        extra = len(line) + 1 + (0 if section in opened else len(HEADERS[section]) + 1)
        if used + extra > room:
            break
        used += extra
        opened.add(section)
        chosen.append((section, line))
    return chosen


def _built(text: str, shown: Mapping[str, str], profile_ids: Sequence[str],
           left_out: Sequence[tuple[str, str]], basis: dict[str, object]) -> Built:
    """``text`` with the whole ids it shows: the profile's when its lines are in, then the
    entries' (``shown`` maps a whole id to the id shown)."""
    by_shown = {value: key for key, value in shown.items()}
    ids = [by_shown[s] for s in injection.ids_in(text) if s in by_shown]
    if profile_ids and any(line.startswith(PROFILE_LEADS) for line in text.split("\n")):
        ids = [*profile_ids, *ids]
    return Built(text, estimate_tokens(text), tuple(ids), tuple(left_out), basis,
                 tuple(profile_ids) if ids[:len(profile_ids)] == list(profile_ids) else ())


# ----------------------------------------------------------------------------- public API


def memory_file_name(root: str) -> str:
    """``AGENTS.md`` when the project has no ``CLAUDE.md`` but an ``AGENTS.md`` (Claude Code then
    reads that one, as :func:`agentctx.drift.memfiles.primary` says), else ``CLAUDE.md``."""
    isfile, join = os.path.isfile, os.path.join
    if isfile(join(root, "CLAUDE.md")) or isfile(join(root, ".claude", "CLAUDE.md")):
        return "CLAUDE.md"
    return "AGENTS.md" if isfile(join(root, "AGENTS.md")) else "CLAUDE.md"


def build(db: Store, project: Project, *, rank: Rank | None = None,
          cfg: config.Config | None = None, folder: str | None = None,
          check_budget: int = pathcheck.MAX_CHECKS) -> Built:
    """The project's digest as seen from ``folder`` without the handover (see the module
    docstring); at most ``check_budget`` ``stat`` calls check the paths its records name."""
    cfg = cfg or config.Config.load()
    folder = folder or project.root
    max_tokens, max_chars = limits(cfg)
    head = injection.header("session-start", project.name)
    line, total = _search_line(db, project)
    foot = line + "\n" + injection.FENCE_CLOSE
    handover_reserve = char_limit(HANDOVER_TOKENS, max_chars) + 1
    # What the body may use: the budget minus head, foot, their separators and the handover slice.
    room = char_limit(max_tokens, max_chars) - len(head) - len(foot) - 1 - handover_reserve

    from agentctx.context.project_profile import lines  # late: serving never builds lines

    profile_records = _apply(rank, PROFILE, _profile(db, project))
    profile = lines(profile_records, project.name, min(room, char_limit(PROFILE_TOKENS, max_chars)))
    room -= _size(profile)

    preference_records = _apply(rank, PREFERENCES, _preferences(db))
    decision_records = _apply(rank, DECISIONS, _decisions(db, project, rank is not None))
    shorts = _Shorts(db, [*decision_records, *preference_records])
    shown: dict[str, str] = {}

    def entry(record: Record, snippet: int, **marks: object) -> str:
        short = shorts(record.id)
        shown[record.id] = short
        return injection.item_line(record, snippet, short, kind=False,
                                   **marks)  # type: ignore[arg-type]

    preference_items = [entry(r, SNIPPET_CHARS[PREFERENCES]) for r in preference_records]
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

    stated = memory_stated.load(db, project.id, folder)
    candidates, left = memory_stated.split(decision_records, stated)
    notes = {section: memory_stated.notes([(r, where) for r, where in left
                                           if SECTION_OF_TYPE.get(r.type) == section])
             for section in (DECISIONS, CONVENTIONS)}
    notes = {section: found for section, found in notes.items() if found}
    room -= sum(_size(found) + len(HEADERS[section]) + 1 for section, found in notes.items())
    paths, kept_paths = pathcheck.named(db, folder, candidates)
    gone = pathcheck.check_many(folder, paths, kept_paths, budget=check_budget)
    candidates = ([r for r in candidates if r.id not in gone]
                  + [r for r in candidates if r.id in gone])  # ranked down
    changed = _recent_changes(db, candidates[:4 * SHORT_BATCH])
    entries: list[tuple[str, str]] = []
    used = 0
    for record in candidates:
        if used > room:
            break  # the rest cannot fit: their short ids are never looked up
        text = entry(record, SNIPPET_CHARS[DECISIONS], since=record.id in changed,
                     gone=gone.get(record.id, ()))
        used += len(text) + 1
        entries.append((SECTION_OF_TYPE.get(record.type, DECISIONS), text))
    decisions = _grouped(_choose(entries, max(0, room), set(notes)), notes)

    body = [*profile, *decisions, *preferences, *drift]
    # A folder whose only fact is its own name (nothing recorded, nothing detected) gets nothing.
    name_only = all(r.key == "name" for r in profile_records)
    if not (any(line.startswith(injection.ITEM_PREFIX) for line in decisions) or preferences
            or drift or notes) and name_only and total <= len(profile_records):
        return EMPTY
    text = assemble(head, body, foot, max_tokens,
                    min(max_chars, char_limit(max_tokens, max_chars) - handover_reserve))
    # What serving checks again: the shown records' paths, then the ranked-down ones', as many
    # as its stat budget reaches (the rest are taken as they were).
    checked: list[list[object]] = []
    stats = 0
    for rid in [*(r for r in shown if paths.get(r)), *(r for r in gone if r not in shown)]:
        stats += len(paths[rid])
        if stats > pathcheck.MAX_CHECKS:
            break
        checked.append([rid, paths[rid]])
    basis: dict[str, object] = {
        "folder": folder, "coverage": stated.measured_at, "checks": checked,
        "kept": {str(item[0]): kept_paths[str(item[0])] for item in checked
                 if item[0] in kept_paths},
        "gone": sorted(str(item[0]) for item in checked if item[0] in gone),
        "shown": {short: rid for rid, short in shown.items()}}
    profile_ids = [r.id for r in profile_records] if profile else []
    return _built(text, shown, profile_ids, [(r.id, where) for r, where in left], basis)


def refresh(db: Store, project: Project, *, rank: Rank | None = None, builder: str = "inline",
            cfg: config.Config | None = None, check_budget: int = pathcheck.MAX_CHECKS) -> Built:
    """Build the project's digest and store it (see the module docstring)."""
    counter = db.change_counter()
    built = build(db, project, rank=rank, cfg=cfg, check_budget=check_budget)
    digests.save(db, project.id, built.text, tokens=built.tokens, record_ids=built.record_ids,
                 builder=builder, change_counter=counter,
                 basis={**built.basis, "left_out": [list(pair) for pair in built.left_out],
                        "profile": list(built.profile_ids)})
    return built


def _split(text: str) -> tuple[str, list[str], str] | None:
    """A digest's head (fence and label), body lines and foot (search line and fence close)."""
    lines = text.split("\n")
    if (len(lines) < 4 or not lines[0].startswith("<agentctx-context")
            or lines[-1] != injection.FENCE_CLOSE):
        return None
    return "\n".join(lines[:2]), lines[2:-2], "\n".join(lines[-2:])


def _handover_items(db: Store, project: Project, worktree: str,
                    max_chars: int) -> tuple[list[str], str | None, str | None]:
    """The handover section, the handover's id and its id as shown."""
    record = records.find_current_by_key(db, project.id, "handover", handover_key(worktree))
    if record is None:
        return [], None, None
    short = records.short_ids(db, [record.id])[record.id]
    gone = pathcheck.all_gone(worktree, pathcheck.named_paths(f"{record.title} {record.body}",
                                                              worktree))
    room = max_chars - len(HEADERS[HANDOVER]) - 2
    entry = truncate(injection.item_block(record, short=short, kind=False, since=True, gone=gone),
                     room, f" … ctx_get {short}")
    if not entry.startswith(injection.ITEM_PREFIX):
        return [], None, None
    return [HEADERS[HANDOVER], entry], record.id, short


def _insert_handover(body: list[str], handover: list[str]) -> list[str]:
    later = (HEADERS[PREFERENCES], HEADERS[DRIFT])
    for index, line in enumerate(body):
        if line in later:
            return [*body[:index], *handover, *body[index:]]
    return [*body, *handover]


def holds(stored: digests.Digest, db: Store, project: Project, worktree: str) -> bool:
    """Whether a fresh stored digest's basis still holds for ``worktree``: built for that folder,
    on the coverage its memory files still have, with the same paths gone (a few ``stat``
    calls)."""
    basis = stored.basis
    if basis.get("folder") != worktree:
        return False
    if memory_stated.load(db, project.id, worktree).measured_at != basis.get("coverage", ""):
        return False
    checks = basis.get("checks")
    kept = basis.get("kept")
    was_gone = basis.get("gone")
    if not isinstance(checks, list) or not isinstance(kept, dict) or \
            not isinstance(was_gone, list):
        return False
    budget = pathcheck.MAX_CHECKS  # the records shown first: those beyond it are taken as before
    for item in checks:
        if not (isinstance(item, list) and len(item) == 2 and isinstance(item[1], list)):
            return False
        record_id, paths = str(item[0]), [str(p) for p in item[1]]
        if len(paths) > budget:
            break
        budget -= len(paths)
        now_gone = bool(pathcheck.all_gone(worktree, paths, kept.get(record_id)))
        if now_gone != (record_id in was_gone):
            return False
    return True


def serve(db: Store, project: Project, worktree: str, *, cfg: config.Config | None = None,
          save: bool = True, fresh: digests.Digest | None = None) -> Served:
    """The session-start injection for a worktree of ``project`` (see the module docstring).

    ``fresh`` is the project's fresh stored digest when the caller has already loaded it.
    """
    cfg = cfg or config.Config.load()
    max_tokens, max_chars = limits(cfg)
    stored = fresh if fresh is not None else digests.load_fresh(db, project.id)
    if stored is not None and not holds(stored, db, project, worktree):
        stored = None
    parts = _split(stored.text) if stored is not None else None
    if stored is not None and parts is not None:
        known = list(stored.record_ids)
        raw_left = stored.basis.get("left_out")
        left_out = tuple((str(p[0]), str(p[1])) for p in raw_left) \
            if isinstance(raw_left, list) else ()
        raw_profile = stored.basis.get("profile")
        profile = [str(rid) for rid in raw_profile] if isinstance(raw_profile, list) else []
        raw_shown = stored.basis.get("shown")
        by_short = {str(k): str(v) for k, v in raw_shown.items()} \
            if isinstance(raw_shown, dict) else {}
    else:
        if save and worktree == project.root:
            built = refresh(db, project, cfg=cfg)
        else:
            built = build(db, project, cfg=cfg, folder=worktree)
        parts = _split(built.text)
        stored = None
        known = list(built.record_ids)
        left_out = built.left_out
        profile = list(built.profile_ids)
        raw = built.basis.get("shown")
        by_short = {str(k): str(v) for k, v in raw.items()} if isinstance(raw, dict) else {}
    if parts is None:
        return Served("", 0, (), False)
    head, body, foot = parts
    reserve = char_limit(HANDOVER_TOKENS, max_chars)
    handover, handover_id, handover_short = _handover_items(db, project, worktree, reserve)
    text = assemble(head, _insert_handover(body, handover) if handover else body, foot,
                    max_tokens, max_chars)
    if handover_id is not None and handover_short is not None:
        by_short[handover_short] = handover_id
    return Served(text, estimate_tokens(text), _served_ids(text, known, profile, by_short),
                  stored is not None, left_out)


def _served_ids(text: str, known: Sequence[str], profile: Sequence[str],
                by_short: Mapping[str, str]) -> tuple[str, ...]:
    """The whole ids a served text shows: the profile's while its lines are in, then each
    entry's (``by_short``: the whole id of each id as shown; ``known`` for a digest stored
    without it)."""
    shown = injection.ids_in(text)
    entries = [by_short[s] for s in shown if s in by_short] if by_short else \
        injection.resolve(shown, known)
    if not any(line.startswith(PROFILE_LEADS) for line in text.split("\n")):
        profile = ()
    return tuple(dict.fromkeys([*profile, *entries]))


def subagent_slice(db: Store, project: Project, *, max_tokens: int,
                   cfg: config.Config | None = None) -> Built:
    """Active decisions and conventions only, within ``max_tokens`` (SubagentStart)."""
    cfg = cfg or config.Config.load()
    tokens = min(max_tokens, config.SESSION_START_MAX_TOKENS)
    chars = min(cfg.get_int("injection_chars"), config.INJECTION_MAX_CHARS)
    found = _decisions(db, project, False)
    if not found:
        return EMPTY
    shorts = _Shorts(db, found)
    shown = {r.id: shorts(r.id) for r in found[:SHORT_BATCH]}
    items = [injection.item_line(r, SNIPPET_CHARS[DECISIONS], shown[r.id]) for r in found
             if r.id in shown]
    head = injection.header("subagent-start", project.name)
    text = assemble(head, ["## Decisions and conventions", *items], injection.FENCE_CLOSE,
                    tokens, chars)
    if not injection.ids_in(text):
        return EMPTY
    return _built(text, shown, (), (), {})
