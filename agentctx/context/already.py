"""Not repeated: what ``CLAUDE.md`` (its imports, ``AGENTS.md`` where it is the one read) and
``MEMORY.md``'s head already state is left out of what agentctx injects.

Which records those files state is measured offline, with the drift scan's own coverage
(:mod:`agentctx.drift.loaded`, at consolidation and ``agentctx sync``), and stored per project
folder with each file's size and mtime (:mod:`agentctx.store.memcoverage`). Here, on the hook
path, it is only checked: :func:`load` takes a ``stat`` of each file it was measured on and
gives it back only when none changed (else nothing is left out: repeating a fact is better than
hiding one), and a record edited since it was measured is no longer taken as stated.

The SessionStart digest leaves those records out with one line per file
(:func:`notes`: "3 decisions are left out: CLAUDE.md already states them."); the per-prompt
hook removes them from the judgement's decision after it is made (:func:`leave_out`), and says
so in one line when it still injects something. Receipts and ``agentctx preview`` name them.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Sequence

from agentctx.context import injection
from agentctx.core.budget import char_limit
from agentctx.core.lean import NamedTuple
from agentctx.store import memcoverage as store_stated
from agentctx.store.db import Store
from agentctx.store.models import Hit, Project, Record

TYPE_CHECKING = False
if TYPE_CHECKING:  # the per-prompt part imports the judgement when it runs: SessionStart does not
    from agentctx.context import judgement

_FOLDER_MODE = 0o040000
_PLURALS = {"decision": "decisions", "convention": "conventions", "discovery": "discoveries"}


def fingerprint(record: Record) -> str:
    """What tells whether a record changed since its coverage was measured: its last change."""
    return record.updated_at or record.recorded_at


def _unchanged(entry: Sequence[object]) -> bool:
    """Whether one measured entry (a file's size and mtime, an environment value) still holds."""
    if len(entry) >= 3 and entry[0] == "e":
        return os.environ.get(str(entry[1]), "") == entry[2]
    if len(entry) < 4 or entry[0] != "f":
        return False
    size, mtime = entry[2], entry[3]
    try:
        found = os.stat(str(entry[1]))
    except (OSError, ValueError):
        return size == -1
    if size == -2:
        return found.st_mode & 0o170000 == _FOLDER_MODE and found.st_mtime_ns == mtime
    return found.st_size == size and found.st_mtime_ns == mtime


class Stated(NamedTuple):
    """The records a folder's memory files state, as measured (and still true of the files)."""

    by_id: dict[str, tuple[str, str]]  # record id -> (file, fingerprint)
    measured_at: str = ""  # when it was measured ("": nothing holds)

    def file_of(self, record: Record) -> str | None:
        """The memory file that states ``record`` (``None``: not stated, or it changed since)."""
        found = self.by_id.get(record.id)
        if found is None or found[1] != fingerprint(record):
            return None
        return found[0]


NOTHING = Stated({})


def load(db: Store, project_id: str, folder: str) -> Stated:
    """What ``folder``'s memory files state, as far as the measurement still holds (one query
    and a ``stat`` per file): :data:`NOTHING` when a file every statement depends on changed
    (CLAUDE.md and what decides whether AGENTS.md is read), without the statements of a file
    whose own entries changed (MEMORY.md: its text, the settings and the switch that turn auto
    memory on or off)."""
    measured = store_stated.load(db, project_id, folder)
    if measured is None or not measured.stated:
        return NOTHING
    changed: set[str] = set()
    for entry in measured.files:
        if not _unchanged(entry):
            tag = str(entry[-1]) if len(entry) in (4 if entry[0] == "e" else 5,) else ""
            if not tag:
                return NOTHING
            changed.add(tag)
    if not changed:
        return Stated(measured.stated, measured.computed_at)
    kept = {rid: value for rid, value in measured.stated.items() if value[0] not in changed}
    return Stated(kept, measured.computed_at + " without " + ", ".join(sorted(changed)))


def split(records: Iterable[Record], stated: Stated) -> tuple[list[Record],
                                                             list[tuple[Record, str]]]:
    """``records`` the memory files do not state, and those they do with the file."""
    kept: list[Record] = []
    left: list[tuple[Record, str]] = []
    for record in records:
        where = stated.file_of(record)
        if where is None:
            kept.append(record)
        else:
            left.append((record, where))
    return kept, left


def _kind(records: Sequence[Record]) -> tuple[str, str]:
    types = {r.type for r in records}
    single = types.pop() if len(types) == 1 else "record"
    return single, _PLURALS.get(single, single + "s")


def notes(left: Sequence[tuple[Record, str]]) -> list[str]:
    """One line per memory file: how many records it already states ("3 decisions are left out:
    CLAUDE.md already states them.")."""
    by_file: dict[str, list[Record]] = {}
    for record, where in left:
        by_file.setdefault(where, []).append(record)
    lines = []
    for where, records in by_file.items():
        one, many = _kind(records)
        name = injection.clean(where)
        if len(records) == 1:
            lines.append(f"- 1 {one} is left out: {name} already states it.")
        else:
            lines.append(f"- {len(records)} {many} are left out: {name} already states them.")
    return lines


class LeftOut(NamedTuple):
    """The per-prompt decision once what the memory files state is taken out of it."""

    decision: judgement.Decision
    left: list[tuple[Hit, str]]  # the hits left out, with the file that states each


def leave_out(decision: judgement.Decision, stated: Stated, project_name: str,
              knobs: judgement.Settings, shorts: dict[str, str] | None = None) -> LeftOut:
    """``decision`` without the records ``stated`` names, its text composed again (the
    judgement's choice is not revisited: a place freed is not given to another candidate); when
    something is still injected, one line says what was left out and where it is stated."""
    from agentctx.context import judgement  # late: SessionStart imports this module without it

    left = [(hit, where) for hit in decision.shown
            if (where := stated.file_of(hit.record)) is not None]
    if not left:
        return LeftOut(decision, [])
    gone = {hit.record.id for hit, _ in left}
    full = [h for h in decision.injected if h.record.id not in gone]
    pointers = [h for h in decision.pointers if h.record.id not in gone]
    text, full, pointers = judgement.compose(full, project_name, knobs, pointers=pointers,
                                             shorts=shorts)
    if text:
        text = _with_notes(text, notes([(hit.record, where) for hit, where in left]), knobs)
    verdicts = [v._replace(outcome=judgement.STATED) if v.hit.record.id in gone else v
                for v in decision.verdicts]
    return LeftOut(judgement.Decision(verdicts, text, full, pointers, decision.skipped), left)


def decide(db: Store, project: Project, prompt: str, knobs: judgement.Settings, root: str, *,
           seen: Collection[str] = ()) -> LeftOut:
    """What the per-prompt hook injects for ``prompt`` in the project folder ``root``: the
    judgement's decision (paths checked in ``root``), then what the memory files of ``root``
    already state left out — the one function the hook and both previews call."""
    from agentctx.context import judgement  # late: SessionStart imports this module without it

    decision = judgement.decide(db, project.id, project.name, prompt, knobs, seen=seen,
                                root=root)
    if not decision.shown:
        return LeftOut(decision, [])
    stated = load(db, project.id, root)
    if not any(stated.file_of(hit.record) for hit in decision.shown):
        return LeftOut(decision, [])
    return leave_out(decision, stated, project.name, knobs,
                     judgement.short_ids(db, decision.shown))


def _with_notes(text: str, lines: list[str], knobs: judgement.Settings) -> str:
    """``text`` with ``lines`` before its closing fence, as far as the budget allows."""
    limit = char_limit(knobs.max_tokens, knobs.max_chars)
    body = text[:-len(injection.FENCE_CLOSE)]
    for line in lines:
        if len(body) + len(line) + 1 + len(injection.FENCE_CLOSE) > limit:
            break
        body += line + "\n"
    return body + injection.FENCE_CLOSE
