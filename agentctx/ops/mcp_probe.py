"""A real ``initialize`` handshake with a stdio MCP server, started the way Claude Code starts
it (``agentctx doctor``'s MCP check): the answer, its time and the server's name, or why not."""

from __future__ import annotations

import json
import os
import select
import subprocess
import tempfile
import time
from typing import IO

PROBE_TIMEOUT_S = 20.0


def probe_server(command: str, args: list[str], env: dict[str, str],
                 timeout_s: float = PROBE_TIMEOUT_S) -> tuple[bool, str]:
    """Start a stdio MCP server and complete the ``initialize`` handshake; (ok, what happened)."""
    with tempfile.TemporaryFile() as errors:  # not a pipe: a chatty server must never block
        started = time.perf_counter()
        try:
            process = subprocess.Popen([command, *args], stdin=subprocess.PIPE,
                                       stdout=subprocess.PIPE, stderr=errors,
                                       env={**os.environ, **env})
        except OSError as exc:
            return False, f"cannot start {command}: {exc.strerror}"
        try:
            return _handshake(process, started, timeout_s, errors)
        except OSError as exc:
            return False, f"lost the server: {exc.strerror}"
        finally:
            process.kill()
            process.wait()
            for stream in (process.stdin, process.stdout):
                if stream is not None:
                    stream.close()


def _handshake(process: subprocess.Popen[bytes], started: float, timeout_s: float,
               errors: IO[bytes]) -> tuple[bool, str]:
    assert process.stdin is not None and process.stdout is not None
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                          "clientInfo": {"name": "agentctx-doctor", "version": "1"}}}
    process.stdin.write((json.dumps(request) + "\n").encode())
    process.stdin.flush()
    deadline = started + timeout_s
    buffer = b""
    while time.perf_counter() < deadline:
        ready, _, _ = select.select([process.stdout], [], [], 0.2)
        if not ready:
            if process.poll() is not None:
                break
            continue
        chunk = os.read(process.stdout.fileno(), 65536)
        if not chunk:
            break
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            try:
                message = json.loads(line)
            except ValueError:
                return False, f"wrote something other than JSON-RPC: {line[:80]!r}"
            if isinstance(message, dict) and message.get("id") == 1:
                elapsed = (time.perf_counter() - started) * 1000
                if "error" in message:
                    return False, f"refused initialize: {message['error']}"
                info = message.get("result", {}).get("serverInfo", {})
                return True, (f"answers initialize in {elapsed:.0f} ms "
                              f"({info.get('name', '?')} {info.get('version', '')})".rstrip())
    try:
        code: int | None = process.wait(timeout=1.0)
    except subprocess.TimeoutExpired:
        code = None
    if code is None:
        return False, f"no initialize answer within {timeout_s:.0f} s"
    errors.seek(0)
    tail = errors.read().decode(errors="replace").strip().splitlines()[-1:] or ["no message"]
    return False, f"exited with status {code} before answering: {tail[0][:160]}"
