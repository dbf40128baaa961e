"""ADR-015 over real HTTP: one refused request per rule, and what the server never does."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from agentctx.store import Store
from agentctx.store import records as rec
from agentctx.web import server as web_server
from tests.web.conftest import Site


def assert_refused(reply_status: int, body: bytes) -> None:
    assert reply_status == 403, body
    assert b"Traceback" not in body


def test_it_listens_on_loopback_only(site: Site) -> None:
    assert site.server.server_address[0] == "127.0.0.1"
    hostname_ip = socket.gethostbyname(socket.gethostname())
    if not hostname_ip.startswith("127."):  # not reachable on another address of the machine
        with pytest.raises(OSError):
            socket.create_connection((hostname_ip, site.port), timeout=2).close()


@pytest.mark.parametrize("host", ["evil.example:{port}", "localhost", "127.0.0.1",
                                  "localhost:1", "127.0.0.1.nip.io:{port}", ""])
def test_a_foreign_host_header_is_refused(site: Site, host: str) -> None:
    """DNS rebinding: a name that resolves to 127.0.0.1 still carries its own Host."""
    reply = site.request("GET", "/api/records", host=host.format(port=site.port))
    assert_refused(reply.status, reply.body)
    assert "is not this server" in reply.json()["error"]
    assert site.request("GET", "/", host=f"localhost:{site.port}").status == 200


@pytest.mark.parametrize("fetch_site", ["cross-site", "same-site"])
def test_a_request_from_another_site_is_refused(site: Site, fetch_site: str) -> None:
    """A page on another local dev server is same-site to 127.0.0.1: refused as well."""
    reply = site.request("GET", "/api/records", headers={"Sec-Fetch-Site": fetch_site})
    assert_refused(reply.status, reply.body)
    for allowed in ("same-origin", "none"):
        assert site.request("GET", "/api/records",
                            headers={"Sec-Fetch-Site": allowed}).status == 200


@pytest.mark.parametrize("origin", [None, "http://evil.example", "http://localhost:1",
                                    "null", "https://127.0.0.1:{port}"])
def test_a_write_from_another_origin_is_refused(site: Site, isolated_home: Path,
                                                origin: str | None) -> None:
    headers = {"X-Agentctx-Token": site.server.token}
    if origin is not None:
        headers["Origin"] = origin.format(port=site.port)
    reply = site.request("POST", f"/api/records/{site.data.style}/pin", {"pinned": True},
                         headers=headers, write_headers=False)
    assert_refused(reply.status, reply.body)
    assert "Origin" in reply.json()["error"]
    with Store.open(isolated_home / "agentctx.db") as db:
        assert not rec.get(db, site.data.style).pinned


@pytest.mark.parametrize("token", [None, "", "wrong", "__AGENTCTX_TOKEN__"])
def test_a_write_without_the_token_is_refused(site: Site, isolated_home: Path,
                                              token: str | None) -> None:
    headers = {"Origin": site.origin}
    if token is not None:
        headers["X-Agentctx-Token"] = token
    reply = site.request("POST", f"/api/records/{site.data.style}/pin", {"pinned": True},
                         headers=headers, write_headers=False)
    assert_refused(reply.status, reply.body)
    assert "token" in reply.json()["error"]
    with Store.open(isolated_home / "agentctx.db") as db:
        assert not rec.get(db, site.data.style).pinned


def test_each_start_has_its_own_token(isolated_home: Path) -> None:
    first, _ = web_server.bind(0, db_path=isolated_home / "agentctx.db", project=None)
    second, _ = web_server.bind(0, db_path=isolated_home / "agentctx.db", project=None)
    try:
        assert first.token != second.token and len(first.token) >= 32
        assert first.token.encode() in first.assets["/"].body
    finally:
        first.server_close()
        second.server_close()


def test_no_cookies_are_set(site: Site) -> None:
    for method, path, body in (("GET", "/", None), ("GET", "/api/records", None),
                               ("POST", f"/api/records/{site.data.style}/pin",
                                {"pinned": False}), ("GET", "/nope", None)):
        reply = site.request(method, path, body, headers={"Cookie": "session=abc"})
        assert "set-cookie" not in reply.headers


@pytest.mark.parametrize("path", ["/static/../server.py", "/static/%2e%2e/server.py",
                                  "/../../etc/passwd", "/static/..%2fapi.py",
                                  "/static//etc/passwd", "/static/web.js/../../server.py",
                                  "/agentctx/web/server.py", "/static/"])
def test_no_path_traversal_on_static_files(site: Site, path: str) -> None:
    reply = site.request("GET", path)
    assert reply.status == 404
    assert reply.headers["content-type"].startswith("application/json")
    assert b"import" not in reply.body and b"root:" not in reply.body


def test_errors_are_json_without_tracebacks(site: Site, isolated_home: Path) -> None:
    (isolated_home / "agentctx.db").unlink()
    (isolated_home / "agentctx.db").mkdir()  # the store cannot be opened now
    reply = site.request("GET", "/api/records")
    assert reply.status in (500, 503)
    assert reply.headers["content-type"].startswith("application/json")
    assert b"Traceback" not in reply.body and b'File "' not in reply.body
    malformed = site.request("BREW", "/")
    assert malformed.status == 501 and malformed.json()["error"]


def test_the_page_may_load_only_its_own_code(site: Site) -> None:
    reply = site.request("GET", "/")
    policy = reply.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy
    assert reply.headers["x-content-type-options"] == "nosniff"
    assert reply.headers["cache-control"] == "no-store"
