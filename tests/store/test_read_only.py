"""A store this user cannot write opens read-only: every read surface works (status, list,
search, export, the web view) and a write says the store is read-only, changing nothing.

The tests run as root here, for whom no permission bit forbids anything, so the reads run in a
forked child that became ``nobody`` (everything it needs is imported before the fork: ``nobody``
cannot read the interpreter's library under ``/root``)."""

from __future__ import annotations

import http.client
import json
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentctx.cli import _register, app
from agentctx.store import Store, projects, records
from agentctx.store.models import Draft
from agentctx.web import server as web_server

NOBODY = 65534
COMMANDS = (["status"], ["list"], ["search", "gRPC"], ["export"])

pytestmark = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                                reason="needs root to drop to another user")


@pytest.fixture
def shared(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, Path]]:
    """A home and a project in a folder another user may read (but not write)."""
    base = Path(tempfile.mkdtemp(prefix="agentctx-ro-"))
    base.chmod(0o755)
    home = base / "user" / ".agentctx"
    project = base / "app"
    (project / ".git").mkdir(parents=True)
    home.mkdir(parents=True)
    monkeypatch.setenv("AGENTCTX_HOME", str(home))
    monkeypatch.setenv("HOME", str(home.parent))
    monkeypatch.chdir(project)
    try:
        yield home, project
    finally:
        import shutil

        shutil.rmtree(base, ignore_errors=True)


def _read_only(home: Path) -> None:
    for folder, _subfolders, files in os.walk(home.parent.parent):
        os.chmod(folder, 0o755)
        for name in files:
            os.chmod(os.path.join(folder, name), 0o644)


def _as_nobody(work: Callable[[], Any]) -> Any:
    """``work()`` run in a forked child as ``nobody``; its JSON result."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            result = work()
        except BaseException as exc:  # reported to the parent
            result = {"crash": repr(exc)}
        os.write(write, json.dumps(result).encode())
        os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    data = b""
    while chunk := os.read(read, 65536):
        data += chunk
    os.close(read)
    return json.loads(data)


def test_every_read_surface_works_on_a_store_this_user_cannot_write(
        shared: tuple[Path, Path]) -> None:
    home, project = shared
    with Store.open() as db:
        pid = projects.resolve(db, str(project)).project.id
        records.add(db, Draft(type="decision", title="Use gRPC for services"), project_id=pid)
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    _register()
    runner = CliRunner()
    for args in (*COMMANDS, ["record", "decision", "Warm-up", "--body", "b"]):
        runner.invoke(app, args)  # imports what the child will need
    server, _ = web_server.bind(0, db_path=home / "agentctx.db", project=pid, log_path=None)
    before = (home / "agentctx.db").read_bytes()
    _read_only(home)

    def reads() -> dict[str, Any]:
        out: dict[str, Any] = {}
        for args in COMMANDS:
            done = runner.invoke(app, args)
            out[args[0]] = [done.exit_code, done.output]
        write = runner.invoke(app, ["record", "decision", "Not allowed", "--body", "b"])
        out["record"] = [write.exit_code, repr(write.exception)]
        import threading

        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        conn.request("GET", "/api/records", headers={"Host": f"127.0.0.1:{server.port}"})
        reply = conn.getresponse()
        out["web"] = [reply.status, reply.read().decode()]
        server.shutdown()
        return out

    try:
        out = _as_nobody(reads)
    finally:
        server.server_close()
    assert "crash" not in out, out
    for args in COMMANDS:
        code, text = out[args[0]]
        assert code == 0, (args, text)
    assert "2 current" in out["status"][1]  # the warm-up record and the first
    assert "Use gRPC for services" in out["list"][1] and "Use gRPC" in out["search"][1]
    assert "### Use gRPC for services" in out["export"][1]
    assert out["web"][0] == 200 and "Use gRPC for services" in out["web"][1]
    assert out["record"][0] != 0 and "read-only" in out["record"][1]
    assert (home / "agentctx.db").read_bytes() == before
