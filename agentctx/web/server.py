"""The local web view's HTTP server: the standard library's ``http.server``, secure by default.

The rules (the seed's ADR-015), checked on every request before anything else runs:

* it binds 127.0.0.1 only;
* a ``Host`` other than ``localhost:<port>`` or ``127.0.0.1:<port>`` gets 403 (DNS rebinding);
* a ``Sec-Fetch-Site`` other than ``same-origin`` or ``none`` gets 403 (a page of another local
  server is *same-site*, so that is refused too);
* a write (POST) whose ``Origin`` is not this server gets 403, and so does one without the
  per-start random token in ``X-Agentctx-Token`` (the token is embedded in the served page);
* no cookies are set or read; static files come from a fixed table of the package's assets, so
  no path reaches the file system; every error is JSON without a traceback (tracebacks go to
  ``<home>/logs/web.log``, rotated at :data:`LOG_MAX_BYTES`; a connection that broke or timed
  out is one line there);
* a JSON body nests at most :data:`JSON_MAX_DEPTH` deep (400 beyond that); a connection idle or
  half-sent for :data:`IDLE_TIMEOUT_S` seconds is closed.

:func:`start` runs the server on a thread and returns its URL and a ``stop`` function (the TUI
launches it this way); :func:`serve` runs it in the foreground until Ctrl-C (``agentctx web``).
"""

from __future__ import annotations

import errno
import hmac
import json
import secrets
import signal
import socket
import sys
import threading
import traceback
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import parse_qs, urlsplit

from agentctx.core import config, logfile
from agentctx.store import Store
from agentctx.store.errors import StoreError
from agentctx.web import api

HOST = "127.0.0.1"
DEFAULT_PORT = 7327
PORT_TRIES = 20  # the default port moves up at most this far when it is busy
BODY_MAX_BYTES = 64 * 1024
JSON_MAX_DEPTH = 400
IDLE_TIMEOUT_S = 20.0  # an idle or half-sent connection is closed after this long
LOG_MAX_BYTES = 1_000_000  # web.log is rotated (one web.log.1 kept) at this size
TOKEN_PLACEHOLDER = "__AGENTCTX_TOKEN__"
SAFE_FETCH_SITES = ("same-origin", "none")
WRITE_METHODS = ("POST", "PUT", "PATCH", "DELETE")
CONTENT_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
                 ".css": "text/css; charset=utf-8", ".svg": "image/svg+xml"}
# The page may load only its own scripts and styles and talk only to this server.
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
STATIC_FILES = ("index.html", "web.js", "graph.js", "web.css", "icon.svg")


class WebError(Exception):
    """The server cannot start (a busy port, no free port)."""


class Asset(NamedTuple):
    """One file the server serves: its bytes and content type."""

    body: bytes
    content_type: str


def load_assets(token: str) -> dict[str, Asset]:
    """The page and its assets from the package, by URL path; the page carries ``token``."""
    folder = resources.files("agentctx.web") / "static"
    assets: dict[str, Asset] = {}
    for name in STATIC_FILES:
        body = (folder / name).read_bytes()
        if name == "index.html":
            body = body.replace(TOKEN_PLACEHOLDER.encode(), token.encode())
        assets["/" if name == "index.html" else f"/static/{name}"] = Asset(
            body, CONTENT_TYPES[Path(name).suffix])
    return assets


class WebServer(ThreadingHTTPServer):
    """One running web view: its store, default project, token and assets."""

    daemon_threads = True
    allow_reuse_address = True  # Linux: rebinding over TIME_WAIT, never over a listener

    def __init__(self, port: int, *, db_path: Path, project: str | None,
                 busy_timeout_ms: int = 3000, search_backend: str = "fts",
                 log_path: Path | None = None, idle_timeout: float = IDLE_TIMEOUT_S) -> None:
        super().__init__((HOST, port), Handler)
        self.idle_timeout = idle_timeout
        self.db_path = db_path
        self.project = project
        self.busy_timeout_ms = busy_timeout_ms
        self.search_backend = search_backend
        self.log_path = log_path
        self.token = secrets.token_urlsafe(32)
        self.assets = load_assets(self.token)
        self.origins = {f"http://localhost:{self.port}", f"http://{HOST}:{self.port}"}
        self.hosts = {f"localhost:{self.port}", f"{HOST}:{self.port}"}

    @property
    def port(self) -> int:
        """The port the server listens on."""
        return int(self.server_address[1])

    @property
    def url(self) -> str:
        """The page's address."""
        return f"http://{HOST}:{self.port}/"

    def handle_error(self, request: object, client_address: object) -> None:
        """A connection that broke mid-request (the browser navigated away): one log line."""
        self.log_error_text(f"connection from {_peer(client_address)} ended: {_why()}")

    def log_error_text(self, text: str) -> None:
        """Append ``text`` to the web log (never to the page), rotating it at
        :data:`LOG_MAX_BYTES`."""
        if self.log_path is not None:
            logfile.append(self.log_path.name, text, where=self.log_path.parent,
                           max_bytes=LOG_MAX_BYTES)


class Handler(BaseHTTPRequestHandler):
    """Checks the security rules, then serves an asset or an API route."""

    server: WebServer
    server_version = "agentctx-web"
    sys_version = ""
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes; with Nagle's algorithm on, the body waits for the
    # client's delayed ACK (~40 ms on loopback) on every keep-alive response.
    disable_nagle_algorithm = True

    def setup(self) -> None:
        """Every read of the connection times out (``socket.settimeout``), and receiving a
        request (its head, then its body) has a deadline of the same length: neither an idle
        nor a half-sent nor a trickled request can hold a thread for longer."""
        self.timeout = self.server.idle_timeout  # type: ignore[misc]  # per connection
        self._deadline: threading.Timer | None = None
        super().setup()

    def handle_one_request(self) -> None:
        """One request; a connection that breaks or times out is one log line, then closed."""
        self._arm()
        try:
            super().handle_one_request()
        except (ConnectionError, TimeoutError):
            self.server.log_error_text(
                f"connection from {_peer(self.client_address)} ended: {_why()}")
            self.close_connection = True
        finally:
            self._disarm()

    def _arm(self) -> None:
        """Cut the connection if what is being received has not arrived in time."""
        self._disarm()
        timer = threading.Timer(self.server.idle_timeout, self._cut)
        timer.daemon = True
        timer.start()
        self._deadline = timer

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _cut(self) -> None:
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def do_GET(self) -> None:
        self._handle()

    def do_HEAD(self) -> None:
        self._handle()

    def do_POST(self) -> None:
        self._handle()

    def do_PUT(self) -> None:
        self._handle()

    def do_PATCH(self) -> None:
        self._handle()

    def do_DELETE(self) -> None:
        self._handle()

    def do_OPTIONS(self) -> None:
        self._handle()

    # --------------------------------------------------------------------- the rules

    def refusal(self) -> str | None:
        """Why this request is refused (403), or ``None``."""
        host = self.headers.get("Host", "")
        if host not in self.server.hosts:
            return f"Host {host!r} is not this server (use {self.server.url})"
        site = self.headers.get("Sec-Fetch-Site")
        if site is not None and site not in SAFE_FETCH_SITES:
            return f"a {site} request is not allowed"
        if self.command in WRITE_METHODS:
            origin = self.headers.get("Origin")
            if origin not in self.server.origins:
                return "a write must come from this server's page (Origin)"
            token = self.headers.get("X-Agentctx-Token", "")
            if not hmac.compare_digest(token.encode(), self.server.token.encode()):
                return "a write needs this server's token (X-Agentctx-Token)"
        return None

    # --------------------------------------------------------------------- dispatch

    def _handle(self) -> None:
        self._disarm()  # the head has arrived; a body is read under a deadline of its own
        try:
            why = self.refusal()
            if why is not None:
                self._drain()
                self.send_json(403, {"error": why})
                return
            path = urlsplit(self.path).path
            if path.startswith("/api/"):
                self._api(path)
            else:
                self._static(path)
        except (ConnectionError, TimeoutError):
            raise  # the client went away or stalled: handle_one_request logs one line
        except Exception:  # the last line of defence: log it, say little
            self.server.log_error_text(f"{self.command} {self.path}\n{traceback.format_exc()}")
            self.close_connection = True
            try:
                self.send_json(500, {"error": "internal error (details in the agentctx log)"})
            except OSError:
                pass

    def _static(self, path: str) -> None:
        if self.command not in ("GET", "HEAD"):
            self._drain()
            self.send_json(405, {"error": f"{self.command} is not allowed here"})
            return
        asset = self.server.assets.get(path)
        if asset is None:
            self.send_json(404, {"error": f"no such page {path}"})
            return
        self.send_bytes(200, asset.body, asset.content_type)

    def _api(self, path: str) -> None:
        try:
            body = self._json_body() if self.command in WRITE_METHODS else {}
            query = parse_qs(urlsplit(self.path).query, keep_blank_values=True)
            api.find_route(self.command, path)  # 404 / 405 before the store is opened
            db = Store.open(self.server.db_path, busy_timeout_ms=self.server.busy_timeout_ms)
            try:
                ctx = api.Context(db, query, body, self.server.project,
                                  self.server.search_backend)
                result = api.dispatch(ctx, self.command, path)
            finally:
                db.close()
        except api.ApiError as exc:
            self.send_json(exc.status, {"error": str(exc)})
            return
        except StoreError as exc:
            self.send_json(503, {"error": str(exc)})
            return
        self.send_json(200, result)

    def _json_body(self) -> dict[str, Any]:
        length_text = self.headers.get("Content-Length") or "0"
        try:
            length = int(length_text)
        except ValueError:
            raise api.ApiError(400, "Content-Length must be a number") from None
        if length < 0 or length > BODY_MAX_BYTES:
            self.close_connection = True
            raise api.ApiError(413, f"the body must be under {BODY_MAX_BYTES} bytes")
        self._arm()
        try:
            raw = self.rfile.read(length) if length else b""
        finally:
            self._disarm()
        if len(raw) < length:
            self.close_connection = True
            raise ConnectionAbortedError(f"the body ended after {len(raw)} of {length} bytes")
        if not raw:
            return {}
        if len(raw) > JSON_MAX_DEPTH and json_depth(raw) > JSON_MAX_DEPTH:
            raise api.ApiError(400, f"the body nests deeper than {JSON_MAX_DEPTH} levels")
        try:
            value = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise api.ApiError(400, "the body is not valid JSON") from None
        if not isinstance(value, dict):
            raise api.ApiError(400, "the body must be a JSON object")
        return value

    def _drain(self) -> None:
        """Read a refused request's body so the connection stays usable (or close it)."""
        try:
            length = int(self.headers.get("Content-Length") or "0")
        except ValueError:
            length = -1
        if 0 < length <= BODY_MAX_BYTES:
            self._arm()
            try:
                self.rfile.read(length)
            finally:
                self._disarm()
        elif length != 0:
            self.close_connection = True

    # --------------------------------------------------------------------- responses

    def send_json(self, status: int, value: Any) -> None:
        """Send ``value`` as JSON with the security headers."""
        body = json.dumps(value, ensure_ascii=False, default=str).encode("utf-8")
        self.send_bytes(status, body, "application/json; charset=utf-8")

    def send_bytes(self, status: int, body: bytes, content_type: str) -> None:
        """Send a complete response with the security headers (no cookies, no caching)."""
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("X-Frame-Options", "DENY")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Cross-Origin-Resource-Policy", "same-origin")
        self.send_header("Content-Security-Policy", CSP)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def send_error(self, code: int, message: str | None = None,
                   explain: str | None = None) -> None:
        """Protocol errors (a malformed request line, a header too long) as JSON too."""
        self.close_connection = True
        try:
            self.send_json(code, {"error": message or HTTPStatus(code).phrase})
        except (OSError, ValueError):
            pass

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        """No access log on the terminal."""


def json_depth(raw: bytes) -> int:
    """How deep the arrays and objects of a JSON text nest (strings skipped), without parsing
    it: ``json.loads`` recurses once per level and a deep enough text exhausts the stack."""
    deepest = depth = 0
    in_string = escaped = False
    for byte in raw:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):  # [ {
            depth += 1
            deepest = max(deepest, depth)
        elif byte in (0x5D, 0x7D):  # ] }
            depth -= 1
    return deepest


def _peer(address: object) -> str:
    if isinstance(address, tuple) and len(address) >= 2:
        return f"{address[0]}:{address[1]}"
    return str(address)


def _why() -> str:
    """The exception being handled, as a few words (never a traceback)."""
    error = sys.exc_info()[1]
    if error is None:
        return "unknown error"
    return f"{type(error).__name__}: {error}"[:200]


# ------------------------------------------------------------------------------ start / stop


def bind(port: int | None, *, db_path: Path, project: str | None, busy_timeout_ms: int = 3000,
         search_backend: str = "fts", log_path: Path | None = None,
         default_port: int = DEFAULT_PORT,
         idle_timeout: float = IDLE_TIMEOUT_S) -> tuple[WebServer, str | None]:
    """A bound (not yet serving) server and, when the default port was busy, a line saying
    which port it moved to. ``port=None`` means the default port or the next free one; an
    explicit port (``0``: any free one) that is busy raises :class:`WebError`."""
    options: dict[str, Any] = {"db_path": db_path, "project": project,
                               "busy_timeout_ms": busy_timeout_ms,
                               "search_backend": search_backend, "log_path": log_path,
                               "idle_timeout": idle_timeout}
    if port is not None:
        try:
            return WebServer(port, **options), None
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise WebError(f"port {port} is busy; pick another with --port") from None
            raise WebError(f"cannot listen on {HOST}:{port}: {exc.strerror}") from None
    for candidate in range(default_port, min(default_port + PORT_TRIES, 65536)):
        try:
            server = WebServer(candidate, **options)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                continue
            raise WebError(f"cannot listen on {HOST}:{candidate}: {exc.strerror}") from None
        note = None if candidate == default_port else (
            f"port {default_port} is busy; using {candidate}")
        return server, note
    raise WebError(f"ports {default_port}-{default_port + PORT_TRIES - 1} are all busy; "
                   "pick one with --port")


class Launched(NamedTuple):
    """A web view running on a thread: its URL and how to stop it."""

    url: str
    stop: Callable[[], None]


def start(home: Path | None = None, project: str | None = None,
          port: int | None = None) -> Launched:
    """Start the web view on a background thread (what the TUI calls) and return its URL and
    a ``stop`` function (idempotent; it waits for the server's thread to end).

    ``home`` is the agentctx home (default: the configured one), ``project`` the project the
    page opens on (default: the most recently seen), ``port`` as for :func:`bind` (default:
    the ``web_port`` knob, or the next free port). Raises :class:`WebError` when it cannot
    listen.
    """
    server, _note = configured(home, project, port)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1},
                              name="agentctx-web", daemon=True)
    thread.start()
    stopped = threading.Event()

    def stop() -> None:
        if stopped.is_set():
            return
        stopped.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)

    return Launched(server.url, stop)


def configured(home: Path | None, project: str | None,
                port: int | None) -> tuple[WebServer, str | None]:
    """A server bound with the configuration's knobs (store path, timeouts, default port)."""
    cfg = config.Config.load()
    base = config.ensure_home(home)
    return bind(port, db_path=base / config.DB_NAME, project=project,
                busy_timeout_ms=cfg.get_int("busy_timeout_ms"),
                search_backend=cfg.get_str("search"), log_path=base / "logs" / "web.log",
                default_port=cfg.get_int("web_port"))


def serve(server: WebServer) -> None:
    """Serve until Ctrl-C (or SIGTERM); then stop cleanly and close the socket."""
    def terminate(_signum: int, _frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        server.server_close()
