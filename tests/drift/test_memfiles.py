"""Memory-file discovery (imports, cycles, hops, editability) and parsing into units."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from agentctx.drift import memfiles
from agentctx.drift.memfiles import MemoryFile


def write(root: Path, name: str, text: str) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def parse_text(text: str) -> list[memfiles.Unit]:
    units, _, _ = memfiles.parse(MemoryFile(Path("/x/CLAUDE.md"), "CLAUDE.md", text, True, None, 0))
    return units


# ----------------------------------------------------------------------------- discovery


def test_entry_points_in_claude_code_order_with_nested_rules(tmp_path: Path) -> None:
    write(tmp_path, "CLAUDE.local.md", "# mine\n")
    write(tmp_path, ".claude/rules/zz.md", "z\n")
    write(tmp_path, ".claude/rules/api/http.md", "h\n")
    write(tmp_path, ".claude/CLAUDE.md", "c\n")
    write(tmp_path, "CLAUDE.md", "root\n")
    write(tmp_path, "AGENTS.md", "not read unless imported\n")
    files, missing = memfiles.discover(tmp_path)
    assert [f.name for f in files] == ["CLAUDE.md", ".claude/CLAUDE.md",
                                       ".claude/rules/api/http.md", ".claude/rules/zz.md",
                                       "CLAUDE.local.md"]
    assert missing == []
    assert [f.editable for f in files] == [True, True, True, True, False]


def test_imports_follow_four_hops_read_a_cycle_once_and_report_missing_files(
        tmp_path: Path) -> None:
    write(tmp_path, "CLAUDE.md", "See @docs/a.md and @docs/nope.md.\n")
    write(tmp_path, "docs/a.md", "@b.md\n")
    write(tmp_path, "docs/b.md", "@c.md @../CLAUDE.md\n")  # back to the start: a cycle
    write(tmp_path, "docs/c.md", "@d.md\n")
    write(tmp_path, "docs/d.md", "@e.md\n")  # d is the 4th hop; its import is not followed
    write(tmp_path, "docs/e.md", "five hops away\n")
    files, missing = memfiles.discover(tmp_path)
    assert [(f.name, f.hops) for f in files] == [
        ("CLAUDE.md", 0), ("docs/a.md", 1), ("docs/b.md", 2), ("docs/c.md", 3), ("docs/d.md", 4)]
    assert files[2].imported_by == "docs/a.md"
    assert [(m.importer, m.line, m.target) for m in missing] == [("CLAUDE.md", 1, "docs/nope.md")]


def test_imports_in_code_and_mail_addresses_are_not_imports(tmp_path: Path) -> None:
    text = ("Mail ops@example.com. Use `@not/this.md` inline.\n"
            "```\n@fenced.md\n```\n"
            "Decorators like @pytest.mark.slow are code, but @real.md (a file) counts.\n")
    assert memfiles.imports_of(text) == [(5, "pytest.mark.slow"), (5, "real.md")]
    write(tmp_path, "CLAUDE.md", text)
    write(tmp_path, "real.md", "# real\n")
    write(tmp_path, "fenced.md", "never read\n")
    files, missing = memfiles.discover(tmp_path)
    assert [f.name for f in files] == ["CLAUDE.md", "real.md"]
    assert [m.target for m in missing] == ["pytest.mark.slow"]


def test_only_markdown_utf8_project_files_are_editable(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere" / "notes.md"
    write(outside.parent, "notes.md", "outside the project\n")
    root = tmp_path / "repo"
    write(root, "CLAUDE.md", f"@package.json\n@{outside}\n@latin1.md\n@personal.md\n")
    write(root, "package.json", '{"scripts": {"test": "vitest"}}\n')
    (root / "latin1.md").write_bytes("caf\xe9 au lait\n".encode("latin-1"))
    write(root, "CLAUDE.local.md", "@personal.md\n")
    write(root, "personal.md", "reached from CLAUDE.md first\n")
    write(root, "huge.md", "x" * (memfiles.MAX_FILE_BYTES + 1))
    write(root, ".claude/CLAUDE.md", "@../huge.md\n")
    files = {f.name: f for f in memfiles.discover(root)[0]}
    assert files["CLAUDE.md"].editable and files["personal.md"].editable
    assert not files["package.json"].editable
    assert not files[str(outside.resolve())].editable
    assert not files["latin1.md"].editable and "caf" in files["latin1.md"].text
    assert not files["CLAUDE.local.md"].editable
    assert "huge.md" not in files  # Claude Code skips memory files over 4 MiB


def test_a_file_reached_only_through_claude_local_md_is_personal(tmp_path: Path) -> None:
    write(tmp_path, "CLAUDE.local.md", "@mine.md\n")
    write(tmp_path, "mine.md", "my machine\n")
    files = {f.name: f for f in memfiles.discover(tmp_path)[0]}
    assert not files["mine.md"].editable


def test_a_symlinked_claude_md_is_read_through_its_target(tmp_path: Path) -> None:
    write(tmp_path, "AGENTS.md", "# Agents\n- Use tabs.\n")
    os.symlink("AGENTS.md", tmp_path / "CLAUDE.md")
    files, _ = memfiles.discover(tmp_path)
    assert [f.name for f in files] == ["AGENTS.md"]


def test_without_a_claude_md_agents_md_is_the_memory_file_with_its_imports(
        tmp_path: Path) -> None:
    write(tmp_path, "AGENTS.md", "# Agents\n\nSee @docs/setup.md.\n")
    write(tmp_path, "docs/setup.md", "# Setup\n")
    write(tmp_path, ".claude/rules/style.md", "Tabs.\n")
    write(tmp_path, "CLAUDE.local.md", "# mine\n")
    files, _ = memfiles.discover(tmp_path)
    assert [(f.name, f.editable) for f in files] == [
        ("AGENTS.md", True), ("docs/setup.md", True), (".claude/rules/style.md", True),
        ("CLAUDE.local.md", False)]
    found = memfiles.primary(tmp_path)
    assert found.name == "AGENTS.md" and "no CLAUDE.md" in found.reason


def test_beside_a_claude_md_agents_md_is_read_only_when_imported(tmp_path: Path) -> None:
    write(tmp_path, "AGENTS.md", "- Requires Java 17.\n")
    write(tmp_path, ".claude/CLAUDE.md", "# Project\n")
    assert [f.name for f in memfiles.discover(tmp_path)[0]] == [".claude/CLAUDE.md"]
    found = memfiles.primary(tmp_path)
    assert found.name == ".claude/CLAUDE.md" and "AGENTS.md is not read" in found.reason
    write(tmp_path, "CLAUDE.md", "@AGENTS.md\n")
    assert [f.name for f in memfiles.discover(tmp_path)[0]] == [
        "CLAUDE.md", "AGENTS.md", ".claude/CLAUDE.md"]
    assert "AGENTS.md through it" in memfiles.primary(tmp_path).reason
    (tmp_path / "AGENTS.md").unlink()
    assert memfiles.primary(tmp_path) == ("CLAUDE.md", "Claude Code reads CLAUDE.md")


def test_with_neither_file_primary_says_claude_md_would_be_created(tmp_path: Path) -> None:
    assert memfiles.primary(tmp_path).name is None
    assert "would create CLAUDE.md" in memfiles.primary(tmp_path).reason
    assert memfiles.discover(tmp_path) == ([], [])


# ----------------------------------------------------------------------------- parsing

DOC = """---
paths: src/**
---
# Projet Élan

Intro sentence. A second one that
spans two lines.

## Testing

- Run `pytest -q` before pushing.
- Lint with ruff; the config is in
  pyproject.toml.

| Task | Command |
|------|---------|
| Test | `make test` |

```bash
make test
# a comment
```

- ~~Use nose~~ → <!-- agentctx:01JQ8Z3K0000000000000000AB --> Use pytest.

<!-- agentctx:begin -->
## Decisions (kept by agentctx)

- Public ids are UUIDv7. <!-- agentctx:01JQ8Z3K0000000000000000CD -->
<!-- agentctx:end -->
Trailing paragraph.
"""


def test_units_keep_kinds_lines_headings_blocks_and_sections() -> None:
    units = parse_text(DOC)
    summary = [(u.kind, u.line, u.end_line, u.text) for u in units]
    assert summary[:6] == [
        ("heading", 4, 4, "Projet Élan"),
        ("sentence", 6, 6, "Intro sentence."),
        ("sentence", 6, 7, "A second one that spans two lines."),
        ("heading", 9, 9, "Testing"),
        ("sentence", 11, 11, "Run pytest -q before pushing."),
        ("sentence", 12, 13, "Lint with ruff; the config is in pyproject.toml."),
    ]
    rows = [u for u in units if u.kind == "row"]
    assert [r.line for r in rows] == [15, 17] and rows[0].block == rows[1].block
    code = [u for u in units if u.kind == "code"]
    assert [c.text for c in code] == ["make test", "# a comment"]
    assert code[0].block == code[1].block != rows[0].block
    assert {u.section for u in units[4:8]} == {units[3].section}
    assert units[3].section != units[1].section
    assert units[4].headings == ("Projet Élan", "Testing")


def test_struck_text_and_comments_say_nothing_and_ids_are_read() -> None:
    units = parse_text(DOC)
    replaced = next(u for u in units if u.ids == ("01JQ8Z3K0000000000000000AB",))
    assert replaced.text == "→ Use pytest." and "nose" not in replaced.text
    entry = next(u for u in units if u.ids == ("01JQ8Z3K0000000000000000CD",))
    assert entry.marked and entry.text == "Public ids are UUIDv7."
    assert entry.headings[-1] == "Decisions (kept by agentctx)"
    trailing = units[-1]
    assert trailing.text == "Trailing paragraph." and not trailing.marked
    assert trailing.headings == ("Projet Élan", "Testing")  # the marked section's heading ends


def test_spans_point_at_the_raw_text_of_each_unit() -> None:
    lines = DOC.splitlines()
    for unit in parse_text(DOC):
        raw = " ".join(lines[number - 1][start:end] for number, start, end in unit.spans)
        assert memfiles.plain(raw) == unit.text, unit


TIES = """# Notes

- ~~Run the tests with `nosetests`.~~ → Tests run with pytest.
<!-- agentctx:01JQ8Z3K0000000000000000AB -->
- Store money as integer cents.

Intro. ~~Billing code lives in billing/.~~ → Payment code lives in payments/. Other text.
<!-- agentctx:01JQ8Z3K0000000000000000CD -->

| Piece | Choice |
|---|---|
| Web | FastAPI |
| Queue | ~~Celery on RabbitMQ~~ Dramatiq on Postgres |
<!-- agentctx:01JQ8Z3K0000000000000000EF -->

<!-- agentctx:begin -->
## Decisions (kept by agentctx)

- Public ids are UUIDv7: integer keys stay internal.
<!-- agentctx:01JQ8Z3K0000000000000000GH -->
- Feature flags are environment variables.
<!-- agentctx:01JQ8Z3K0000000000000000IJ -->
<!-- agentctx:end -->
"""


def test_a_tie_on_its_own_line_ties_the_struck_units_of_the_block_above() -> None:
    units = parse_text(TIES)
    tied = {u.text: u.ids for u in units if u.ids}
    assert tied == {
        "→ Tests run with pytest.": ("01JQ8Z3K0000000000000000AB",),
        "Intro. → Payment code lives in payments/.": ("01JQ8Z3K0000000000000000CD",),
        "| Queue | Dramatiq on Postgres |": ("01JQ8Z3K0000000000000000EF",),
        "Public ids are UUIDv7: integer keys stay internal.": ("01JQ8Z3K0000000000000000GH",),
        "Feature flags are environment variables.": ("01JQ8Z3K0000000000000000IJ",)}
    assert all(u.marked for u in units if u.ids and "UUID" in u.text)
    assert [u.struck for u in units if u.kind == "row"] == [False, False, True]
    # The tie lines are no units of their own, and what a unit says has no comment in it.
    assert not any("01JQ8Z3K" in u.text for u in units)
    assert next(u for u in units if u.text.startswith("Store money")).ids == ()


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from([
    "# Title", "## Sub", "- item one.", "  continued", "1. numbered", "", "```", "~~~",
    "| a | b |", "|---|---|", "Plain text. Another Sentence.", "> quoted", "---",
    memfiles.BEGIN_MARK, memfiles.END_MARK, "<!-- agentctx:01JQ8Z3K0000000000000000AB -->",
    "~~struck~~ → x", "ünïcødé 😀 text", "\tindented code"]), max_size=30))
def test_any_markdown_parses_into_units_within_their_lines(lines: list[str]) -> None:
    text = "\n".join(lines)
    units = parse_text(text)
    raw_lines = text.splitlines()
    for unit in units:
        assert 1 <= unit.line <= unit.end_line <= len(raw_lines)
        for number, start, end in unit.spans:
            assert 0 <= start < end <= len(raw_lines[number - 1])
