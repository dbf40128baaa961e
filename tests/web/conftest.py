"""A small real store and the real web server on a loopback port, plus an HTTP client that
speaks to it the way the page does (or, for the security tests, the way an attacker would)."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from agentctx.store import Store, graph, sessions
from agentctx.store import projects as proj
from agentctx.store import records as rec
from agentctx.store.models import Draft
from agentctx.web import server as web_server


class Data(NamedTuple):
    """What the store holds: a project and the ids of its records."""

    project: str
    grpc: str  # superseded by ``connect``
    connect: str  # current, linked to src/api.py
    style: str  # a convention
    other_project: str


class Reply(NamedTuple):
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class Site(NamedTuple):
    """A running server and its store's contents."""

    server: web_server.WebServer
    data: Data

    @property
    def port(self) -> int:
        return self.server.port

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def request(self, method: str, path: str, body: Any = None, *,
                headers: dict[str, str] | None = None, host: str | None = None,
                write_headers: bool = True) -> Reply:
        """One request over a new connection. Writes carry the page's Origin and token unless
        ``write_headers`` is off; ``headers`` add to or override them."""
        sent: dict[str, str] = {"Host": f"127.0.0.1:{self.port}" if host is None else host}
        payload = None
        if body is not None:
            payload = body if isinstance(body, bytes) else json.dumps(body).encode()
            sent["Content-Type"] = "application/json"
        if method != "GET" and write_headers:
            sent["Origin"] = self.origin
            sent["X-Agentctx-Token"] = self.server.token
        sent.update(headers or {})
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
            for key, value in sent.items():
                conn.putheader(key, value)
            if payload is not None:
                conn.putheader("Content-Length", str(len(payload)))
            conn.endheaders(payload)
            response = conn.getresponse()
            return Reply(response.status, {k.lower(): v for k, v in response.getheaders()},
                         response.read())
        finally:
            conn.close()

    def get(self, path: str, **kwargs: Any) -> Any:
        reply = self.request("GET", path, **kwargs)
        assert reply.status == 200, (reply.status, reply.body[:300])
        return reply.json()


def fill(db: Store, root: Path) -> Data:
    """Two projects; a chain, a file link, a convention, a preference, a session with cost."""
    project = proj.resolve(db, str(root)).project.id
    grpc = rec.add(db, Draft(type="decision", title="Use gRPC between the services",
                             body="Internal calls go over gRPC.", confidence="explicit",
                             valid_from="2026-01-05T10:00:00Z"), project_id=project)
    connect = rec.supersede(db, grpc.id, Draft(
        type="", title="Use Connect RPC between the services",
        body="Connect RPC replaced gRPC: browsers can call it.", confidence="explicit",
        valid_from="2026-03-01T10:00:00Z"), "browsers need to call the services", actor="cli")
    with db.write():
        graph.link_record(db, connect.id, graph.ensure_node(db, project, "file", "src/api.py"))
    style = rec.add(db, Draft(type="convention", title="Tabs never spaces in Makefiles",
                              confidence="explicit"), project_id=project)
    rec.add(db, Draft(type="preference", title="Prefers small pull requests", scope="global",
                      body="Category: workflow"), project_id="global")
    with db.write():
        sessions.ensure(db, "sess-web-1", project, cwd=str(root))
        sessions.add_receipt(db, session_id="sess-web-1", project_id=project,
                             event="UserPromptSubmit", record_ids=[connect.id], scores=[0.9],
                             tokens=120, chars=480, prompt="which rpc do we use")
    other_root = root.parent / "other"
    (other_root / ".git").mkdir(parents=True)
    other = proj.resolve(db, str(other_root)).project.id
    rec.add(db, Draft(type="decision", title="Other project uses Kafka"), project_id=other)
    return Data(project, grpc.id, connect.id, style.id, other)


@pytest.fixture
def site(isolated_home: Path, project_dir: Path) -> Iterator[Site]:
    """The real server (started as the TUI starts it) over a filled store, on a free port."""
    with Store.open() as db:
        data = fill(db, project_dir)
    server, _ = web_server.bind(0, db_path=isolated_home / "agentctx.db", project=data.project,
                                log_path=isolated_home / "logs" / "web.log")
    import threading

    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02},
                              daemon=True)
    thread.start()
    try:
        yield Site(server, data)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
