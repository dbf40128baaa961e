"""The proposed memory-file changes for a scan: the marked section, strikethroughs, a unified diff.

* **Additions** (missing records, and contradicted ones whose old text cannot be struck where it
  is) go to one marked section, ``## Decisions (kept by agentctx)`` between
  ``<!-- agentctx:begin -->`` and ``<!-- agentctx:end -->``, in ``./CLAUDE.md`` (else
  ``./.claude/CLAUDE.md``, else a new ``./CLAUDE.md``); a file that already holds the section
  keeps it, updated in place. An entry is one list item ending in the record's id comment. Entries
  whose record was since superseded give way to the record now in force; entries with ids this
  store does not know (a teammate's) are left alone.
* **Superseded text** (contradicted and stale) is struck through where it is —
  ``~~old~~ → <!-- agentctx:ID --> new`` — in whichever scanned file holds it, the replacing
  record beside it. ``CLAUDE.local.md``, files outside the project folder, non-Markdown imports,
  code fences and headings are never edited (the candidate still says where the text is).

Nothing here writes: :func:`agentctx.drift.apply` does, after confirmation.
"""

from __future__ import annotations

import difflib
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import NamedTuple

from agentctx.drift import memfiles
from agentctx.drift.memfiles import BEGIN_MARK, END_MARK, ID_COMMENT, SECTION_HEADING, Unit
from agentctx.drift.scanner import CONTRADICTED, MISSING, STALE, Candidate, Scan
from agentctx.store.models import Record

ENTRY_BODY_CHARS = 240
_CELL_SPLIT = re.compile(r"(?<!\\)\|")


class FileChange(NamedTuple):
    """One file the proposal changes: its text before (``None``: a new file) and after."""

    path: Path
    name: str
    before: str | None
    after: str


class Proposed(NamedTuple):
    """A candidate with where the proposal puts it (``file``/``line`` of the JSON output)."""

    candidate: Candidate
    file: str | None
    line: int | None
    edited: bool  # whether the diff changes something for it
    note: str  # why not, when it does not


class Proposal(NamedTuple):
    """What ``agentctx sync`` proposes for one scan."""

    scan: Scan
    target: str  # the file additions go to
    candidates: tuple[Proposed, ...]
    changes: tuple[FileChange, ...]
    diff: str
    problems: tuple[str, ...]  # files that could not be edited, and why


def entry_text(record: Record) -> str:
    """A record as one line of Markdown: its title, then its body, shortened."""
    title = _clean(record.title)
    body = _clean(record.body)
    if len(body) > ENTRY_BODY_CHARS:
        body = body[:ENTRY_BODY_CHARS].rsplit(" ", 1)[0].rstrip(" ,;:") + " …"
    if not body:
        return title
    return f"{title}{' ' if title.endswith(('.', ':', '!', '?')) else ': '}{body}"


def _clean(text: str) -> str:
    return " ".join(text.replace("<!--", "<!-").replace("-->", "->").replace("~~", "~").split())


def id_comment(record_id: str) -> str:
    """The comment that ties text to a record: ``<!-- agentctx:ID -->``."""
    return f"<!-- agentctx:{record_id} -->"


def _newline(text: str) -> str:
    return "\r\n" if text.count("\r\n") * 2 > text.count("\n") else "\n"


def _editable(scan: Scan) -> dict[str, memfiles.MemoryFile]:
    return {f.name: f for f in scan.memory.files if f.editable}


def choose_target(scan: Scan) -> tuple[Path, str, memfiles.MemoryFile | None]:
    """Where additions go: the file holding the marked section, else ``CLAUDE.md``, else
    ``.claude/CLAUDE.md``, else a new ``CLAUDE.md``."""
    root = scan.root
    by_path = {f.path: f for f in scan.memory.files}
    # By resolved path: a CLAUDE.md that is a symlink (to AGENTS.md, say) is edited through it.
    entries = [by_path.get((root / name).resolve()) for name in ("CLAUDE.md", ".claude/CLAUDE.md")]
    for found in entries:
        if found is not None and BEGIN_MARK in found.text:
            return found.path, found.name, found
    for found in entries:
        if found is not None:
            return found.path, found.name, found
    return root / "CLAUDE.md", "CLAUDE.md", None


# ----------------------------------------------------------------------------- strikethrough


def _strike_line(line: str, pieces: Sequence[tuple[int, int]], addition: str | None) -> str:
    """``line`` with each (start, end) column span struck and ``addition`` after the last one."""
    for start, end in sorted(pieces, reverse=True):
        text = line[start:end]
        if not (text.startswith("~~") and text.endswith("~~")):
            line = f"{line[:start]}~~{text}~~{line[end:]}"
    if addition:
        last_end = max(end for _, end in pieces)
        offset = 4 * sum(1 for start, _ in pieces if start < last_end)
        position = last_end + offset
        line = f"{line[:position]} {addition}{line[position:]}"
    return line


def _strike_row(line: str, start: int, end: int, addition: str | None) -> str:
    content = line[start:end]
    cells = _CELL_SPLIT.split(content)
    filled = [i for i, cell in enumerate(cells) if cell.strip()]
    for i in filled:
        cell = cells[i]
        lead = len(cell) - len(cell.lstrip())
        core = cell.strip()
        if not (core.startswith("~~") and core.endswith("~~")):
            core = f"~~{core}~~"
        if addition and i == filled[-1]:
            core = f"{core} {addition.replace('|', chr(92) + '|')}"
        cells[i] = " " * lead + core + " " * (1 if cell.endswith(" ") else 0)
    return line[:start] + "|".join(cells) + line[end:]


def _replacement(record: Record | None, superseded: Record) -> str:
    if record is None:
        return f"{id_comment(superseded.id)} (no longer in force)"
    return f"→ {id_comment(record.id)} {entry_text(record)}"


class _Strike(NamedTuple):
    unit: Unit
    replacements: list[str]


def _strikes(scan: Scan) -> tuple[dict[str, list[_Strike]], set[str]]:
    """Per editable file, the units to strike; and the ids of contradicted records struck."""
    editable = _editable(scan)
    by_unit: dict[int, _Strike] = {}
    struck: set[str] = set()
    for candidate in scan.candidates:
        new: Record | None
        old: Record | None
        if candidate.kind == CONTRADICTED:
            new, old = candidate.record, candidate.old
        elif candidate.kind == STALE:
            new, old = candidate.replacement, candidate.record
        else:
            continue
        assert old is not None
        for index in candidate.units:
            unit = scan.memory.units[index]
            if unit.file not in editable or unit.kind not in ("sentence", "row"):
                continue
            text = _replacement(new, old)
            strike = by_unit.setdefault(index, _Strike(unit, []))
            if text not in strike.replacements:
                strike.replacements.append(text)
            if candidate.kind == CONTRADICTED:
                struck.add(candidate.record.id)
    per_file: dict[str, list[_Strike]] = defaultdict(list)
    for strike in by_unit.values():
        per_file[strike.unit.file].append(strike)
    return per_file, struck


def _apply_strikes(text: str, strikes: Sequence[_Strike]) -> str:
    lines = text.splitlines(keepends=True)
    edits: dict[int, list[tuple[_Strike, list[tuple[int, int]]]]] = defaultdict(list)
    for strike in strikes:
        for number, start, end in strike.unit.spans:
            edits[number].append((strike, [(start, end)]))
    for number, items in edits.items():
        raw = lines[number - 1]
        body = raw.rstrip("\r\n")
        ending = raw[len(body):]
        # Right to left so earlier columns stay valid; the replacement goes after a unit's last
        # piece (on its last line).
        for strike, pieces in sorted(items, key=lambda item: -item[1][0][0]):
            last = strike.unit.spans[-1][0] == number
            addition = " ".join(strike.replacements) if last else None
            start, end = pieces[0]
            if strike.unit.kind == "row":
                body = _strike_row(body, start, end, addition)
            else:
                body = _strike_line(body, pieces, addition)
        lines[number - 1] = body + ending
    return "".join(lines)


# ----------------------------------------------------------------------------- marked section


def _section_bounds(lines: Sequence[str]) -> tuple[int, int] | str | None:
    """Indexes of the begin and end marker lines; ``None`` when absent; a message when broken."""
    begins = [i for i, line in enumerate(lines) if line.strip() == BEGIN_MARK]
    ends = [i for i, line in enumerate(lines) if line.strip() == END_MARK]
    if not begins and not ends:
        return None
    if len(begins) != 1 or len(ends) != 1 or ends[0] < begins[0]:
        return (f"it has {len(begins)} '{BEGIN_MARK}' and {len(ends)} '{END_MARK}' lines; keep "
                "exactly one of each, begin first")
    return begins[0], ends[0]


def _update_section(text: str, scan: Scan, additions: Sequence[Record]) -> tuple[str, str | None]:
    """``text`` with its marked section updated (or appended); returns it and a problem."""
    newline = _newline(text) if text else "\n"
    lines = text.splitlines()
    bounds = _section_bounds(lines)
    if isinstance(bounds, str):
        return text, bounds
    by_id = {**scan.superseded, **scan.current}
    entries = [f"- {entry_text(r)} {id_comment(r.id)}" for r in additions]
    if bounds is None:
        if not entries:
            return text, None
        block = [BEGIN_MARK, SECTION_HEADING, "", *entries, END_MARK]
        prefix = lines + ([""] if lines and lines[-1].strip() else [])
        return newline.join(prefix + block) + newline, None
    begin, end = bounds
    inner = lines[begin + 1:end]
    kept: list[str] = []
    placed: set[str] = set()
    for line in inner:
        ids = [i for i in ID_COMMENT.findall(line) if i in by_id]
        if not ids:
            kept.append(line)
            continue
        record = by_id[ids[0]]
        if record.current:
            placed.add(record.id)
            kept.append(line)
            continue
        # Superseded since it was written: the record now in force takes its place if it
        # is not stated anywhere else yet.
        successor = _end_of(record, by_id)
        if successor is not None and successor.id not in placed and \
                successor.id not in scan.present and successor.id not in scan.dismissed:
            placed.add(successor.id)
            kept.append(f"- {entry_text(successor)} {id_comment(successor.id)}")
    if not any(line.strip() == SECTION_HEADING for line in kept):
        kept = [SECTION_HEADING, "", *kept]
    fresh = [e for r, e in zip(additions, entries, strict=True) if r.id not in placed]
    while kept and not kept[-1].strip() and fresh:
        kept.pop()
    updated = lines[:begin + 1] + kept + fresh + lines[end:]
    trailing = newline if text.endswith(("\n", "\r")) else ""
    return newline.join(updated) + trailing, None


def _end_of(record: Record, by_id: dict[str, Record]) -> Record | None:
    node: Record | None = record
    seen: set[str] = set()
    while node is not None and not node.current:
        if node.id in seen or node.superseded_by is None:
            return None
        seen.add(node.id)
        node = by_id.get(node.superseded_by)
    return node


# ----------------------------------------------------------------------------- the proposal


def propose(scan: Scan) -> Proposal:
    """The changes that would bring the memory files in line with the scan's candidates."""
    target_path, target_name, target_file = choose_target(scan)
    problems: list[str] = []
    strikes, struck = _strikes(scan)
    texts: dict[str, tuple[Path, str | None]] = {
        f.name: (f.path, f.text) for f in scan.memory.files if f.editable}
    after: dict[str, str] = {}
    for name, items in strikes.items():
        text = texts[name][1]
        assert text is not None
        after[name] = _apply_strikes(text, items)
    additions = sorted((c.record for c in scan.candidates
                        if c.kind == MISSING or (c.kind == CONTRADICTED
                                                 and c.record.id not in struck)),
                       key=lambda r: (r.valid_from, r.pk))
    if target_file is not None and not target_file.editable:
        problems.append(f"{target_name} cannot be edited (not valid UTF-8); additions are not "
                        "proposed")
    else:
        base = after.get(target_name, target_file.text if target_file else "")
        updated, problem = _update_section(base, scan, additions)
        if problem:
            problems.append(f"{target_name}: {problem}")
        elif updated != (target_file.text if target_file else ""):
            after[target_name] = updated
            texts.setdefault(target_name, (target_path, target_file.text if target_file else None))
    changes = tuple(FileChange(texts[name][0], name, texts[name][1], text)
                    for name, text in sorted(after.items()) if text != texts[name][1])
    diff = unified_diff(changes)
    located = _locate(scan, changes, target_name, struck)
    return Proposal(scan, target_name, located, changes, diff, tuple(problems))


def unified_diff(changes: Sequence[FileChange]) -> str:
    """One unified diff over every changed file (``/dev/null`` for a new one)."""
    parts: list[str] = []
    for change in changes:
        before = (change.before or "").splitlines(keepends=True)
        after = change.after.splitlines(keepends=True)
        parts.extend(_ensure_newlines(difflib.unified_diff(
            before, after, fromfile="/dev/null" if change.before is None else f"a/{change.name}",
            tofile=f"b/{change.name}")))
    return "".join(parts)


def _ensure_newlines(lines: Iterable[str]) -> list[str]:
    out: list[str] = []
    for line in lines:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return out


def _locate(scan: Scan, changes: Sequence[FileChange], target: str,
            struck: set[str]) -> tuple[Proposed, ...]:
    after = {c.name: c.after for c in changes}
    changed_lines: dict[str, set[int]] = {}
    for change in changes:
        before = (change.before or "").splitlines()
        new = change.after.splitlines()
        lines: set[int] = set()
        matcher = difflib.SequenceMatcher(a=before, b=new, autojunk=False)
        for op, i1, i2, _j1, _j2 in matcher.get_opcodes():
            if op != "equal":
                lines.update(range(i1 + 1, i2 + 1))
        changed_lines[change.name] = lines
    located: list[Proposed] = []
    for candidate in scan.candidates:
        if candidate.kind == MISSING or (candidate.kind == CONTRADICTED
                                          and candidate.id not in struck):
            line = _line_of(after.get(target, ""), candidate.id)
            if candidate.kind == MISSING:
                note = "" if line else "not added (see the problems)"
                located.append(Proposed(candidate, target, line, line is not None, note))
                continue
            note = (f"old text at {candidate.file}:{candidate.line} cannot be struck there; "
                    f"added to {target}" if line else "not added (see the problems)")
            located.append(Proposed(candidate, candidate.file, candidate.line, line is not None,
                                    note))
            continue
        edited = candidate.line is not None and candidate.file is not None and \
            candidate.line in changed_lines.get(candidate.file, set())
        note = "" if edited else _why_not(scan, candidate)
        located.append(Proposed(candidate, candidate.file, candidate.line, edited, note))
    return tuple(located)


def _line_of(text: str, record_id: str) -> int | None:
    marker = id_comment(record_id)
    for number, line in enumerate(text.splitlines(), start=1):
        if marker in line:
            return number
    return None


def _why_not(scan: Scan, candidate: Candidate) -> str:
    files = {f.name: f for f in scan.memory.files}
    where = files.get(candidate.file or "")
    if where is not None and not where.editable:
        if where.path.name == memfiles.LOCAL_FILE or where.name == memfiles.LOCAL_FILE:
            return "in CLAUDE.local.md, which agentctx never edits"
        return "in a file agentctx does not edit (outside the project, not Markdown or UTF-8)"
    kinds = {scan.memory.units[i].kind for i in candidate.units}
    if kinds & {"code", "heading"}:
        return "in a code block or heading: edit it by hand"
    return ""
