"""``agentctx web`` as a real process (start, serve, Ctrl-C, ports, SSH) and the launch API the
TUI calls (``agentctx.web.server.start``)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from agentctx.web import server as web_server
from tests.conftest import run_cli


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def listening(port: int) -> Iterator[socket.socket]:
    """Another program holding ``port``."""
    holder = socket.socket()
    holder.bind(("127.0.0.1", port))
    holder.listen()
    try:
        yield holder
    finally:
        holder.close()


@contextmanager
def web_process(*args: str, env: dict[str, str] | None = None,
                cwd: Path | None = None) -> Iterator[tuple[subprocess.Popen[str], list[str]]]:
    """``agentctx web --no-open …`` running; yields it and the lines it printed up to the URL."""
    process = subprocess.Popen([sys.executable, "-m", "agentctx", "web", "--no-open", *args],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               cwd=cwd, env={**os.environ, **(env or {})})
    try:
        assert process.stdout is not None
        lines: list[str] = []
        while not any("serving" in line for line in lines):
            line = process.stdout.readline()
            assert line, f"exited early: {process.wait(10)} {process.stderr.read()}"  # type: ignore[union-attr]
            lines.append(line.strip())
        yield process, lines
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=10)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def url_of(lines: list[str]) -> str:
    line = next(line for line in lines if "serving" in line)
    return line.split("serving ", 1)[1].split(" ", 1)[0]


def get_json(url: str) -> dict[str, object]:
    with urllib.request.urlopen(url, timeout=10) as reply:
        return dict(json.loads(reply.read()))


def test_web_serves_until_ctrl_c_and_leaves_nothing_behind(project_dir: Path) -> None:
    with web_process("--port", "0", cwd=project_dir) as (process, lines):
        url = url_of(lines)
        status = get_json(url + "api/status")
        assert status["project"]["name"] == "app"  # type: ignore[index]
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=10) == 0
        assert process.stdout is not None and "stopped" in process.stdout.read()
        assert process.stderr is not None and "Traceback" not in process.stderr.read()
    port = int(url.rsplit(":", 1)[1].strip("/"))
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()


def test_the_default_port_moves_to_the_next_free_one_and_says_so(project_dir: Path) -> None:
    port = free_port()
    with listening(port), web_process(cwd=project_dir,
                                      env={"AGENTCTX_WEB_PORT": str(port)}) as (_, lines):
        assert f"port {port} is busy; using " in lines[0]
        assert url_of(lines) != f"http://127.0.0.1:{port}/"
        assert get_json(url_of(lines) + "api/status")["version"]


def test_an_explicit_busy_port_is_an_error(project_dir: Path) -> None:
    port = free_port()
    with listening(port):
        done = run_cli("web", "--no-open", "--port", str(port), cwd=project_dir)
    assert done.returncode == 1
    assert done.stderr.strip() == f"agentctx: port {port} is busy; pick another with --port"


def test_over_ssh_it_prints_the_tunnel_to_use(project_dir: Path) -> None:
    env = {"SSH_CONNECTION": "10.0.0.2 50000 10.0.0.1 22"}
    with web_process("--port", "0", env=env, cwd=project_dir) as (process, lines):
        port = url_of(lines).rsplit(":", 1)[1].strip("/")
        assert process.stdout is not None
        tunnel = process.stdout.readline()
        assert f"ssh -L {port}:127.0.0.1:{port} {socket.gethostname()}" in tunnel


def test_the_launch_api_starts_and_stops_the_server(isolated_home: Path) -> None:
    url, stop = web_server.start(isolated_home, None, 0)
    try:
        assert url.startswith("http://127.0.0.1:")
        assert get_json(url + "api/status")["project"] is None  # an empty store
    finally:
        stop()
    stop()  # a second stop is harmless
    port = int(url.rsplit(":", 1)[1].strip("/"))
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    with pytest.raises(web_server.WebError, match="busy"), listening(free_port()) as held:
        web_server.start(isolated_home, None, held.getsockname()[1])
