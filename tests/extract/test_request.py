"""The extraction prompt: a cacheable stable prefix, a schema the examples satisfy."""

from __future__ import annotations

import json
import re

from pydantic import BaseModel

from agentctx.core.budget import estimate_tokens
from agentctx.extract import request
from agentctx.extract.request import Extraction, Listed

HAIKU_MIN_CACHEABLE_TOKENS = 4096


def test_stable_prefix_is_long_enough_to_be_cached() -> None:
    """Haiku 4.5 caches only prefixes of >= 4,096 tokens; keep a 20% margin on the estimate.

    The estimator counts 3.5 characters per token; English prose runs nearer 4, so the
    real count is checked at 4 characters per token too.
    """
    prefix = request.system_prefix()
    assert estimate_tokens(prefix) >= HAIKU_MIN_CACHEABLE_TOKENS * 1.2
    assert len(prefix) / 4 >= HAIKU_MIN_CACHEABLE_TOKENS * 1.2


def test_stable_prefix_never_varies_and_carries_the_breakpoint() -> None:
    first = request.system_blocks("project A")
    second = request.system_blocks("project B, other records")
    assert first[0] == second[0]
    assert first[0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert "cache_control" not in first[1]
    assert first[1]["text"] == "project A"


def test_prefix_holds_the_negative_instructions_and_one_example_per_field() -> None:
    prefix = request.system_prefix()
    for rule in ("Extract ONLY from things the developer said or chose, not from Claude's "
                 "suggestions", "Do NOT extract commands Claude ran autonomously",
                 "file contents Claude wrote unprompted", "routine acknowledgments",
                 "One entry per distinct fact. Do not merge separate decisions into one",
                 "If nothing fits a category, return an empty list - do not invent entries"):
        assert rule in prefix, rule
    for section in ("## decisions", "## preferences", "## conventions", "## active_work",
                    "## gotchas", "## bugfixes", "## flush_ok"):
        body = prefix.split(section, 1)[1].split("\n## ", 1)[0]
        assert "Example" in body or section == "## flush_ok", section
    assert '"$defs"' in prefix and '"flush_ok"' in prefix  # the schema itself


def test_worked_examples_validate_against_the_schema() -> None:
    """Every JSON output shown to the model is a valid Extraction (the examples teach the shape)."""
    prefix = request.system_prefix()
    outputs = [line for line in prefix.splitlines() if line.startswith('{"decisions"')]
    assert len(outputs) == 3
    for line in outputs:
        Extraction.model_validate_json(line)
    # and each per-field example is a valid item of its field
    items: dict[str, type[BaseModel]] = {
        "decisions": request.Decision, "preferences": request.Preference,
        "conventions": request.Convention, "active_work": request.ActiveWork,
        "gotchas": request.Gotcha, "bugfixes": request.BugfixNote}
    for field, model in items.items():
        body = prefix.split(f"## {field}", 1)[1].split("\n## ", 1)[0]
        example = re.search(r"\n(\{.*\})\s*$", body.split("# What not", 1)[0], re.DOTALL)
        assert example, field
        model.model_validate(json.loads(example.group(1)))


def test_output_schema_is_strict_and_complete() -> None:
    schema = request.output_schema()
    assert schema["additionalProperties"] is False
    assert set(schema["required"]) == {"decisions", "preferences", "conventions", "active_work",
                                       "gotchas", "bugfixes", "flush_ok"}
    for definition in schema["$defs"].values():
        assert definition["additionalProperties"] is False
        assert set(definition["required"]) == set(definition["properties"])


def test_variable_block_and_messages() -> None:
    block = request.project_block(project_name="app", worktree="/w/app",
                                 active=[Listed("01J5K2M8", "decision", "Use gRPC")],
                                 preferences=[], stubs=[Listed("01HZY7Q2", "bugfix", "ls failed")])
    assert "01J5K2M8 - decision - Use gRPC" in block
    assert "Known preferences:\n(none)" in block
    assert "01HZY7Q2 - bugfix - ls failed" in block
    single = request.transcript_message("[09:00] DEVELOPER: hi", context="[08:00] CLAUDE: x")
    assert single.index("ALREADY PROCESSED (context only)") < single.index("NEW IN THIS SESSION")
    part = request.transcript_message("text", part=2, parts=5)
    assert "part 2 of 5" in part and "ALREADY PROCESSED" not in part
    merged = request.synthesis_message([request.empty_extraction(), request.empty_extraction()])
    assert "Part 1: {" in merged and "Part 2: {" in merged


def test_partial_results_go_back_to_the_model_redacted() -> None:
    token = "ghp_" + "Qx7" * 12
    partial = request.empty_extraction().model_copy(update={"gotchas": [request.Gotcha(
        pattern="Login fails", why_it_matters=f"The old token {token} was revoked.")]})
    merged = request.synthesis_message([partial, request.empty_extraction()])
    assert token not in merged and "[REDACTED:github-token]" in merged
