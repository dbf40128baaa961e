"""The proposed memory-file changes for a scan: the marked section, strikethroughs, a unified diff.

* **Additions** (missing records, and contradicted ones whose old text cannot be struck where it
  is) go to one marked section, ``## Decisions (kept by agentctx)`` between
  ``<!-- agentctx:begin -->`` and ``<!-- agentctx:end -->``, in ``./CLAUDE.md`` (else
  ``./.claude/CLAUDE.md``, else ``./AGENTS.md`` where that is the memory file Claude Code reads,
  else a new ``./CLAUDE.md``); a file that already holds the section keeps it, updated in place.
  An entry is one list item followed by the record's id comment on a line of its own. Entries
  whose record was since superseded give way to the record now in force; entries with ids this
  store does not know (a teammate's) are left alone.
* **Superseded text** (contradicted and stale) is struck through where it is, the record now in
  force beside it (:mod:`agentctx.drift.strike`: ``~~old~~ → new``, a table cell
  ``~~old~~ new``), tied to it by a comment on a line of its own. ``CLAUDE.local.md``, files
  outside the project folder, non-Markdown imports, code fences and headings are never edited
  (the candidate still says where the text is).
* Ties that older versions of agentctx wrote inside a line move onto lines of their own in
  every file a proposal edits.

Nothing here writes: :func:`agentctx.drift.apply` does, after confirmation.
"""

from __future__ import annotations

import difflib
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import NamedTuple

from agentctx.drift import memfiles, strike
from agentctx.drift.memfiles import BEGIN_MARK, END_MARK, ID_COMMENT, SECTION_HEADING, TIE_LINE
from agentctx.drift.scanner import CONTRADICTED, MISSING, STALE, Candidate, Scan
from agentctx.drift.strike import NO_LONGER, Replacement, Strike, id_comment
from agentctx.store.models import Record

__all__ = ["FileChange", "Proposal", "Proposed", "choose_target", "entry_text", "id_comment",
           "propose", "unified_diff"]

ENTRY_BODY_CHARS = 240


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


def _newline(text: str) -> str:
    return "\r\n" if text.count("\r\n") * 2 > text.count("\n") else "\n"


def _editable(scan: Scan) -> dict[str, memfiles.MemoryFile]:
    return {f.name: f for f in scan.memory.files if f.editable}


def choose_target(scan: Scan) -> tuple[Path, str, memfiles.MemoryFile | None]:
    """Where additions go: the file holding the marked section, else ``CLAUDE.md``, else
    ``.claude/CLAUDE.md``, else ``AGENTS.md`` when Claude Code reads it, else a new
    ``CLAUDE.md``."""
    root = scan.root
    by_path = {f.path: f for f in scan.memory.files}
    # By resolved path: a CLAUDE.md that is a symlink (to AGENTS.md, say) is edited through it.
    entries = [by_path.get((root / name).resolve())
               for name in (*memfiles.CLAUDE_FILES, memfiles.AGENTS_FILE)]
    for found in entries:
        if found is not None and BEGIN_MARK in found.text:
            return found.path, found.name, found
    for found in entries:
        if found is not None:
            return found.path, found.name, found
    return root / "CLAUDE.md", "CLAUDE.md", None


# ----------------------------------------------------------------------------- strikethrough


def _replacement(record: Record | None, superseded: Record, terms: frozenset[str]) -> Replacement:
    if record is None:
        return Replacement(NO_LONGER, NO_LONGER, superseded.id, terms)
    return Replacement(f"→ {entry_text(record)}", _clean(record.title), record.id, terms)


def _strikes(scan: Scan) -> tuple[dict[str, list[Strike]], set[str]]:
    """Per editable file, the units to strike; and the ids of contradicted records struck."""
    editable = _editable(scan)
    by_unit: dict[int, Strike] = {}
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
            replacement = _replacement(new, old, candidate.terms)
            found = by_unit.setdefault(index, Strike(unit, []))
            if replacement not in found.replacements:
                found.replacements.append(replacement)
            if candidate.kind == CONTRADICTED:
                struck.add(candidate.record.id)
    per_file: dict[str, list[Strike]] = defaultdict(list)
    for found in by_unit.values():
        per_file[found.unit.file].append(found)
    return per_file, struck


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


def _entry(record: Record) -> list[str]:
    """A record's lines in the marked section: the item, then its tie on a line of its own."""
    return [f"- {entry_text(record)}", id_comment(record.id)]


def _chunks(lines: Sequence[str]) -> list[list[str]]:
    """The lines of the marked section, grouped: each list item (or other line) with the tie
    lines after it."""
    chunks: list[list[str]] = []
    for line in lines:
        if TIE_LINE.match(line) and chunks and chunks[-1][0].strip():
            chunks[-1].append(line)
        elif chunks and line[:1].isspace() and line.strip() and chunks[-1][0].startswith("- ") \
                and not TIE_LINE.match(chunks[-1][-1]):
            chunks[-1].append(line)  # an item's continuation line
        else:
            chunks.append([line])
    return chunks


def _update_section(text: str, scan: Scan, additions: Sequence[Record]) -> tuple[str, str | None]:
    """``text`` with its marked section updated (or appended); returns it and a problem."""
    newline = _newline(text) if text else "\n"
    lines = text.splitlines()
    bounds = _section_bounds(lines)
    if isinstance(bounds, str):
        return text, bounds
    by_id = {**scan.superseded, **scan.current}
    if bounds is None:
        if not additions:
            return text, None
        block = [BEGIN_MARK, SECTION_HEADING, "", *(x for r in additions for x in _entry(r)),
                 END_MARK]
        prefix = lines + ([""] if lines and lines[-1].strip() else [])
        return newline.join(prefix + block) + newline, None
    begin, end = bounds
    kept: list[str] = []
    placed: set[str] = set()
    for chunk in _chunks(lines[begin + 1:end]):
        ids = [i for line in chunk for i in ID_COMMENT.findall(line) if i in by_id]
        if not ids:
            kept.extend(chunk)
            continue
        record = by_id[ids[0]]
        if record.current:
            placed.add(record.id)
            kept.extend(chunk)
            continue
        # Superseded since it was written: the record now in force takes its place if it
        # is not stated anywhere else yet.
        successor = _end_of(record, by_id)
        if successor is not None and successor.id not in placed and \
                successor.id not in scan.present and successor.id not in scan.dismissed:
            placed.add(successor.id)
            kept.extend(_entry(successor))
    if not any(line.strip() == SECTION_HEADING for line in kept):
        kept = [SECTION_HEADING, "", *kept]
    fresh = [x for r in additions if r.id not in placed for x in _entry(r)]
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
    units: dict[str, list[memfiles.Unit]] = defaultdict(list)
    for unit in scan.memory.units:
        units[unit.file].append(unit)
    for file in scan.memory.files:
        if file.editable and (file.name in strikes or ID_COMMENT.search(file.text)):
            edited = strike.apply(file.text, strikes.get(file.name, []), units[file.name])
            if edited != file.text:
                after[file.name] = edited
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
    """The first line of the text tied to ``record_id`` (its entry in the marked section)."""
    if record_id not in text:
        return None
    parsed, _block, _section = memfiles.parse(
        memfiles.MemoryFile(Path("-"), "-", text, True, None, 0))
    return next((u.line for u in parsed if record_id in u.ids), None)


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
