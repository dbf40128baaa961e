"""The transcript reader on real Claude Code transcripts and on synthetic edge cases."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agentctx.extract.transcript import TranscriptError, peek_metadata, read_transcript
from tests.conftest import SHARED
from tests.extract.builders import TranscriptWriter
from tests.support import special_files

DATA = SHARED / "data"
REAL = sorted(p for p in DATA.rglob("*.jsonl") if "/hooks/" not in str(p)) if DATA.is_dir() else []
needs_data = pytest.mark.skipif(not REAL, reason="shared transcripts not available")


@needs_data
@pytest.mark.parametrize("path", REAL, ids=lambda p: str(p.relative_to(DATA)))
def test_every_shared_transcript_parses(path: Path) -> None:
    """Every real transcript (subagents included) parses into a non-empty conversation."""
    transcript = read_transcript(path)
    assert transcript.entries, "no conversation found"
    assert transcript.skipped_lines == 0
    assert transcript.end_offset == path.stat().st_size
    assert transcript.session_id
    assert transcript.first_timestamp and transcript.last_timestamp
    offsets = [entry.offset for entry in transcript.entries]
    assert offsets == sorted(offsets)
    for entry in transcript.entries:
        assert entry.role in ("user", "assistant", "command", "summary")
        assert entry.text.strip()
        assert "<system-reminder>" not in entry.text


@needs_data
def test_real_session_keeps_prompts_tools_and_drops_injected_context() -> None:
    """The 2.1.328 session: three prompts, their tool calls; hook context and API lines gone."""
    transcript = read_transcript(DATA / "claude-code-2.1.328" / "session-write-bash-mcp.jsonl")
    users = [e.text for e in transcript.entries if e.role == "user"]
    assert users == ["We decided to use gRPC instead of REST for the internal API. WRITETEST "
                     "please write notes", "BASHTEST run the listing",
                     "TOOLTEST what rpc do we use"]
    text = "\n".join(e.text for e in transcript.entries)
    assert "INJECTED-BY" not in text  # hook_additional_context attachments
    assert "You are an agent working" not in text  # prompt_snapshot / api-request lines
    assert "→ Write(/home/dev/app/notes.txt)" in text
    # Tool-use ids repeat across turns in this file: each result stays with its own call.
    bash = next(e.text for e in transcript.entries if "→ Bash(" in e.text)
    assert "No such file or directory" in bash and "gRPC" not in bash
    # agentctx's own MCP results are not read back as new information.
    search = next(e.text for e in transcript.entries if "ctx_search" in e.text)
    assert "we moved to gRPC" not in search
    assert transcript.cwd == "/home/dev/app"


@needs_data
def test_compacted_session_crosses_the_boundary_and_skips_the_summary() -> None:
    """A 2,385-line session with a compaction: both halves are read, the summary is not."""
    path = DATA / "transcripts-public" / "spotter" / "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"
    transcript = read_transcript(path)
    stamps = [e.timestamp or "" for e in transcript.entries]
    boundary = "2026-02-12T14:48:36.922Z"  # the compact_boundary line
    assert any(s < boundary for s in stamps) and any(s > boundary for s in stamps)
    assert not any(e.role == "summary" for e in transcript.entries)
    assert "This session is being continued" not in "\n".join(e.text for e in transcript.entries)
    assert not any(e.role == "thinking" for e in transcript.entries)


@needs_data
def test_parallel_tool_calls_are_folded_back_in() -> None:
    """Claude Code writes parallel tool results as side branches; none is lost."""
    path = DATA / "transcripts-public" / "spotter" / "tool_heavy.jsonl"
    text = "\n".join(e.text for e in read_transcript(path).entries)
    assert "→ WebSearch(" in text and "→ Glob(" in text  # one message, two parallel calls
    subagent = DATA / ("transcripts-public/spotter/ae4a77f8-aedd-4bc1-888f-c94edc91af04/"
                       "subagents/agent-aac57f5.jsonl")
    calls = "\n".join(e.text for e in read_transcript(subagent).entries)
    assert calls.count("→ WebSearch(") == 6 and calls.count("→ WebFetch(") == 6


def test_assistant_lines_of_one_message_merge_and_thinking_is_dropped(tmp_path: Path) -> None:
    writer = TranscriptWriter(tmp_path / "s.jsonl")
    writer.user("Add a retry to fetch_user()")
    writer.assistant("Let me look at the function.", thinking="secret reasoning",
                     tools=[("Read", {"file_path": "/home/dev/app/src/api/users.py"}),
                            ("Bash", {"command": "pytest -q"})],
                     results=["import httpx\n" * 50, ("1 failed: TimeoutError", True)])
    writer.assistant("Added a 3-attempt retry around the request.")
    transcript = read_transcript(writer.save())
    roles = [e.role for e in transcript.entries]
    assert roles == ["user", "assistant", "assistant"]
    merged = transcript.entries[1].text
    assert merged.startswith("Let me look at the function.")
    assert "→ Read(/home/dev/app/src/api/users.py)" in merged
    assert "import httpx" not in merged  # file contents are not sent
    assert "→ Bash(pytest -q) ⇒ error: 1 failed: TimeoutError" in merged
    assert "secret reasoning" not in merged


def test_rewound_branch_and_sidechains_are_left_out(tmp_path: Path) -> None:
    writer = TranscriptWriter(tmp_path / "s.jsonl")
    first = writer.user("Use MySQL for the store")
    writer.assistant("Setting up MySQL.")
    writer.last = first  # the developer rewinds: the next prompt branches from the first one
    writer.assistant("Actually, which database?")
    writer.user("Use Postgres for the store")
    sidechain = writer._line("user", parent=None, isSidechain=True,
                             message={"role": "user", "content": "subagent prompt"})
    writer.lines[-1]["isSidechain"] = True
    writer.last = sidechain
    writer.assistant("subagent work")
    writer.lines[-1]["isSidechain"] = True
    text = "\n".join(e.text for e in read_transcript(writer.save()).entries)
    assert "Use Postgres" in text and "Use MySQL" in text
    assert "Setting up MySQL." not in text  # the abandoned branch
    assert "subagent" not in text


def test_injected_context_meta_and_commands(tmp_path: Path) -> None:
    writer = TranscriptWriter(tmp_path / "s.jsonl")
    writer.attachment({"type": "hook_additional_context", "hookName": "SessionStart",
                       "content": ["<agentctx-context>old record</agentctx-context>"]})
    writer.user('<agentctx-context event="prompt" project="app">\nReference data\n- [01ABC] '
                'decision · old\n</agentctx-context>\nreal question about caching')
    writer.user("<system-reminder>hook text</system-reminder>", isMeta=True)
    long_args = "keep the API notes " + "and the reasons " * 30
    writer.user("<command-name>/compact</command-name>\n<command-message>compact"
                f"</command-message>\n<command-args>{long_args}</command-args>")
    writer.user("<local-command-stdout>Compacted</local-command-stdout>")
    writer.user("UserPromptSubmit hook additional context: something injected")
    entries = read_transcript(writer.save()).entries
    assert [(e.role, e.text) for e in entries] == [
        ("user", "real question about caching"),
        ("command", "/compact " + long_args.strip()),
    ]


def test_secrets_are_redacted_in_every_entry(tmp_path: Path) -> None:
    key = "sk-ant-api03-" + "A" * 40
    writer = TranscriptWriter(tmp_path / "s.jsonl")
    writer.user(f"export ANTHROPIC_API_KEY={key} then run it")
    writer.assistant(tools=[("Bash", {"command": f"curl -H 'x-api-key: {key}' api"})],
                     results=[f"token={key}"])
    text = "\n".join(e.text for e in read_transcript(writer.save()).entries)
    assert key not in text
    assert "[REDACTED:" in text


def test_a_secret_given_once_is_gone_where_another_entry_repeats_it(tmp_path: Path) -> None:
    password = "Hq4vN8sLw2Tz7Kd9"
    writer = TranscriptWriter(tmp_path / "s.jsonl")
    writer.user("the cache will not answer")
    writer.assistant(tools=[("Bash", {"command": f"redis-cli -u redis://:{password}@cache ping"})],
                     results=[f"error: auth failed for {password}"])
    writer.user(f"so is {password} wrong?")
    text = "\n".join(e.text for e in read_transcript(writer.save()).entries)
    assert password not in text
    assert "auth failed for [REDACTED:url-password]" in text


def test_unknown_lines_garbage_and_a_half_written_last_line(tmp_path: Path) -> None:
    writer = TranscriptWriter(tmp_path / "s.jsonl")
    writer.other({"type": "some-future-type", "payload": {"x": 1}})
    writer.user("first prompt")
    writer.other({"type": "progress", "data": {"type": "hook_progress"}})
    path = writer.save()
    with open(path, "a", encoding="utf-8") as handle:
        handle.write("this is not json\n[1, 2]\n")
    complete = path.stat().st_size
    partial = json.dumps({"type": "user", "uuid": "x", "parentUuid": writer.last,
                          "message": {"role": "user", "content": "second prompt"}})
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(partial[: len(partial) // 2])
    transcript = read_transcript(path)
    assert [e.text for e in transcript.entries] == ["first prompt"]
    assert transcript.skipped_lines == 2
    assert transcript.end_offset == complete  # the half line is read next time
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(partial[len(partial) // 2:] + "\n")
    again = read_transcript(path)
    assert [e.text for e in again.since(complete)] == ["second prompt"]
    assert again.end_offset == path.stat().st_size


def test_since_and_before_split_at_a_byte_offset(tmp_path: Path) -> None:
    writer = TranscriptWriter(tmp_path / "s.jsonl")
    writer.user("one")
    writer.assistant("two")
    path = writer.save()
    middle = path.stat().st_size
    count = len(writer.lines)
    writer.user("three")
    writer.append_saved(count)
    transcript = read_transcript(path)
    assert [e.text for e in transcript.before(middle)] == ["one", "two"]
    assert [e.text for e in transcript.since(middle)] == ["three"]


def test_unreadable_transcripts_raise_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(TranscriptError, match="no transcript"):
        read_transcript(tmp_path / "missing.jsonl")
    with pytest.raises(TranscriptError, match="folder"):
        read_transcript(tmp_path)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    assert read_transcript(empty).entries == []


def test_a_compaction_summary_is_kept_when_the_compacted_part_is_gone(tmp_path: Path) -> None:
    writer = TranscriptWriter(tmp_path / "s.jsonl")
    writer._line("system", parent=None, subtype="compact_boundary",
                 content="Conversation compacted", logicalParentUuid="not-in-this-file",
                 compactMetadata={"trigger": "auto", "preTokens": 150000})
    writer.user("Summary: the developer chose Postgres over MySQL for the store.",
                isCompactSummary=True)
    writer.user("continue with the migrations")
    entries = read_transcript(writer.save()).entries
    assert [(e.role, e.text[:9]) for e in entries] == [("summary", "Summary: "),
                                                      ("user", "continue ")]


@pytest.mark.timeout(60)
def test_a_transcript_that_is_not_a_regular_file_is_refused_without_blocking(
        tmp_path: Path) -> None:
    special_files.fifo(tmp_path / "fifo.jsonl")
    special_files.zero_device(tmp_path / "zero.jsonl")
    for name in ("fifo.jsonl", "zero.jsonl"):
        with pytest.raises(TranscriptError, match="not a regular file"), \
                special_files.limited_memory():
            read_transcript(tmp_path / name)
    assert peek_metadata(tmp_path / "fifo.jsonl")["session_id"] is None


def test_an_overlong_line_is_skipped_and_the_rest_is_read(tmp_path: Path) -> None:
    writer = TranscriptWriter(tmp_path / "s.jsonl")
    writer.user("before the giant line")
    path = writer.save()
    giant = json.dumps({"type": "user", "uuid": "g", "message": {"content": "x" * 5000}})
    count = len(writer.lines)
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(giant + "\n")
    writer.user("after the giant line", parentUuid=writer.lines[-1]["uuid"])
    writer.append_saved(count)
    transcript = read_transcript(path, line_max=1000)
    assert [e.text for e in transcript.entries] == ["before the giant line",
                                                    "after the giant line"]
    assert transcript.skipped_lines == 1 and transcript.end_offset == path.stat().st_size


def test_a_huge_sparse_transcript_is_streamed_in_little_memory(tmp_path: Path) -> None:
    """1 GB of NUL bytes and no newline (a sparse file): read in bounded memory, nothing kept."""
    path = tmp_path / "huge.jsonl"
    TranscriptWriter(path).save()
    special_files.sparse(1 << 30)(path)
    script = ("import json, resource, sys\n"
              "from agentctx.extract.transcript import read_transcript\n"
              "t = read_transcript(sys.argv[1])\n"
              "print(json.dumps([len(t.entries), t.end_offset, "
              "resource.getrusage(resource.RUSAGE_SELF).ru_maxrss]))")
    done = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True,
                          text=True, timeout=120, check=True)
    entries, end_offset, max_rss_kib = json.loads(done.stdout)
    assert (entries, end_offset) == (0, 0)  # no complete line yet
    # Well under the 1 GB file (it was 1.4 GB when read whole). Alone this peaks near 80 MB; under
    # a loaded full suite it was seen at ~300 MB (the allocator keeps freed chunks), so the bound
    # says "streamed", not a tuned number.
    assert max_rss_kib < 600_000, f"{max_rss_kib} KiB"
