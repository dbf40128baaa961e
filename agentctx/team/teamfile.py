"""The team file's format: rendering records as ``.agentctx/context.md`` and parsing it back.

One block per record, sections for decisions, conventions and discoveries, blocks sorted by title
then id. Each block opens with a comment holding the fields that are not text (id, type,
revision, ``valid_from``, confidence, pinned, key) and closes with a comment naming the id again,
so that git's ``merge=union`` keeps two teammates' new blocks whole::

    <!-- agentctx:record {"confidence": "explicit", "id": "01J…", …, "rev": 2, …} -->
    ### Use gRPC between services
    _decision · rev 2 · since 2026-01-02_

    The body, as stored.

    History:
    - `01H…` 2025-11-02T09:00:00.000Z → 2026-01-02T10:00:00.000Z: REST between services
      because: latency budget
    <!-- agentctx:end 01J… -->

Nothing in the file changes unless a record's content does: no export time, no counts (a count
line would make every two concurrent additions conflict). :func:`parse` reads exactly what
:func:`render` writes (the round trip is lossless and property-tested); a body line that could be
mistaken for the format's own lines is escaped with one more leading backslash.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from agentctx.core.ids import parse_time

TEAM_SECTIONS: dict[str, str] = {
    "decision": "Decisions", "convention": "Conventions", "discovery": "Discoveries",
}
# 2: a block no longer carries its writer's confidence and pin (each store keeps its own);
# format 1 files are read, those two fields ignored.
FORMAT_VERSION = 2
# Far above any real count of edits, far below SQLite's integer limit.
REVISION_MAX = 1_000_000_000
BEGIN = "<!-- agentctx:record "
END = "<!-- agentctx:end "
CLOSE = " -->"
HISTORY = "History:"
NOTICE = (f"<!-- agentctx team file, format {FORMAT_VERSION}: written by agentctx from its "
          "store. Change records with agentctx; after a pull or merge, `agentctx import` reads "
          "teammates' records. -->")
_ULID = re.compile(r"^[0-9A-HJKMNP-TV-Z]{26}$")
_ESCAPABLE = re.compile(r"^(\\*)(<!-- agentctx:|History:)")
_PAST = re.compile(r"^- `(?P<id>[0-9A-Z]+)` (?P<start>\S+) → (?P<end>\S+): (?P<title>.*)$")
_BECAUSE = "  because: "


class TeamFileError(ValueError):
    """The team file cannot be read; ``line`` is the 1-based line at fault."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line


@dataclass(frozen=True)
class PastVersion:
    """An earlier version of a record, in compact form: what it said and why it was replaced."""

    id: str
    title: str
    valid_from: str
    superseded_at: str
    rationale: str | None = None


@dataclass(frozen=True)
class Block:
    """One record as the team file holds it."""

    id: str
    type: str
    title: str
    body: str
    valid_from: str
    revision: int = 1
    key: str | None = None
    history: tuple[PastVersion, ...] = ()  # predecessors, oldest first
    line: int = field(default=0, compare=False)  # where the block starts in a parsed file

    def fields(self) -> dict[str, object]:
        """The block's non-text fields, as its opening comment holds them."""
        return {"id": self.id, "type": self.type, "rev": self.revision,
                "valid_from": self.valid_from, "key": self.key, "sum": self.checksum()}

    def checksum(self) -> str:
        """A short hash of the block's text (title, body, history): a block that two edits were
        merged into, line by line, no longer matches it."""
        parts = [self.title, self.body]
        for past in self.history:
            parts.extend([past.id, past.title, past.valid_from, past.superseded_at,
                          past.rationale or ""])
        return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class Duplicate:
    """A record found more than once in one file (what a union merge leaves)."""

    id: str
    lines: tuple[int, ...]
    identical: bool


@dataclass(frozen=True)
class ParsedFile:
    """What a team file holds: one block per id (the highest revision of duplicates), the
    duplicates found, and ids whose copies disagree at the same revision (left out)."""

    blocks: tuple[Block, ...]
    duplicates: tuple[Duplicate, ...] = ()
    disagreeing: tuple[str, ...] = ()
    errors: tuple[TeamFileError, ...] = ()  # one per malformed block, which was left out

    def strict(self) -> ParsedFile:
        """``self``; raises the first of :attr:`errors` when there is one."""
        if self.errors:
            raise self.errors[0]
        return self


# ----------------------------------------------------------------------------------- render


def render(project_name: str, blocks: Iterable[Block]) -> str:
    """The team file for ``blocks``: deterministic (sorted by section, title, id)."""
    by_type: dict[str, list[Block]] = {t: [] for t in TEAM_SECTIONS}
    for block in blocks:
        by_type[block.type].append(block)
    out = [f"# Team context — {' '.join(project_name.split())}", "", NOTICE]
    for type_, heading in TEAM_SECTIONS.items():
        out.extend(["", f"## {heading}", ""])
        items = sorted(by_type[type_], key=lambda b: (b.title, b.id))
        if not items:
            out.append(f"_No {heading.lower()} yet._")
        for number, block in enumerate(items):
            if number:
                out.append("")
            out.extend(_block_lines(block))
    return "\n".join(out) + "\n"


def _block_lines(block: Block) -> list[str]:
    data = json.dumps(block.fields(), sort_keys=True, ensure_ascii=False).replace(">", "\\u003e")
    summary = [block.type, f"rev {block.revision}", f"since {block.valid_from[:10]}"]
    if block.key:
        summary.append(f"key {' '.join(block.key.split())}")
    lines = [f"{BEGIN}{data}{CLOSE}", f"### {block.title}", "_" + " · ".join(summary) + "_"]
    if block.body:
        lines.append("")
        lines.extend(_escape(line) for line in block.body.split("\n"))
    if block.history:
        lines.extend(["", HISTORY])
        for past in block.history:
            lines.append(f"- `{past.id}` {past.valid_from} → {past.superseded_at}: {past.title}")
            if past.rationale:
                lines.append(_BECAUSE + past.rationale)
    lines.append(f"{END}{block.id}{CLOSE}")
    return lines


def _escape(line: str) -> str:
    return "\\" + line if _ESCAPABLE.match(line) else line


def _unescape(line: str) -> str:
    match = _ESCAPABLE.match(line)
    return line[1:] if match and match.group(1) else line


# ----------------------------------------------------------------------------------- parse


def parse(text: str) -> ParsedFile:
    """Read a team file: every block that is in the format, and an error naming the line of
    each one that is not (that block is left out; the others are still read). Text outside
    blocks (headings, notes) is ignored."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    found: list[Block] = []
    errors: list[TeamFileError] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.startswith(BEGIN):
            try:
                block, index = _parse_block(lines, index)
            except TeamFileError as exc:
                errors.append(exc)
                index += 1
                while index < len(lines) and not lines[index].startswith(BEGIN):
                    index += 1  # on to the next block
                continue
            found.append(block)
            continue
        if line.startswith("<!-- agentctx:"):
            errors.append(TeamFileError(index + 1, "a closing line without its opening "
                                        "'<!-- agentctx:record …' line"))
        index += 1
    parsed = _dedupe(found)
    return replace(parsed, errors=tuple(sorted(errors, key=lambda e: e.line)))


def _parse_block(lines: list[str], start: int) -> tuple[Block, int]:
    number = start + 1
    fields = _fields(lines[start], number)
    rid = str(fields["id"])
    end_line = f"{END}{rid}{CLOSE}"
    stop = start + 1
    while stop < len(lines) and lines[stop] != end_line:
        if lines[stop].startswith(BEGIN) and _same_id(lines[stop], rid):
            break  # a union merge of two edits: this copy ends where the other begins
        if lines[stop].startswith((BEGIN, END)):
            raise TeamFileError(stop + 1, f"the block of {rid} (opened on line {number}) is not "
                                "closed before this line (an edit merged into the middle of a "
                                "block? resolve it by hand, keeping one version)")
        stop += 1
    if stop == len(lines):
        raise TeamFileError(number, f"the block of {rid} is never closed ('{end_line}')")
    inner = lines[start + 1:stop]
    if not inner or not inner[0].startswith("### ") or not inner[0][4:].strip():
        raise TeamFileError(number + 1, "expected the record's title ('### <title>')")
    title = inner[0][4:]
    if len(inner) < 2 or not inner[1].startswith("_"):
        raise TeamFileError(number + 2, "expected the record's summary line ('_<type> · …_')")
    content = inner[2:]
    history: tuple[PastVersion, ...] = ()
    if HISTORY in content:
        at = content.index(HISTORY)
        history = _history(content[at + 1:], start + 3 + at + 2)
        content = content[:at]
        if not content or content[-1] != "":
            raise TeamFileError(start + 3 + at + 1, "expected a blank line before 'History:'")
        content = content[:-1]
    if content and content[0] != "":
        raise TeamFileError(start + 4, "expected a blank line between the summary and the body")
    body = "\n".join(_unescape(line) for line in content[1:])
    seen: set[str] = set()
    for past in history:
        if past.id == rid:
            raise TeamFileError(number, f"the history of {rid} names the record itself")
        if past.id in seen:
            raise TeamFileError(number, f"the history of {rid} names {past.id} twice")
        seen.add(past.id)
    block = Block(id=rid, type=str(fields["type"]), title=title, body=body,
                  valid_from=str(fields["valid_from"]), revision=int(str(fields["rev"])),
                  key=None if fields["key"] is None else str(fields["key"]), history=history,
                  line=number)
    if block.checksum() != fields["sum"]:
        raise TeamFileError(number, f"the text of record {rid} does not match its checksum "
                            "(edited by hand, or two edits merged into one block: resolve it "
                            "by keeping one version, or change records with agentctx)")
    return block, stop + 1 if stop < len(lines) and lines[stop] == end_line else stop


def _same_id(line: str, rid: str) -> bool:
    return f'"id": "{rid}"' in line


def _fields(line: str, number: int) -> dict[str, object]:
    if not line.endswith(CLOSE):
        raise TeamFileError(number, "the opening comment does not end with ' -->'")
    raw = line[len(BEGIN):-len(CLOSE)]
    try:
        fields = json.loads(raw)
    except ValueError as exc:
        raise TeamFileError(number, f"the record's fields are not valid JSON ({exc})") from None
    if not isinstance(fields, dict):
        raise TeamFileError(number, "the record's fields are not a JSON object")
    missing = [k for k in ("id", "type", "rev", "valid_from", "key", "sum") if k not in fields]
    if missing:
        raise TeamFileError(number, f"the record's fields lack {', '.join(missing)}")
    if not isinstance(fields["id"], str) or not _ULID.match(fields["id"]):
        raise TeamFileError(number, f"{fields['id']!r} is not a record id")
    if fields["type"] not in TEAM_SECTIONS:
        raise TeamFileError(number, f"type {fields['type']!r} is not shared in a team file "
                            f"(use {', '.join(TEAM_SECTIONS)})")
    rev = fields["rev"]
    if not isinstance(rev, int) or isinstance(rev, bool) or rev < 1:
        raise TeamFileError(number, f"revision {rev!r} is not a positive whole number")
    if rev > REVISION_MAX:
        raise TeamFileError(number, f"revision {rev} is larger than {REVISION_MAX:,}")
    if fields["key"] is not None and not isinstance(fields["key"], str):
        raise TeamFileError(number, "key must be text or null")
    if not isinstance(fields["sum"], str):
        raise TeamFileError(number, "sum must be text")
    if not isinstance(fields["valid_from"], str) or not _is_time(fields["valid_from"]):
        raise TeamFileError(number, f"valid_from {fields['valid_from']!r} is not a date")
    return fields


def _is_time(text: str) -> bool:
    try:
        parse_time(text)
    except ValueError:
        return False
    return True


def _history(lines: list[str], first: int) -> tuple[PastVersion, ...]:
    found: list[PastVersion] = []
    for offset, line in enumerate(lines):
        if line.startswith(_BECAUSE) and found:
            last = found[-1]
            if last.rationale is not None:
                raise TeamFileError(first + offset, "a second 'because:' line for one version")
            found[-1] = PastVersion(last.id, last.title, last.valid_from, last.superseded_at,
                                    line[len(_BECAUSE):])
            continue
        match = _PAST.match(line)
        if match is None or not _ULID.match(match.group("id")):
            raise TeamFileError(first + offset, "expected a history line "
                                "('- `<id>` <from> → <until>: <title>')")
        if not (_is_time(match.group("start")) and _is_time(match.group("end"))):
            raise TeamFileError(first + offset, "a history line's dates are not dates")
        found.append(PastVersion(match.group("id"), match.group("title"), match.group("start"),
                                 match.group("end")))
    return tuple(found)


def _dedupe(found: list[Block]) -> ParsedFile:
    by_id: dict[str, list[Block]] = {}
    for block in found:
        by_id.setdefault(block.id, []).append(block)
    blocks: list[Block] = []
    duplicates: list[Duplicate] = []
    disagreeing: list[str] = []
    for rid, copies in by_id.items():
        if len(copies) == 1:
            blocks.append(copies[0])
            continue
        identical = all(copy == copies[0] for copy in copies)
        duplicates.append(Duplicate(rid, tuple(c.line for c in copies), identical))
        top = max(c.revision for c in copies)
        newest = [c for c in copies if c.revision == top]
        if all(c == newest[0] for c in newest):
            blocks.append(newest[0])
        else:
            disagreeing.append(rid)
    return ParsedFile(tuple(blocks), tuple(duplicates), tuple(disagreeing))
