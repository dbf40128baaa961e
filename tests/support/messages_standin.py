"""A loopback stand-in for the Anthropic Messages API, for tests that drive real clients.

It is a small threaded ``http.server`` on ``127.0.0.1`` (port 0, so the OS picks a free port) that
answers ``POST /v1/messages`` (any query string, e.g. ``?beta=true``) the way the real API does:

* non-streaming requests get one JSON ``message`` object;
* ``"stream": true`` requests get server-sent events — ``message_start``, then per content block
  ``content_block_start`` / ``content_block_delta`` (``text_delta``, ``input_json_delta`` or
  ``thinking_delta``) / ``content_block_stop``, then ``message_delta`` (stop reason and usage) and
  ``message_stop`` — over HTTP/1.1 chunked transfer, so keep-alive clients work;
* ``POST /v1/messages/count_tokens`` gets a rough ``input_tokens`` count;
* anything else gets a 404 in the API's error shape.

What to answer comes from a *script*: a callable that receives the parsed request
(:class:`StandInRequest`) and returns a :class:`Reply` (content blocks, stop reason, usage, or an
HTTP error). Every request is recorded (:attr:`MessagesStandIn.requests`), so a test can assert on
exactly what a client sent — the model, system blocks, tools, messages.

Point a client at it with ``base_url`` or the ``ANTHROPIC_BASE_URL`` environment variable::

    def script(request: StandInRequest) -> Reply:
        return text_reply(f"you said: {request.latest_prompt()}")

    with MessagesStandIn(script) as standin:
        client = anthropic.Anthropic(api_key="test", base_url=standin.base_url)
        client.messages.create(model="claude-haiku-4-5", max_tokens=100,
                               messages=[{"role": "user", "content": "hi"}])
        assert standin.requests[0].body["model"] == "claude-haiku-4-5"

Driving Claude Code: answer with :func:`tool_use_reply` to make it run a tool; it then sends the
``tool_result`` in its next request. Key the script off :meth:`StandInRequest.latest_prompt` and
stop issuing tool calls once :meth:`StandInRequest.tool_results_since_prompt` is non-empty, or
Claude Code loops.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

DEFAULT_MODEL = "claude-haiku-4-5"


@dataclass
class Reply:
    """What the stand-in answers to one request.

    ``content`` holds Anthropic content blocks exactly as the API returns them (``text``,
    ``tool_use``, ``thinking``). ``usage`` overrides the default counts (input estimated from the
    request, output from the content). A ``status`` other than 200 answers with the API's error
    shape (``error_type``, ``message``) instead. ``delay_s`` waits before answering (timeouts).
    """

    content: list[dict[str, Any]] = field(default_factory=list)
    stop_reason: str = "end_turn"
    usage: dict[str, Any] | None = None
    model: str | None = None
    status: int = 200
    error_type: str = "api_error"
    message: str = "stand-in error"
    delay_s: float = 0.0


def text_reply(text: str, **options: Any) -> Reply:
    """A reply with one text block."""
    return Reply(content=[{"type": "text", "text": text}], **options)


def json_reply(value: Any, **options: Any) -> Reply:
    """A reply whose one text block is ``value`` as JSON (structured-output answers)."""
    return text_reply(json.dumps(value), **options)


def tool_use_reply(name: str, tool_input: Mapping[str, Any], *, tool_id: str | None = None,
                   text: str | None = None, **options: Any) -> Reply:
    """A reply asking the client to run tool ``name`` (``stop_reason`` ``tool_use``)."""
    blocks: list[dict[str, Any]] = []
    if text:
        blocks.append({"type": "text", "text": text})
    blocks.append({"type": "tool_use", "id": tool_id or "", "name": name,
                   "input": dict(tool_input)})
    options.setdefault("stop_reason", "tool_use")
    return Reply(content=blocks, **options)


def error_reply(status: int, error_type: str, message: str = "stand-in error",
                **options: Any) -> Reply:
    """An HTTP error in the API's shape, e.g. ``error_reply(529, "overloaded_error")``."""
    return Reply(status=status, error_type=error_type, message=message, **options)


@dataclass
class StandInRequest:
    """One request as the stand-in received it."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: dict[str, Any]
    raw: bytes

    @property
    def streaming(self) -> bool:
        """Whether the client asked for server-sent events."""
        return bool(self.body.get("stream"))

    def system_text(self) -> str:
        """Every system text joined (the ``system`` field is a string or a list of blocks)."""
        system = self.body.get("system")
        if isinstance(system, str):
            return system
        if isinstance(system, list):
            return "\n".join(str(b.get("text", "")) for b in system if isinstance(b, dict))
        return ""

    def messages(self) -> list[dict[str, Any]]:
        """The request's messages (empty when absent)."""
        found = self.body.get("messages")
        return [m for m in found if isinstance(m, dict)] if isinstance(found, list) else []

    def _latest_prompt_index(self) -> int | None:
        for index in range(len(self.messages()) - 1, -1, -1):
            message = self.messages()[index]
            if message.get("role") == "user" and _texts(message.get("content")):
                return index
        return None

    def latest_prompt(self) -> str:
        """Text of the latest user message that carries text (not only tool results)."""
        index = self._latest_prompt_index()
        if index is None:
            return ""
        return "\n".join(_texts(self.messages()[index].get("content")))

    def tool_results_since_prompt(self) -> list[dict[str, Any]]:
        """``tool_result`` blocks sent after the latest prompt (non-empty: stop calling tools)."""
        index = self._latest_prompt_index()
        found: list[dict[str, Any]] = []
        for message in self.messages()[(index or 0):]:
            content = message.get("content")
            if isinstance(content, list):
                found.extend(b for b in content
                             if isinstance(b, dict) and b.get("type") == "tool_result")
        return found


def _texts(content: object) -> list[str]:
    if isinstance(content, str):
        return [content] if content.strip() else []
    if isinstance(content, list):
        return [str(b.get("text", "")) for b in content
                if isinstance(b, dict) and b.get("type") == "text" and str(b.get("text", ""))]
    return []


Script = Callable[[StandInRequest], "Reply | dict[str, Any]"]


def sequence(*replies: Reply) -> Script:
    """A script answering with ``replies`` in order, repeating the last one."""
    lock = threading.Lock()
    position = itertools.count()

    def script(_request: StandInRequest) -> Reply:
        with lock:
            index = next(position)
        return replies[min(index, len(replies) - 1)]

    return script


def _default_script(request: StandInRequest) -> Reply:
    return text_reply("OK")


class MessagesStandIn:
    """The loopback server. Use as a context manager, or call :meth:`start` / :meth:`stop`."""

    def __init__(self, script: Script | None = None, *, chunk_chars: int = 12) -> None:
        self.script: Script = script or _default_script
        self.chunk_chars = chunk_chars
        self._requests: list[StandInRequest] = []
        self._errors: list[str] = []
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> MessagesStandIn:
        """Bind 127.0.0.1 on a free port and serve in a background thread."""
        handler = _make_handler(self)
        self._server = _QuietServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release the port."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> MessagesStandIn:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The port the server listens on."""
        if self._server is None:
            raise RuntimeError("the stand-in is not running")
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>`` — the value for ``base_url`` / ``ANTHROPIC_BASE_URL``."""
        return f"http://127.0.0.1:{self.port}"

    # ------------------------------------------------------------------ what was seen

    @property
    def requests(self) -> list[StandInRequest]:
        """Every request received so far, in arrival order (a copy)."""
        with self._lock:
            return list(self._requests)

    def message_requests(self) -> list[StandInRequest]:
        """Only the ``POST /v1/messages`` requests."""
        return [r for r in self.requests if r.path == "/v1/messages"]

    @property
    def errors(self) -> list[str]:
        """Exceptions raised by the script (answered with HTTP 500); empty in a good run."""
        with self._lock:
            return list(self._errors)

    def wait_for_requests(self, count: int, timeout: float = 10.0) -> list[StandInRequest]:
        """Wait until at least ``count`` requests arrived; returns them (raises on timeout)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.requests
            if len(found) >= count:
                return found
            time.sleep(0.02)
        raise TimeoutError(f"saw {len(self.requests)} requests, expected {count}")

    # ------------------------------------------------------------------ internals

    def _record(self, request: StandInRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def _record_error(self, message: str) -> None:
        with self._lock:
            self._errors.append(message)

    def next_id(self) -> int:
        """A fresh number for message, tool-use and request ids."""
        with self._lock:
            return next(self._ids)


class _QuietServer(ThreadingHTTPServer):
    """A client that went away mid-answer (a killed process) is no error worth a traceback."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def _make_handler(standin: MessagesStandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "messages-standin/1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
            """Stay quiet (tests read the recorded requests instead)."""

        def do_POST(self) -> None:
            self._handle()

        def do_GET(self) -> None:
            self._handle()

        def do_HEAD(self) -> None:
            self._send_json(404, _error_body("not_found_error", "not found"), head_only=True)

        def _read_body(self) -> bytes:
            if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
                data = bytearray()
                while True:
                    size_line = self.rfile.readline().strip().split(b";", 1)[0]
                    size = int(size_line or b"0", 16)
                    if size == 0:
                        self.rfile.readline()
                        return bytes(data)
                    data.extend(self.rfile.read(size))
                    self.rfile.readline()
            length = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(length) if length else b""

        def _handle(self) -> None:
            raw = self._read_body()
            parts = urlsplit(self.path)
            try:
                body = json.loads(raw) if raw.strip() else {}
            except json.JSONDecodeError:
                body = {}
            request = StandInRequest(self.command, parts.path, parse_qs(parts.query),
                                     {k.lower(): v for k, v in self.headers.items()},
                                     body if isinstance(body, dict) else {}, raw)
            standin._record(request)
            if self.command == "POST" and parts.path == "/v1/messages/count_tokens":
                self._send_json(200, {"input_tokens": _estimate(raw)})
                return
            if self.command != "POST" or parts.path != "/v1/messages":
                self._send_json(404, _error_body("not_found_error",
                                                 f"no route {self.command} {parts.path}"))
                return
            if not raw.strip() or not isinstance(body, dict) or "messages" not in body:
                self._send_json(400, _error_body("invalid_request_error",
                                                 "messages: field required"))
                return
            try:
                reply = standin.script(request)
                if isinstance(reply, dict):
                    reply = Reply(**reply)
            except Exception as exc:  # a broken script must show up in the test, not hang it
                standin._record_error(f"{type(exc).__name__}: {exc}")
                self._send_json(500, _error_body("api_error", f"stand-in script failed: {exc}"))
                return
            if reply.delay_s:
                time.sleep(reply.delay_s)
            if reply.status != 200:
                self._send_json(reply.status, _error_body(reply.error_type, reply.message))
                return
            message = self._message(request, reply)
            if request.streaming:
                self._send_stream(message)
            else:
                self._send_json(200, message)

        def _message(self, request: StandInRequest, reply: Reply) -> dict[str, Any]:
            number = standin.next_id()
            content = []
            for index, block in enumerate(reply.content):
                block = dict(block)
                if block.get("type") == "tool_use" and not block.get("id"):
                    block["id"] = f"toolu_standin_{number}_{index}"
                if block.get("type") == "text":
                    block.setdefault("citations", None)
                content.append(block)
            usage = {"input_tokens": _estimate(request.raw),
                     "output_tokens": max(1, _estimate(json.dumps(content).encode())),
                     "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
            usage.update(reply.usage or {})
            return {"id": f"msg_standin_{number}", "type": "message", "role": "assistant",
                    "model": reply.model or str(request.body.get("model") or DEFAULT_MODEL),
                    "content": content, "stop_reason": reply.stop_reason,
                    "stop_sequence": None, "usage": usage}

        def _send_json(self, status: int, value: dict[str, Any], head_only: bool = False) -> None:
            data = json.dumps(value).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("request-id", f"req_standin_{standin.next_id()}")
            self.end_headers()
            if not head_only:
                self.wfile.write(data)
            self.wfile.flush()

        def _send_stream(self, message: dict[str, Any]) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream; charset=utf-8")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Transfer-Encoding", "chunked")
            self.send_header("request-id", f"req_standin_{standin.next_id()}")
            self.end_headers()
            for event, data in _stream_events(message, standin.chunk_chars):
                payload = f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()
                self.wfile.write(f"{len(payload):x}\r\n".encode() + payload + b"\r\n")
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

    return Handler


def _error_body(error_type: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": error_type, "message": message}}


def _estimate(data: bytes) -> int:
    return max(1, len(data) // 4)


def _pieces(text: str, size: int) -> Iterator[str]:
    if not text:
        return
    for start in range(0, len(text), max(1, size)):
        yield text[start:start + size]


def _stream_events(message: dict[str, Any], chunk_chars: int,
                   ) -> Iterator[tuple[str, dict[str, Any]]]:
    """The server-sent events of ``message``, as the real API orders them."""
    usage = message["usage"]
    start_usage = dict(usage, output_tokens=1)
    yield "message_start", {"type": "message_start",
                            "message": dict(message, content=[], stop_reason=None,
                                            usage=start_usage)}
    for index, block in enumerate(message["content"]):
        kind = block.get("type")
        if kind == "text":
            yield "content_block_start", {"type": "content_block_start", "index": index,
                                          "content_block": {"type": "text", "text": "",
                                                            "citations": None}}
            for piece in _pieces(str(block.get("text", "")), chunk_chars):
                yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                              "delta": {"type": "text_delta", "text": piece}}
        elif kind == "tool_use":
            yield "content_block_start", {"type": "content_block_start", "index": index,
                                          "content_block": {"type": "tool_use",
                                                            "id": block["id"],
                                                            "name": block["name"],
                                                            "input": {}}}
            for piece in _pieces(json.dumps(block.get("input", {})), chunk_chars):
                yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                              "delta": {"type": "input_json_delta",
                                                        "partial_json": piece}}
        elif kind == "thinking":
            yield "content_block_start", {"type": "content_block_start", "index": index,
                                          "content_block": {"type": "thinking", "thinking": "",
                                                            "signature": ""}}
            for piece in _pieces(str(block.get("thinking", "")), chunk_chars):
                yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                              "delta": {"type": "thinking_delta",
                                                        "thinking": piece}}
            yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                          "delta": {"type": "signature_delta",
                                                    "signature": str(block.get("signature",
                                                                               "sig"))}}
        else:
            yield "content_block_start", {"type": "content_block_start", "index": index,
                                          "content_block": block}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield "message_delta", {"type": "message_delta",
                            "delta": {"stop_reason": message["stop_reason"],
                                      "stop_sequence": None},
                            "usage": {"output_tokens": usage["output_tokens"],
                                      "input_tokens": usage["input_tokens"],
                                      "cache_creation_input_tokens":
                                          usage.get("cache_creation_input_tokens", 0),
                                      "cache_read_input_tokens":
                                          usage.get("cache_read_input_tokens", 0)}}
    yield "message_stop", {"type": "message_stop"}
