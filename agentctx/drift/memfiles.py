"""Claude Code's project memory files, read (never written) and split into matchable units.

Discovery follows what Claude Code loads for a project (``claude-code-contract.md`` §7):
``./CLAUDE.md``, ``./.claude/CLAUDE.md``, ``./.claude/rules/**/*.md`` and ``./CLAUDE.local.md``,
plus every file they import with ``@path`` (relative to the importing file, or absolute, or
``~/…``), recursively up to :data:`MAX_IMPORT_HOPS` hops. A project with neither ``CLAUDE.md``
gets its ``./AGENTS.md`` instead (Claude Code 2.1.277 and later), with its imports; where a
``CLAUDE.md`` exists, ``AGENTS.md`` is read only when imported (:func:`primary` says which and
why). Imports inside code fences and inline code spans are ignored, as Claude Code ignores them;
a cycle is read once and a missing file is reported, never an error. The user-level
``~/.claude/CLAUDE.md`` is out of scope.

Each file is parsed line by line into :class:`Unit` values — a sentence of a paragraph or list
item, a table row, a line of a code fence, a heading — with their line numbers, the heading path
above them and the block (list item, paragraph, table, fence) they belong to. Text struck through
(``~~…~~``) and HTML comments are left out of what a unit says: struck text is what a team has
marked as no longer true.

agentctx ties text to a record with a comment on its own line, ``<!-- agentctx:ID -->``, right
after the block it belongs to (Claude Code strips block-level comments, so a tie costs no
tokens): it ties the units of that block holding struck text, or all of them when none does.
Older files carry the comment inline, after the entry or after ``~~old~~ →``; it ties that unit.

A file may be edited by ``agentctx sync`` only when it is Markdown inside the project folder,
valid UTF-8 and not ``CLAUDE.local.md`` (personal) or reached only through it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import NamedTuple

from agentctx.core import safeio

MAX_IMPORT_HOPS = 4
MAX_FILE_BYTES = 4 * 1024 * 1024  # Claude Code skips larger memory files
LOCAL_FILE = "CLAUDE.local.md"
AGENTS_FILE = "AGENTS.md"
CLAUDE_FILES = ("CLAUDE.md", ".claude/CLAUDE.md")
BEGIN_MARK = "<!-- agentctx:begin -->"
END_MARK = "<!-- agentctx:end -->"
SECTION_HEADING = "## Decisions (kept by agentctx)"
# The id comment agentctx writes after an entry or a replacement: <!-- agentctx:01J… -->
ID_COMMENT = re.compile(r"<!--\s*agentctx:([0-9A-Za-z]{10,40})\s*-->")
# A line holding nothing but id comments: a tie on its own line.
TIE_LINE = re.compile(r"^\s{0,3}(?:<!--\s*agentctx:[0-9A-Za-z]{10,40}\s*-->\s*)+$")

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
_ITEM = re.compile(r"^(\s*)([-*+]|\d{1,9}[.)])(\s+|$)")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_THEMATIC = re.compile(r"^ {0,3}([-*_])(\s*\1){2,}\s*$")
_QUOTE = re.compile(r"^ {0,3}>\s?")
_IMPORT = re.compile(r"(?<![\w@`])@((?:~|\.{1,2})?/?[\w.\-~/]*[\w\-~/])")
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
_STRUCK = re.compile(r"~~(?!\s)(.+?)(?<!\s)~~")
_COMMENT = re.compile(r"<!--.*?-->")
_LINK = re.compile(r"!?\[([^\]]*)\]\(([^)\s]*)(?:\s+\"[^\"]*\")?\)")
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+(?=[\"'(\[`*_]?[A-Z0-9À-Ý])")


class MemoryFile(NamedTuple):
    """One memory file as read: where it is, what it holds, how it was reached."""

    path: Path  # absolute
    name: str  # relative to the project folder when inside it, else the absolute path
    text: str
    editable: bool
    imported_by: str | None  # the name of the file whose @import brought it in
    hops: int


class MissingImport(NamedTuple):
    """An ``@path`` import whose file does not exist (Claude Code ignores it too)."""

    importer: str
    line: int
    target: str


class Unit(NamedTuple):
    """The smallest piece of a memory file a fact is matched against."""

    position: int  # index in the scan's list of units
    file: str
    kind: str  # heading | sentence | row | code
    line: int  # 1-based first line
    end_line: int
    text: str  # what the unit says (markup, struck text and comments removed)
    block: int  # index of the block (list item, paragraph, table, fence, heading) it belongs to
    section: int  # index of the leaf section (the lines under one heading) it belongs to
    headings: tuple[str, ...]  # the heading path above it
    marked: bool  # inside agentctx's own marked section
    ids: tuple[str, ...]  # record ids named by an agentctx comment in it
    spans: tuple[tuple[int, int, int], ...]  # (line, start column, end column) of its raw text
    struck: bool = False  # whether its raw text holds struck text (``~~…~~``)
    code: str = ""  # what it says in code: its inline code spans, or a fence line whole


class Memory(NamedTuple):
    """Everything read from a project's memory files."""

    root: Path
    files: tuple[MemoryFile, ...]
    missing: tuple[MissingImport, ...]
    units: tuple[Unit, ...]


class Primary(NamedTuple):
    """The project memory file Claude Code reads first, and why that one."""

    name: str | None  # CLAUDE.md, .claude/CLAUDE.md, AGENTS.md; None: neither exists
    reason: str


# ----------------------------------------------------------------------------- discovery


def _has_claude_md(root: Path) -> bool:
    return any((root / name).is_file() for name in CLAUDE_FILES)


def primary(root: Path) -> Primary:
    """Which memory file Claude Code reads for the project folder ``root``, and why."""
    agents = (root / AGENTS_FILE).is_file()
    if not _has_claude_md(root):
        if agents:
            return Primary(AGENTS_FILE, "the project has no CLAUDE.md, so Claude Code (2.1.277 "
                           "and later) reads AGENTS.md instead")
        return Primary(None, "the project has no CLAUDE.md or AGENTS.md yet; additions would "
                       "create CLAUDE.md")
    name = next(n for n in CLAUDE_FILES if (root / n).is_file())
    if not agents:
        return Primary(name, "Claude Code reads CLAUDE.md")
    files, _missing = discover(root)
    target = (root / AGENTS_FILE).resolve()
    if any(f.path == target for f in files):
        return Primary(name, "Claude Code reads CLAUDE.md, and AGENTS.md through it (it is "
                       "imported or linked)")
    return Primary(name, "Claude Code reads CLAUDE.md; AGENTS.md is not read, as CLAUDE.md does "
                   "not import it (add @AGENTS.md to CLAUDE.md to change that)")


def entry_points(root: Path) -> list[Path]:
    """The memory files Claude Code loads for a project folder, in its order (existing ones):
    ``AGENTS.md`` stands in for ``CLAUDE.md`` when the project has none."""
    if _has_claude_md(root):
        found = [root / "CLAUDE.md", root / ".claude" / "CLAUDE.md"]
    else:
        found = [root / AGENTS_FILE]
    rules = root / ".claude" / "rules"
    if rules.is_dir():
        found.extend(sorted(p for p in rules.rglob("*.md") if p.is_file()))
    found.append(root / LOCAL_FILE)
    return [p for p in found if p.is_file()]


def display_name(path: Path, root: Path) -> str:
    """``path`` relative to ``root`` when inside it (POSIX separators), else absolute."""
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def _inside(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True


def _read(path: Path) -> tuple[str, bool] | None:
    """The text of ``path`` and whether it is valid UTF-8; ``None`` when unreadable or too big."""
    try:  # regular files only, opened without blocking, never past the cap
        data = safeio.read_small(path, MAX_FILE_BYTES)
    except OSError:
        return None
    try:
        return data.decode("utf-8"), True
    except UnicodeDecodeError:
        return data.decode("utf-8", errors="replace"), False


def imports_of(text: str) -> list[tuple[int, str]]:
    """``(line number, target)`` of every ``@path`` import outside code fences and spans."""
    found: list[tuple[int, str]] = []
    fence: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        opened = _FENCE.match(line)
        if fence is not None:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence) \
                    and not opened.group(2).strip():
                fence = None
            continue
        if opened:
            fence = opened.group(1)
            continue
        bare = _CODE_SPAN.sub(lambda m: " " * len(m.group(0)), _COMMENT.sub("", line))
        for match in _IMPORT.finditer(bare):
            target = match.group(1).rstrip(".")
            if target and target not in (".", "..", "~"):
                found.append((number, target))
    return found


def _resolve_import(target: str, importer: Path) -> Path:
    if target.startswith("~"):
        return Path(os.path.expanduser(target))
    candidate = Path(target)
    if candidate.is_absolute():
        return candidate
    return importer.parent / candidate


def discover(root: Path) -> tuple[list[MemoryFile], list[MissingImport]]:
    """Read every memory file of the project folder ``root`` (see the module docstring)."""
    root = root.resolve()
    files: list[MemoryFile] = []
    missing: list[MissingImport] = []
    seen: set[Path] = set()
    # Breadth first from each entry point in Claude Code's order, so a file imported by both a
    # project file and CLAUDE.local.md counts as a project file when a project file comes first.
    for entry in entry_points(root):
        local = entry.name == LOCAL_FILE and entry.parent == root
        queue: list[tuple[Path, str | None, int]] = [(entry, None, 0)]
        while queue:
            path, importer, hops = queue.pop(0)
            resolved = path.resolve()
            if resolved in seen:
                continue
            read = _read(resolved)
            if read is None:
                continue
            seen.add(resolved)
            text, utf8 = read
            name = display_name(resolved, root)
            editable = (utf8 and not local and resolved.suffix.lower() == ".md"
                        and _inside(resolved, root) and resolved.name != LOCAL_FILE)
            files.append(MemoryFile(resolved, name, text, editable, importer, hops))
            if hops >= MAX_IMPORT_HOPS:
                continue
            for line, target in imports_of(text):
                child = _resolve_import(target, resolved)
                if not child.is_file():
                    missing.append(MissingImport(name, line, target))
                    continue
                queue.append((child, name, hops + 1))
    return files, missing


# ----------------------------------------------------------------------------- parsing


def plain(text: str) -> str:
    """What a piece of Markdown says: no struck text, comments, link targets' markup or emphasis."""
    text = _COMMENT.sub(" ", text)
    text = _STRUCK.sub(" ", text)
    text = _LINK.sub(lambda m: f"{m.group(1)} {m.group(2)}", text)
    text = text.replace("`", " ").replace("**", " ").replace("__", " ")
    return " ".join(text.split())


def _sentences(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` offsets of the sentences of ``text`` (a block joined with newlines)."""
    spans: list[tuple[int, int]] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        if text[start:match.start()].strip():
            spans.append((start, match.start()))
        start = match.end()
    if text[start:].strip():
        spans.append((start, len(text.rstrip())))
    return spans


class _Block(NamedTuple):
    kind: str  # heading | paragraph | item | table | code
    lines: list[tuple[int, int, str]]  # (line number, start column, content)


def _blocks(text: str) -> Iterator[tuple[_Block, bool, tuple[str, ...]]]:
    """The blocks of a Markdown text with whether each is in the marked section, and headings."""
    lines = text.splitlines()
    headings: list[tuple[int, str]] = []
    marked = False
    fence: str | None = None
    current: _Block | None = None
    current_marked = False
    item_indent = 0
    start = 0
    if lines and lines[0].strip() == "---":  # front matter (rules files' ``paths:``)
        for end in range(1, len(lines)):
            if lines[end].strip() == "---":
                start = end + 1
                break

    def path() -> tuple[str, ...]:
        return tuple(h for _, h in headings)

    outside: list[tuple[int, str]] = []  # the heading path where the marked section began
    for index in range(start, len(lines)):
        number = index + 1
        raw = lines[index]
        opened = _FENCE.match(raw)
        if fence is not None:
            assert current is not None
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence) \
                    and not opened.group(2).strip():
                fence = None
                if current.lines:
                    yield current, current_marked, path()
                current = None
            elif raw.strip():
                current.lines.append((number, len(raw) - len(raw.lstrip()), raw.strip()))
            continue
        stripped = raw.strip()
        if TIE_LINE.match(raw):
            # A tie on its own line belongs to the block above it; it does not end a list item
            # (an entry of the marked section is an item followed by its tie).
            if current is not None:
                yield current, current_marked, path()
                current = None
            yield _Block("tie", [(number, 0, stripped)]), marked, path()
            continue
        if stripped in (BEGIN_MARK, END_MARK):
            if current is not None:
                yield current, current_marked, path()
                current = None
            marked = stripped == BEGIN_MARK
            if marked:
                outside = list(headings)
            else:
                headings = outside
            continue
        if opened:
            if current is not None:
                yield current, current_marked, path()
            fence = opened.group(1)
            current, current_marked = _Block("code", []), marked
            continue
        if not stripped or _THEMATIC.match(raw):
            if current is not None and current.kind != "item":
                yield current, current_marked, path()
                current = None
            continue
        heading = _HEADING.match(raw)
        if heading:
            if current is not None:
                yield current, current_marked, path()
                current = None
            level = len(heading.group(1))
            headings = [(lvl, h) for lvl, h in headings if lvl < level]
            title = heading.group(2)
            headings.append((level, plain(title)))
            yield _Block("heading", [(number, raw.index(title) if title else 0, title)]), \
                marked, path()
            continue
        item = _ITEM.match(raw)
        if stripped.startswith("|") or (current is not None and current.kind == "table"
                                        and "|" in stripped):
            if current is not None and current.kind != "table":
                yield current, current_marked, path()
                current = None
            if _TABLE_RULE.match(raw):
                continue
            if current is None:
                current, current_marked = _Block("table", []), marked
            current.lines.append((number, len(raw) - len(raw.lstrip()), stripped))
            continue
        if item:
            if current is not None:
                yield current, current_marked, path()
            item_indent = len(item.group(1))
            content_col = item.end()
            current, current_marked = _Block("item", [(number, content_col, raw[content_col:])]), \
                marked
            continue
        quote = _QUOTE.match(raw)
        column = quote.end() if quote else len(raw) - len(raw.lstrip())
        content = raw[column:]
        if current is not None and current.kind == "item":
            indent = len(raw) - len(raw.lstrip())
            # An indented line continues the item; so does an unindented one right after it
            # (a lazy continuation); after a blank line an unindented one starts a paragraph.
            if indent > item_indent or lines[index - 1].strip():
                current.lines.append((number, column, content))
                continue
            yield current, current_marked, path()
            current = None
        if current is None:
            current, current_marked = _Block("paragraph", []), marked
        current.lines.append((number, column, content))
    if current is not None and current.lines:
        yield current, current_marked, path()


def _ids_in(text: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(m.group(1) for m in ID_COMMENT.finditer(text)))


def parse(memory_file: MemoryFile, first_index: int = 0, first_block: int = 0,
          first_section: int = 0) -> tuple[list[Unit], int, int]:
    """The units of one file; returns them with the next free block and section numbers."""
    units: list[Unit] = []
    block_no = first_block
    section_no = first_section
    last_block: list[int] = []  # positions in ``units`` of the last block's units
    for block, marked, headings in _blocks(memory_file.text):
        if block.kind == "tie":
            _tie(units, last_block, _ids_in(block.lines[0][2]))
            continue
        if block.kind == "heading":
            section_no += 1
        last_block = []
        pieces_and_text: list[tuple[str, list[tuple[int, int, int]], str]] = []
        if block.kind in ("heading", "code", "table"):
            kind = "row" if block.kind == "table" else block.kind
            for number, column, content in block.lines:
                pieces_and_text.append((kind, [(number, column, column + len(content))], content))
        else:
            joined = ""
            offsets: list[tuple[int, int, int]] = []  # (offset in joined, line, column)
            for number, column, content in block.lines:
                if joined:
                    joined += "\n"
                offsets.append((len(joined), number, column))
                joined += content
            for begin, end in _sentences(joined):
                pieces = _pieces(joined, offsets, begin, end)
                if pieces:
                    pieces_and_text.append(("sentence", pieces, joined[begin:end]))
        for kind, pieces, raw in pieces_and_text:
            said = plain(raw)
            ids = _ids_in(raw)
            if not said and not ids:
                continue
            last_block.append(len(units))
            units.append(Unit(first_index + len(units), memory_file.name, kind, pieces[0][0],
                              pieces[-1][0], said, block_no, section_no, headings, marked, ids,
                              tuple(pieces), bool(_STRUCK.search(raw)),
                              said if kind == "code" else " ".join(
                                  m.group(2) for m in _CODE_SPAN.finditer(_STRUCK.sub(" ", raw)))))
        block_no += 1
    return units, block_no, section_no


def _tie(units: list[Unit], block: Sequence[int], ids: tuple[str, ...]) -> None:
    """Tie ``ids`` to the units of the block above a tie line: those holding struck text, or
    every one when none does (a marked-section entry, a note written by hand)."""
    struck = [i for i in block if units[i].struck]
    for i in struck or block:
        units[i] = units[i]._replace(ids=tuple(dict.fromkeys((*units[i].ids, *ids))))


def _pieces(joined: str, offsets: Sequence[tuple[int, int, int]], begin: int,
            end: int) -> list[tuple[int, int, int]]:
    """The (line, start column, end column) pieces of ``joined[begin:end]`` on the file's lines."""
    pieces: list[tuple[int, int, int]] = []
    for position, (offset, number, column) in enumerate(offsets):
        line_end = offsets[position + 1][0] - 1 if position + 1 < len(offsets) else len(joined)
        low, high = max(begin, offset), min(end, line_end)
        if low >= high:
            continue
        segment = joined[low:high]
        lead = len(segment) - len(segment.lstrip())
        trail = len(segment.rstrip())
        if trail <= lead:
            continue
        pieces.append((number, column + (low - offset) + lead, column + (low - offset) + trail))
    return pieces


def read(root: Path) -> Memory:
    """Discover and parse the memory files of the project folder ``root``."""
    files, missing = discover(root)
    units: list[Unit] = []
    block = section = 0
    for memory_file in files:
        found, block, section = parse(memory_file, len(units), block, section + 1)
        units.extend(found)
    return Memory(root.resolve(), tuple(files), tuple(missing), tuple(units))
