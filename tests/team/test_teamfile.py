"""The team file's format: deterministic rendering, a lossless parse, clear errors."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentctx.core.ids import to_iso
from agentctx.team.teamfile import (
    TEAM_SECTIONS,
    Block,
    PastVersion,
    TeamFileError,
    parse,
    render,
)

ULID_CHARS = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
ids = st.text(ULID_CHARS, min_size=26, max_size=26)
text = st.text(st.characters(exclude_categories=["Cs"]), max_size=80)
one_line = text.map(lambda t: " ".join(t.split())).filter(bool)
dates = st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1)).map(
    lambda d: to_iso(d.replace(tzinfo=UTC)))
tricky_lines = st.sampled_from(["History:", "\\History:", "<!-- agentctx:end 01ABC -->",
                                "\\\\<!-- agentctx:record {} -->", "  because: x", "", "### t",
                                "_x_", "- `01ARZ3NDEKTSV4RRFFQ69G5FAV` a → b: c", "\r", "-->"])
bodies = st.lists(st.one_of(text, tricky_lines), max_size=6).map("\n".join)
pasts = st.builds(PastVersion, id=ids, title=one_line, valid_from=dates, superseded_at=dates,
                  rationale=st.one_of(st.none(), one_line))
blocks = st.builds(
    Block, id=ids, type=st.sampled_from(list(TEAM_SECTIONS)), title=one_line, body=bodies,
    valid_from=dates, revision=st.integers(1, 10_000), key=st.one_of(st.none(), text),
    history=st.lists(pasts, max_size=3, unique_by=lambda p: p.id).map(tuple))


def _key(block: Block) -> tuple[str, str, str]:
    return (block.type, block.title, block.id)


@settings(max_examples=100, deadline=None)
@given(st.lists(blocks, max_size=8, unique_by=lambda b: b.id), one_line)
def test_parse_reads_back_exactly_what_render_wrote(found: list[Block], name: str) -> None:
    rendered = render(name, found)
    parsed = parse(rendered)
    assert sorted(parsed.blocks, key=_key) == sorted(found, key=_key)
    assert parsed.duplicates == () and parsed.disagreeing == ()
    # Rendering is deterministic and independent of the order it is given blocks in.
    assert render(name, list(reversed(found))) == rendered
    assert render(name, parsed.blocks) == rendered


def test_sections_sorted_by_title_then_id_with_no_timestamp_or_count() -> None:
    a = Block("01ARZ3NDEKTSV4RRFFQ69G5FB0", "decision", "Zeta", "", "2026-01-01T00:00:00.000Z")
    b = Block("01ARZ3NDEKTSV4RRFFQ69G5FAV", "decision", "Alpha", "", "2026-01-02T00:00:00.000Z")
    c = Block("01ARZ3NDEKTSV4RRFFQ69G5FAA", "decision", "Alpha", "", "2026-01-03T00:00:00.000Z")
    out = render("shop", [a, b, c])
    assert out.index(c.id) < out.index(b.id) < out.index(a.id)
    assert "## Decisions" in out and "_No conventions yet._" in out
    assert "_No discoveries yet._" in out
    assert "Exported" not in out and not re.search(r"\d+ (records|decisions)", out)


def _one(body: str = "Body line") -> str:
    return render("shop", [Block("01ARZ3NDEKTSV4RRFFQ69G5FAV", "convention", "Tabs", body,
                                 "2026-01-02T00:00:00.000Z")])


@pytest.mark.parametrize(("change", "line", "words"), [
    (lambda t: t.replace('"rev": 1', '"rev": 0'), 11, "revision 0"),
    (lambda t: t.replace('"convention"', '"handover"', 1), 11, "not shared"),
    (lambda t: t.replace('{"id"', '{"id" ', 1).replace("}", "", 1), 11, "JSON"),
    (lambda t: t.replace("<!-- agentctx:end 01ARZ3NDEKTSV4RRFFQ69G5FAV -->\n", ""), 11,
     "never closed"),
    (lambda t: t.replace("### Tabs", "Tabs"), 12, "title"),
    (lambda t: t + "<!-- agentctx:end 01ARZ3NDEKTSV4RRFFQ69G5FAV -->\n", 21, "without"),
])
def test_a_malformed_file_names_the_line(change: object, line: int, words: str) -> None:
    original = _one()
    assert callable(change)
    broken = change(original)
    assert broken != original
    with pytest.raises(TeamFileError) as caught:
        parse(broken).strict()
    assert caught.value.line == line, (caught.value, broken.splitlines())
    assert words in str(caught.value)


def test_two_edits_merged_into_one_block_are_an_error_not_a_guess() -> None:
    lines = _one().splitlines()
    begin = next(i for i, line in enumerate(lines) if line.startswith("<!-- agentctx:record"))
    lines.insert(begin + 1, lines[begin].replace('"rev": 1', '"rev": 2'))
    with pytest.raises(TeamFileError) as caught:
        parse("\n".join(lines)).strict()
    assert caught.value.line == begin + 2 and "title" in str(caught.value)
    # Lines of two versions mixed in one block no longer match the block's checksum.
    mixed = _one("Line one\nLine two").replace("Line two\n", "Line two\nTheirs\n")
    with pytest.raises(TeamFileError, match="checksum") as caught:
        parse(mixed).strict()
    assert caught.value.line == begin + 1


def test_a_union_merge_of_two_whole_versions_reads_both_copies() -> None:
    ours = _one("Ours").replace('"rev": 1', '"rev": 3')
    theirs = _one("Theirs").replace('"rev": 1', '"rev": 2')
    ours_lines, theirs_lines = ours.splitlines(), theirs.splitlines()
    start = next(i for i, line in enumerate(ours_lines) if line.startswith("<!-- agentctx:rec"))
    # What git's union merge writes: our block's lines, then theirs, then the common end.
    merged = ours_lines[:start + 5] + theirs_lines[start:]
    parsed = parse("\n".join(merged))
    assert [b.body for b in parsed.blocks] == ["Ours"]
    assert parsed.duplicates and parsed.duplicates[0].lines == (start + 1, start + 6)


def test_duplicates_are_read_once_and_the_highest_revision_wins() -> None:
    one = _one()
    same = parse(one + "\n" + one)
    assert len(same.blocks) == 1 and same.duplicates[0].identical
    newer = _one("Newer").replace('"rev": 1', '"rev": 2')
    both = parse(one + newer)
    assert [b.body for b in both.blocks] == ["Newer"] and not both.duplicates[0].identical
    clash = parse(one + _one("Other text"))
    assert clash.blocks == () and clash.disagreeing == ("01ARZ3NDEKTSV4RRFFQ69G5FAV",)


HISTORY_ID = "01ARZ3NDEKTSV4RRFFQ69G5FB0"


@pytest.mark.parametrize(("block", "words"), [
    (Block("01ARZ3NDEKTSV4RRFFQ69G5FAV", "decision", "Self", "", "2026-01-02T00:00:00.000Z",
           history=(PastVersion("01ARZ3NDEKTSV4RRFFQ69G5FAV", "Old", "2025-01-01T00:00:00.000Z",
                                "2026-01-01T00:00:00.000Z"),)), "names the record itself"),
    (Block("01ARZ3NDEKTSV4RRFFQ69G5FAV", "decision", "Twice", "", "2026-01-02T00:00:00.000Z",
           history=(PastVersion(HISTORY_ID, "Old", "2025-01-01T00:00:00.000Z",
                                "2025-06-01T00:00:00.000Z"),
                    PastVersion(HISTORY_ID, "Old", "2025-06-01T00:00:00.000Z",
                                "2026-01-01T00:00:00.000Z"))), "twice"),
    (Block("01ARZ3NDEKTSV4RRFFQ69G5FAV", "decision", "Huge", "", "2026-01-02T00:00:00.000Z",
           revision=10**26), "larger than"),
], ids=["history names its own block", "a repeated history id", "rev 10^26"])
def test_each_malformed_block_is_an_error_naming_its_line_and_the_rest_is_read(
        block: Block, words: str) -> None:
    good = Block("01ARZ3NDEKTSV4RRFFQ69G5FAA", "convention", "Good", "Kept.",
                 "2026-01-02T00:00:00.000Z")
    text = render("shop", [block, good])
    parsed = parse(text)
    (error,) = parsed.errors
    assert words in str(error)
    assert text.splitlines()[error.line - 1].startswith("<!-- agentctx:record ")
    assert f'"id": "{block.id}"' in text.splitlines()[error.line - 1]
    assert [b.title for b in parsed.blocks] == ["Good"]


def test_a_format_1_block_with_confidence_and_pin_is_still_read() -> None:
    text = _one().replace('{"id"', '{"confidence": "explicit", "id"').replace(
        '"key": null', '"key": null, "pinned": true')
    (block,) = parse(text).strict().blocks
    assert block.title == "Tabs"
