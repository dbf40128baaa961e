"""Superseded text struck where it is, and agentctx's ties on lines of their own.

A sentence (of a paragraph or a list item) is struck whole and the record now in force follows
it: ``~~old~~ → new``. In a table row only the cells that say the old thing are struck, the
record now in force written in the last of them, short: ``| Queue | ~~Celery on RabbitMQ~~
Dramatiq on Postgres |``. A retired record's text reads ``~~old~~ (no longer in force)``.

What ties the edit to a record is a comment on its own line right after the block (list item,
paragraph, table): ``<!-- agentctx:ID -->``. Claude Code strips block-level HTML comments before
Claude sees a memory file, so a tie costs no tokens (a comment inside a line would be sent).
Ties written inline by older versions of agentctx are moved onto their own lines the same way.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple

from agentctx.drift.memfiles import ID_COMMENT, TIE_LINE, Unit
from agentctx.drift.terms import mentions

CELL_SPLIT = re.compile(r"(?<!\\)\|")
NO_LONGER = "(no longer in force)"


def id_comment(record_id: str) -> str:
    """The comment that ties text to a record: ``<!-- agentctx:ID -->``."""
    return f"<!-- agentctx:{record_id} -->"


class Replacement(NamedTuple):
    """What replaces a piece of superseded text."""

    sentence: str  # written after a struck sentence: "→ title: body" or "(no longer in force)"
    cell: str  # written in a struck table cell: the title, or "(no longer in force)"
    tie: str  # the record the edit is tied to (the one in force, or the retired one)
    terms: frozenset[str]  # what tells the superseded text apart (which cells to strike)


class Strike(NamedTuple):
    """One unit to strike and what replaces it."""

    unit: Unit
    replacements: list[Replacement]


def _struck(text: str) -> bool:
    core = text.strip()
    return core.startswith("~~") and core.endswith("~~")


def strike_line(line: str, pieces: Sequence[tuple[int, int]], addition: str | None) -> str:
    """``line`` with each (start, end) column span struck and ``addition`` after the last one."""
    for start, end in sorted(pieces, reverse=True):
        text = line[start:end]
        if not _struck(text):
            line = f"{line[:start]}~~{text}~~{line[end:]}"
    if addition:
        last_end = max(end for _, end in pieces)
        offset = 4 * sum(1 for start, end in pieces if start < last_end
                         and not _struck(line[start:end]))
        position = last_end + offset
        line = f"{line[:position]} {addition}{line[position:]}"
    return line


def strike_row(line: str, start: int, end: int, replacements: Sequence[Replacement]) -> str:
    """A table row with the cells saying the superseded text struck, the replacement in the
    last of them. Cells naming none of its distinctive terms are left alone unless no cell
    does (then every cell but the first, which names the row, is struck)."""
    cells = CELL_SPLIT.split(line[start:end])
    filled = [i for i, cell in enumerate(cells) if cell.strip() and not _struck(cell)]
    terms = frozenset().union(*(r.terms for r in replacements))
    chosen = [i for i in filled if terms and mentions(cells[i], terms)]
    if not chosen:
        chosen = filled[1:] if len(filled) > 1 else filled
    if not chosen:
        return line
    addition = " ".join(dict.fromkeys(r.cell for r in replacements)).replace("|", "\\|")
    for i in chosen:
        cell = cells[i]
        lead = len(cell) - len(cell.lstrip())
        core = f"~~{cell.strip()}~~"
        if i == chosen[-1] and addition:
            core = f"{core} {addition}"
        cells[i] = " " * lead + core + " " * (1 if cell.endswith(" ") else 0)
    return line[:start] + "|".join(cells) + line[end:]


def apply(text: str, strikes: Sequence[Strike], units: Sequence[Unit]) -> str:
    """``text`` (one file, read into ``units``) with ``strikes`` made, each tied on a line of its
    own after its block, and the ties older versions wrote inside a line moved out the same
    way."""
    ends = block_ends(units)
    lines = text.splitlines(keepends=True)
    edits: dict[int, list[tuple[Strike, tuple[int, int]]]] = defaultdict(list)
    ties: dict[int, list[str]] = defaultdict(list)
    by_line = {number: u for u in units if u.kind in ("sentence", "row")
               for number, _start, _end in u.spans}
    for index, raw in enumerate(lines):
        body = raw.rstrip("\r\n")
        unit = by_line.get(index + 1)
        if unit is not None and ID_COMMENT.search(body) and not TIE_LINE.match(body):
            ties[ends[unit.position]].extend(ID_COMMENT.findall(body))
            lines[index] = _without_ties(body) + raw[len(body):]
    for strike in strikes:
        for number, start, end in strike.unit.spans:
            edits[number].append((strike, (start, end)))
        ties[ends[strike.unit.position]].extend(r.tie for r in strike.replacements)
    for number, items in edits.items():
        raw = lines[number - 1]
        body = raw.rstrip("\r\n")
        ending = raw[len(body):]
        # Right to left so earlier columns stay valid; the replacement goes after a unit's last
        # piece (on its last line).
        for strike, (start, end) in sorted(items, key=lambda item: -item[1][0]):
            if strike.unit.kind == "row":
                body = strike_row(body, start, end, strike.replacements)
                continue
            last = strike.unit.spans[-1][0] == number
            addition = " ".join(dict.fromkeys(r.sentence for r in strike.replacements)) \
                if last else None
            body = strike_line(body, [(start, end)], addition)
        lines[number - 1] = body + ending
    return insert_ties(lines, ties) if ties else text


def insert_ties(lines: list[str], ties: Mapping[int, Iterable[str]]) -> str:
    """``lines`` with a tie line per record id after each given line number (after the tie lines
    already there, and never twice for one id)."""
    newline = "\r\n" if sum(line.endswith("\r\n") for line in lines) * 2 > len(lines) else "\n"
    for number in sorted(ties, reverse=True):
        at = number  # insert after line ``number`` and the tie lines that follow it
        present: set[str] = set()
        while at < len(lines) and TIE_LINE.match(lines[at].rstrip("\r\n")):
            present.update(ID_COMMENT.findall(lines[at]))
            at += 1
        wanted = [i for i in dict.fromkeys(ties[number]) if i not in present]
        if not wanted:
            continue
        if at == len(lines) and lines and not lines[-1].endswith(("\n", "\r")):
            lines[-1] += newline
        lines[at:at] = [id_comment(i) + newline for i in wanted]
    return "".join(lines)


def _without_ties(line: str) -> str:
    """``line`` without its id comments and the space each leaves."""
    line = ID_COMMENT.sub("\0", line)
    return re.sub(r" ?\0 ?", lambda m: " " if m.group(0) == " \0 " else "", line).rstrip()


def block_ends(units: Sequence[Unit]) -> dict[int, int]:
    """For each unit's position, the last line of its block in its file."""
    last: dict[tuple[str, int], int] = {}
    for u in units:
        key = (u.file, u.block)
        last[key] = max(last.get(key, 0), u.end_line)
    return {u.position: last[(u.file, u.block)] for u in units}
