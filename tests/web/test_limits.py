"""The web view's limits against a hostile or broken client: deep JSON, idle and half-sent
connections, aborted connections, and a log that cannot grow without bound."""

from __future__ import annotations

import socket
import struct
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentctx.web import server as web_server
from tests.web.conftest import Site


@pytest.fixture
def quick(isolated_home: Path) -> Iterator[web_server.WebServer]:
    """A server whose connections time out after half a second (the knob the tests turn)."""
    server, _ = web_server.bind(0, db_path=isolated_home / "agentctx.db", project=None,
                                log_path=isolated_home / "logs" / "web.log", idle_timeout=0.5)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02},
                              daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def _closed_after(sock: socket.socket, limit: float) -> float:
    """Seconds until the server closes ``sock`` (reading whatever it sends first)."""
    start = time.monotonic()
    sock.settimeout(limit)
    while True:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            break
        if not chunk:
            break
    return time.monotonic() - start


def _head(port: int, length: int) -> bytes:
    return (f"POST /api/records/01JZZZZZZZZZZZZZZZZZZZZZZZ/pin HTTP/1.1\r\n"
            f"Host: 127.0.0.1:{port}\r\nOrigin: http://127.0.0.1:{port}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {length}\r\n").encode()


def _log(home: Path) -> str:
    path = home / "logs" / "web.log"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def test_deeply_nested_json_is_a_clear_400(site: Site, isolated_home: Path) -> None:
    deep = b'{"pinned": ' + b"[" * 30_000 + b"]" * 30_000 + b"}"
    path = f"/api/records/{site.data.connect}/pin"
    reply = site.request("POST", path, deep)
    assert reply.status == 400 and "deeper than 400" in reply.json()["error"]
    assert "Traceback" not in _log(isolated_home)
    fine = b'{"x": "' + b"[" * 1000 + b'", "y": ' + b"[" * 399 + b"]" * 399 + b"}"
    assert web_server.json_depth(fine) == 400
    assert site.request("GET", "/api/records").status == 200


def test_idle_and_half_sent_connections_are_closed(quick: web_server.WebServer,
                                                   isolated_home: Path) -> None:
    idle = socket.create_connection(("127.0.0.1", quick.port))
    half_head = socket.create_connection(("127.0.0.1", quick.port))
    half_head.sendall(_head(quick.port, 20)[:40])
    half_body = socket.create_connection(("127.0.0.1", quick.port))
    half_body.sendall(_head(quick.port, 200) + b"\r\n" + b'{"pinned": tr')
    for sock in (idle, half_head, half_body):
        with sock:
            assert _closed_after(sock, 10) < 5
    log = _log(isolated_home)
    assert "Traceback" not in log and len(log.splitlines()) <= 3


def test_a_trickled_request_is_cut_at_the_deadline(quick: web_server.WebServer,
                                                  isolated_home: Path) -> None:
    head = _head(quick.port, 30) + b"\r\n" + b'{"pinned": true, "x": "yyyyyy"}'
    with socket.create_connection(("127.0.0.1", quick.port)) as sock:
        start = time.monotonic()
        closed = None
        for byte in head:  # one byte every 0.1 s: each read is quick, the whole is not
            try:
                sock.sendall(bytes([byte]))
            except OSError:
                closed = time.monotonic() - start
                break
            time.sleep(0.1)
        if closed is None:
            closed = time.monotonic() - start + _closed_after(sock, 10)
    assert closed < 3, closed  # 0.5 s deadline; sending it all would take over 15 s
    assert "Traceback" not in _log(isolated_home)


def test_an_aborted_connection_is_one_log_line(quick: web_server.WebServer,
                                               isolated_home: Path) -> None:
    for _ in range(3):
        sock = socket.create_connection(("127.0.0.1", quick.port))
        sock.sendall(_head(quick.port, 5000) + b"\r\n" + b'{"pinned": ' + b" " * 2000)
        # Close with a reset (SO_LINGER 0), as a browser tab that goes away can.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()
    deadline = time.monotonic() + 5
    while len(_log(isolated_home).splitlines()) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    lines = _log(isolated_home).splitlines()
    assert len(lines) == 3, lines
    assert all("ended:" in line for line in lines) and "Traceback" not in _log(isolated_home)


def test_the_web_log_is_rotated(quick: web_server.WebServer, isolated_home: Path) -> None:
    log = isolated_home / "logs" / "web.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("x" * web_server.LOG_MAX_BYTES + "\n", encoding="utf-8")
    quick.log_error_text("one more line")
    assert log.read_text(encoding="utf-8") == "one more line\n"
    assert (log.parent / "web.log.1").stat().st_size > web_server.LOG_MAX_BYTES


@pytest.mark.slow
def test_with_the_default_timeout_an_idle_connection_is_closed_within_30_s(site: Site) -> None:
    assert site.server.idle_timeout <= 30
    with socket.create_connection(("127.0.0.1", site.port)) as sock:
        sock.sendall(_head(site.port, 50)[:30])
        assert _closed_after(sock, 40) <= 30
