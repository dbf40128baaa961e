"""Size tiers on large synthetic transcripts."""

from __future__ import annotations

from pathlib import Path

from agentctx.core.budget import estimate_tokens
from agentctx.extract import tiers
from agentctx.extract.transcript import read_transcript
from tests.extract.builders import TranscriptWriter, conversation


def _texts(tmp_path: Path, turns: int, words: int = 60) -> list[str]:
    writer = TranscriptWriter(tmp_path / f"t{turns}.jsonl")
    conversation(writer, turns, words=words)
    return tiers.format_entries(read_transcript(writer.save()).entries)


def test_small_session_is_one_call_with_everything(tmp_path: Path) -> None:
    texts = _texts(tmp_path, 10)
    plan = tiers.plan(texts)
    assert plan.tier == 1 and plan.calls == 1 and not plan.synthesis
    assert plan.content_tokens <= tiers.SINGLE_CALL_MAX_TOKENS
    assert plan.slices[0].text == "\n".join(texts)
    assert "Turn 0:" in plan.slices[0].text and "Turn 9:" in plan.slices[0].text


def test_medium_session_sends_the_first_3k_and_the_last_17k(tmp_path: Path) -> None:
    texts = _texts(tmp_path, 110)
    plan = tiers.plan(texts)
    assert tiers.SINGLE_CALL_MAX_TOKENS < plan.content_tokens <= tiers.HEAD_TAIL_MAX_TOKENS
    assert plan.tier == 2 and plan.calls == 1
    text = plan.slices[0].text
    head, marker_and_tail = text.split("\n[… ", 1)
    assert estimate_tokens(head) <= tiers.HEAD_TOKENS
    tail = marker_and_tail.split(" omitted …]\n", 1)[1]
    assert tiers.TAIL_TOKENS - 600 <= estimate_tokens(tail) <= tiers.TAIL_TOKENS
    assert "Turn 0:" in head and "Turn 109:" in tail
    assert plan.omitted_tokens > 0
    assert plan.sent_tokens <= tiers.HEAD_TOKENS + tiers.TAIL_TOKENS + 50
    # the omitted middle is really absent
    assert "Turn 50:" not in text


def test_just_over_15k_sends_everything_when_head_and_tail_overlap(tmp_path: Path) -> None:
    texts = _texts(tmp_path, 8, words=400)
    plan = tiers.plan(texts)
    assert tiers.SINGLE_CALL_MAX_TOKENS < plan.content_tokens <= 20_000
    assert plan.tier == 2 and plan.omitted_tokens == 0
    assert plan.slices[0].text == "\n".join(texts)


def test_large_session_is_map_reduce_over_10k_chunks(tmp_path: Path) -> None:
    texts = _texts(tmp_path, 400)
    plan = tiers.plan(texts)
    assert plan.content_tokens > tiers.HEAD_TAIL_MAX_TOKENS
    assert plan.tier == 3 and plan.synthesis
    assert plan.calls == len(plan.slices) + 1
    assert all(s.tokens <= tiers.CHUNK_TOKENS for s in plan.slices)
    assert [s.part for s in plan.slices] == list(range(1, len(plan.slices) + 1))
    assert all(s.parts == len(plan.slices) for s in plan.slices)
    # nothing is lost or repeated: the chunks are the whole content, in order
    assert "\n".join(s.text for s in plan.slices) == "\n".join(texts)
    assert len(plan.slices) >= plan.content_tokens // tiers.CHUNK_TOKENS


def test_an_oversized_entry_is_cut_to_fit_its_chunk() -> None:
    huge = "x " * 40_000  # ~23K tokens in one entry
    chunks = tiers.chunk(["small", huge, "small again"], tiers.CHUNK_TOKENS)
    assert all(c.tokens <= tiers.CHUNK_TOKENS for c in chunks)
    assert chunks[-1].text.endswith("small again")


def test_lead_in_takes_the_latest_context_within_budget(tmp_path: Path) -> None:
    texts = _texts(tmp_path, 30)
    context = tiers.lead_in(texts, max_tokens=1_000)
    assert estimate_tokens(context) <= 1_000
    assert context.endswith(texts[-1])
    assert tiers.lead_in([]) == ""


def test_format_entries_marks_days_and_roles(tmp_path: Path) -> None:
    writer = TranscriptWriter(tmp_path / "d.jsonl")
    writer.user("hello")
    writer.assistant(tools=[("Bash", {"command": "ls"})], results=["a b"])
    texts = tiers.format_entries(read_transcript(writer.save()).entries)
    assert texts[0].startswith("=== 2026-03-14 ===\n[09:00] DEVELOPER: hello")
    assert texts[1].startswith("[09:00] CLAUDE:\n  → Bash(ls) ⇒ a b")
