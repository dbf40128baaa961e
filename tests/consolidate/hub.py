"""A loopback stand-in for the Hugging Face hub, serving one model repository from memory.

It answers exactly the requests ``huggingface_hub.snapshot_download`` (2.x) makes:

* ``GET /api/models/<repo>/revision/<rev>`` — the repo info (its commit ``sha``);
* ``GET /api/models/<repo>/tree/<sha>?recursive=…`` — the file listing (one page);
* ``HEAD``/``GET /<repo>/resolve/<sha>/<file>`` — each file, with ``X-Repo-Commit`` and ``ETag``.

Every request is logged so a test can assert what was asked.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit


class FakeHub(ThreadingHTTPServer):
    """Serves ``files`` as the repository ``repo_id`` at one commit."""

    daemon_threads = True

    def __init__(self, repo_id: str, files: dict[str, bytes]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.repo_id = repo_id
        self.files = files
        self.sha = hashlib.sha1(b"".join(sorted(files.values()))).hexdigest()
        self.requests: list[tuple[str, str]] = []

    @property
    def endpoint(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}"


class _Handler(BaseHTTPRequestHandler):
    server: FakeHub

    def log_message(self, *args: object) -> None:  # keep test output clean
        pass

    def do_HEAD(self) -> None:
        self._answer(with_body=False)

    def do_GET(self) -> None:
        self._answer(with_body=True)

    def _answer(self, *, with_body: bool) -> None:
        hub = self.server
        path = unquote(urlsplit(self.path).path)
        hub.requests.append((self.command, self.path))
        info_prefix = f"/api/models/{hub.repo_id}/revision/"
        tree_prefix = f"/api/models/{hub.repo_id}/tree/"
        file_prefix = f"/{hub.repo_id}/resolve/"
        if path.startswith(info_prefix):
            body = json.dumps({"id": hub.repo_id, "modelId": hub.repo_id, "sha": hub.sha,
                               "private": False,
                               "siblings": [{"rfilename": n} for n in sorted(hub.files)]})
            self._send(200, body.encode(), "application/json", with_body)
        elif path.startswith(tree_prefix):
            listing = [{"type": "file", "path": name, "size": len(data),
                        "oid": hashlib.sha1(data).hexdigest()}
                       for name, data in sorted(hub.files.items())]
            self._send(200, json.dumps(listing).encode(), "application/json", with_body)
        elif path.startswith(file_prefix):
            _revision, _, name = path[len(file_prefix):].partition("/")
            data = hub.files.get(name)
            if data is None:
                self._send(404, b"not found", "text/plain", with_body,
                           {"X-Error-Code": "EntryNotFound", "X-Repo-Commit": hub.sha})
                return
            etag = hashlib.sha256(data).hexdigest()
            self._send(200, data, "application/octet-stream", with_body,
                       {"X-Repo-Commit": hub.sha, "ETag": f'"{etag}"'})
        else:
            self._send(404, b"not found", "text/plain", with_body,
                       {"X-Error-Code": "RepoNotFound"})

    def _send(self, status: int, body: bytes, content_type: str, with_body: bool,
              headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if with_body:
            self.wfile.write(body)


@contextmanager
def serve(repo_id: str, folder: Path) -> Iterator[FakeHub]:
    """Serve every file of ``folder`` as ``repo_id`` on a loopback port."""
    files = {p.relative_to(folder).as_posix(): p.read_bytes()
             for p in sorted(folder.rglob("*")) if p.is_file()}
    hub = FakeHub(repo_id, files)
    thread = threading.Thread(target=hub.serve_forever, daemon=True)
    thread.start()
    try:
        yield hub
    finally:
        hub.shutdown()
        hub.server_close()
        thread.join(timeout=5)
