"""The Messages API stand-in, driven by the real anthropic SDK (streaming and not)."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request

import anthropic
import pytest

from tests.support.messages_standin import (
    MessagesStandIn,
    Reply,
    StandInRequest,
    error_reply,
    json_reply,
    sequence,
    text_reply,
    tool_use_reply,
)

MODEL = "claude-haiku-4-5"


def _client(standin: MessagesStandIn) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key="test", base_url=standin.base_url, max_retries=0)


def test_non_streaming_text_with_usage_and_recorded_request() -> None:
    with MessagesStandIn(lambda r: text_reply(f"echo: {r.latest_prompt()}", usage={
            "input_tokens": 11, "output_tokens": 3, "cache_read_input_tokens": 4096})) as s:
        message = _client(s).messages.create(
            model=MODEL, max_tokens=50, system=[{"type": "text", "text": "be brief",
                                                 "cache_control": {"type": "ephemeral"}}],
            messages=[{"role": "user", "content": "hello"}])
        assert message.content[0].text == "echo: hello"  # type: ignore[union-attr]
        assert message.stop_reason == "end_turn" and message.model == MODEL
        assert (message.usage.input_tokens, message.usage.cache_read_input_tokens) == (11, 4096)
        (request,) = s.message_requests()
        assert request.body["system"][0]["cache_control"] == {"type": "ephemeral"}
        assert request.system_text() == "be brief" and not request.streaming
        sent_key = request.headers.get("x-api-key") or request.headers.get("authorization")
        assert sent_key in ("test", "Bearer test")
        assert s.errors == []


def test_streaming_text_arrives_in_deltas() -> None:
    with MessagesStandIn(lambda r: text_reply("a fairly long answer, split in pieces"),
                         chunk_chars=5) as s:
        events = list(_client(s).messages.create(
            model=MODEL, max_tokens=50, stream=True,
            messages=[{"role": "user", "content": "hi"}]))
        kinds = [e.type for e in events]
        assert kinds[0] == "message_start" and kinds[-1] == "message_stop"
        assert kinds.count("content_block_delta") == 8
        assert kinds[-2] == "message_delta"
        with _client(s).messages.stream(model=MODEL, max_tokens=50,
                                        messages=[{"role": "user", "content": "hi"}]) as stream:
            final = stream.get_final_message()
        assert final.content[0].text == "a fairly long answer, split in pieces"  # type: ignore
        assert s.message_requests()[0].streaming


def test_streaming_tool_use_and_thinking_blocks() -> None:
    def script(request: StandInRequest) -> Reply:
        if request.tool_results_since_prompt():
            return text_reply("done")
        reply = tool_use_reply("Write", {"file_path": "/tmp/notes.txt", "content": "x" * 40},
                               text="Writing it.")
        reply.content.insert(0, {"type": "thinking", "thinking": "plan", "signature": "s1"})
        return reply

    with MessagesStandIn(script) as s:
        client = _client(s)
        with client.messages.stream(model=MODEL, max_tokens=50,
                                    messages=[{"role": "user", "content": "write notes"}]) as st:
            first = st.get_final_message()
        assert first.stop_reason == "tool_use"
        thinking, text, tool = first.content
        assert thinking.type == "thinking" and thinking.thinking == "plan"
        assert text.type == "text" and text.text == "Writing it."
        assert tool.type == "tool_use" and tool.name == "Write"
        assert tool.input == {"file_path": "/tmp/notes.txt", "content": "x" * 40}
        # the client sends the tool result; the script stops calling tools
        follow = client.messages.create(model=MODEL, max_tokens=50, messages=[
            {"role": "user", "content": "write notes"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": tool.id,
                                               "name": "Write", "input": tool.input}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool.id,
                                          "content": "ok"}]}])
        assert follow.content[0].text == "done"  # type: ignore[union-attr]
        assert s.message_requests()[1].latest_prompt() == "write notes"


def test_errors_in_the_api_shape_and_a_sequence_script() -> None:
    script = sequence(error_reply(529, "overloaded_error", "Overloaded"), json_reply({"a": 1}))
    with MessagesStandIn(script) as s:
        client = _client(s)
        with pytest.raises(anthropic.OverloadedError) as caught:
            client.messages.create(model=MODEL, max_tokens=5,
                                   messages=[{"role": "user", "content": "x"}])
        assert caught.value.body["error"]["message"] == "Overloaded"  # type: ignore[index]
        again = client.messages.create(model=MODEL, max_tokens=5,
                                       messages=[{"role": "user", "content": "x"}])
        assert json.loads(again.content[0].text) == {"a": 1}  # type: ignore[union-attr]
        assert json.loads(client.messages.create(  # the last reply repeats
            model=MODEL, max_tokens=5,
            messages=[{"role": "user", "content": "x"}]).content[0].text) == {"a": 1}  # type: ignore


def test_a_broken_script_is_a_500_and_is_reported() -> None:
    def script(request: StandInRequest) -> Reply:
        raise ValueError("bad script")

    with MessagesStandIn(script) as s:
        with pytest.raises(anthropic.InternalServerError):
            _client(s).messages.create(model=MODEL, max_tokens=5,
                                       messages=[{"role": "user", "content": "x"}])
        assert s.errors == ["ValueError: bad script"]


def test_other_routes_count_tokens_and_a_slow_reply() -> None:
    with MessagesStandIn(lambda r: text_reply("late", delay_s=1.0)) as s:
        count = _client(s).messages.count_tokens(
            model=MODEL, messages=[{"role": "user", "content": "how many tokens is this"}])
        assert count.input_tokens > 0
        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(s.base_url + "/v1/models")
        assert missing.value.code == 404
        slow = anthropic.Anthropic(api_key="t", base_url=s.base_url, max_retries=0, timeout=0.3)
        with pytest.raises(anthropic.APITimeoutError):
            slow.messages.create(model=MODEL, max_tokens=5,
                                 messages=[{"role": "user", "content": "x"}])
        assert [r.path for r in s.requests] == ["/v1/messages/count_tokens", "/v1/models",
                                                "/v1/messages"]


def test_a_subprocess_reaches_it_through_anthropic_base_url() -> None:
    code = ("import anthropic; c = anthropic.Anthropic(max_retries=0); "
            "m = c.messages.create(model='claude-haiku-4-5', max_tokens=9, stream=False, "
            "messages=[{'role': 'user', 'content': 'ping'}]); print(m.content[0].text)")
    with MessagesStandIn(lambda r: text_reply("pong")) as s:
        env = {"ANTHROPIC_BASE_URL": s.base_url, "ANTHROPIC_API_KEY": "k", "PATH": "/usr/bin"}
        done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                              text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "pong"
        assert s.wait_for_requests(1)[0].latest_prompt() == "ping"
