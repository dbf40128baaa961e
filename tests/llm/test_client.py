"""The structured call through httpx2.MockTransport: request shape, pricing, bounded retries."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest

from agentctx.extract import request
from agentctx.extract.request import Extraction
from agentctx.ml.llm import Deadline, LLMError, make_client, structured_call
from tests.extract.builders import FakeAPI, api_message, extraction

GOOD = extraction(decisions=[{"what": "Use gRPC", "rationale": "streaming",
                              "supersedes": None, "confidence": "explicit"}])


def _call(api: FakeAPI, **options: Any) -> Any:
    client = make_client(api.client(), api_key="test-key")
    return structured_call(client, output_type=Extraction, model="claude-haiku-4-5",
                           system=request.system_blocks("project block"), user="transcript",
                           **options)


def test_request_carries_model_cached_system_and_the_schema() -> None:
    api = FakeAPI(lambda body: api_message(body, GOOD, usage={
        "input_tokens": 1000, "output_tokens": 200, "cache_creation_input_tokens": 6000,
        "cache_read_input_tokens": 0,
        "cache_creation": {"ephemeral_1h_input_tokens": 6000, "ephemeral_5m_input_tokens": 0}}))
    result = _call(api)
    assert result.value.decisions[0].what == "Use gRPC"
    body = api.bodies[0]
    assert body["model"] == "claude-haiku-4-5"
    assert body["system"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert body["system"][0]["text"] == request.system_prefix()
    assert body["system"][1] == {"type": "text", "text": "project block"}
    assert body["messages"] == [{"role": "user", "content": "transcript"}]
    assert body["output_config"]["format"] == {"type": "json_schema",
                                               "schema": request.output_schema()}
    assert "temperature" not in body
    (attempt,) = result.attempts
    assert attempt.ok and attempt.usage.cache_write_1h_tokens == 6000
    # $1/M in, $5/M out, $2/M one-hour cache writes
    assert attempt.usd == pytest.approx((1000 * 1 + 200 * 5 + 6000 * 2) / 1e6)


def test_a_transient_error_is_retried_once_then_succeeds() -> None:
    answers = iter([httpx2.Response(529, json={"type": "error", "error": {
        "type": "overloaded_error", "message": "Overloaded"}})])

    def script(body: dict[str, Any]) -> Any:
        return next(answers, None) or api_message(body, GOOD)

    api = FakeAPI(script)
    result = _call(api)
    assert len(api.bodies) == 2
    assert [a.ok for a in result.attempts] == [True]  # the 529 was not billed


def test_two_failures_give_up_with_one_clear_error() -> None:
    api = FakeAPI(lambda body: httpx2.Response(500, json={"type": "error", "error": {
        "type": "api_error", "message": "Internal error"}}))
    with pytest.raises(LLMError, match="API error 500: Internal error"):
        _call(api)
    assert len(api.bodies) == 2  # one retry, never more


def test_a_refused_key_is_not_retried() -> None:
    api = FakeAPI(lambda body: httpx2.Response(401, json={"type": "error", "error": {
        "type": "authentication_error", "message": "invalid x-api-key"}}))
    with pytest.raises(LLMError, match="API key was refused"):
        _call(api)
    assert len(api.bodies) == 1


def test_an_invalid_reply_is_billed_and_retried_once() -> None:
    replies = iter(["not json at all", json.dumps({"decisions": "wrong"})])
    api = FakeAPI(lambda body: api_message(body, next(replies)))
    with pytest.raises(LLMError, match="unusable reply") as caught:
        _call(api)
    assert len(caught.value.attempts) == 2
    assert all(not a.ok and a.usd > 0 for a in caught.value.attempts)


def test_a_reply_cut_at_max_tokens_is_unusable() -> None:
    api = FakeAPI(lambda body: api_message(body, GOOD, stop_reason="max_tokens"))
    with pytest.raises(LLMError, match="max_tokens"):
        _call(api, retries=0)


def test_json_wrapped_in_prose_is_still_read() -> None:
    api = FakeAPI(lambda body: api_message(body, "Here it is:\n" + json.dumps(GOOD) + "\n"))
    assert _call(api).value.decisions[0].rationale == "streaming"


def test_a_timeout_is_retried_and_the_deadline_bounds_everything() -> None:
    def script(body: dict[str, Any]) -> Any:
        raise httpx2.ReadTimeout("slow")

    api = FakeAPI(script)
    with pytest.raises(LLMError, match="did not answer"):
        _call(api, timeout=5)
    assert len(api.bodies) == 2
    with pytest.raises(LLMError, match="time limit"):
        _call(FakeAPI(script), deadline=Deadline(0.5))
