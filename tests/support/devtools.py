"""Headless Chromium driven over the DevTools protocol, with the standard library only.

A minimal WebSocket client (RFC 6455: the handshake, masked client frames, fragmented and long
server frames, ping/pong) under a DevTools session: ``call`` a method, ``evaluate`` JavaScript,
``wait_for`` an expression to become truthy. Used by the web view's browser test and benchmark::

    with Chromium.launch() as browser:
        browser.navigate("http://127.0.0.1:8000/")
        browser.wait_for("document.querySelector('.row') !== null")

Chromium is Debian's ``chromium`` (``make test`` installs it); :func:`find_chromium` finds it.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import struct
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
# The flags of a quiet, isolated headless run: no sandbox (tests may run as root), no network
# of its own (the machine's closed network refuses Google's hosts), a fresh profile.
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--disable-default-apps", "--mute-audio",
         "--window-size=1280,900", "--remote-debugging-port=0")


class DevToolsError(Exception):
    """The browser did not start, the connection broke, or a command failed."""


def find_chromium() -> str | None:
    """The Chromium executable on PATH (``AGENTCTX_CHROMIUM`` overrides), or ``None``."""
    override = os.environ.get("AGENTCTX_CHROMIUM")
    if override:
        return override
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


class WebSocket:
    """A client WebSocket over a plain TCP socket (``ws://`` only: DevTools is on loopback)."""

    def __init__(self, url: str, timeout: float = 10.0) -> None:
        parts = urlsplit(url)
        if parts.scheme != "ws" or parts.hostname is None:
            raise DevToolsError(f"not a ws:// address: {url}")
        self.sock = socket.create_connection((parts.hostname, parts.port or 80), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        request = (f"GET {parts.path or '/'} HTTP/1.1\r\nHost: {parts.netloc}\r\n"
                   "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                   f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n")
        self.sock.sendall(request.encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise DevToolsError("the browser closed the connection during the handshake")
            head += chunk
        head, _, self.buffer = head.partition(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 101"):
            raise DevToolsError(f"handshake refused: {head.splitlines()[0]!r}")

    def send(self, text: str) -> None:
        """Send one text frame (masked, as a client must)."""
        payload = text.encode("utf-8")
        header = bytes([0x81])
        n = len(payload)
        if n < 126:
            header += bytes([0x80 | n])
        elif n < 65536:
            header += bytes([0x80 | 126]) + struct.pack("!H", n)
        else:
            header += bytes([0x80 | 127]) + struct.pack("!Q", n)
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(header + mask + masked)

    def _read(self, n: int) -> bytes:
        while len(self.buffer) < n:
            chunk = self.sock.recv(max(65536, n - len(self.buffer)))
            if not chunk:
                raise DevToolsError("the browser closed the connection")
            self.buffer += chunk
        data, self.buffer = self.buffer[:n], self.buffer[n:]
        return data

    def receive(self) -> str:
        """The next whole text message (answers pings, joins fragments)."""
        message = b""
        while True:
            first, second = self._read(2)
            opcode, fin = first & 0x0F, first & 0x80
            n = second & 0x7F
            if n == 126:
                n = struct.unpack("!H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack("!Q", self._read(8))[0]
            mask = self._read(4) if second & 0x80 else b""
            payload = self._read(n)
            if mask:
                payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
            if opcode == 0x8:
                raise DevToolsError("the browser closed the DevTools connection")
            if opcode == 0x9:  # ping: answer with a pong carrying the same payload
                self.sock.sendall(bytes([0x8A, 0x80 | len(payload)]) + b"\0\0\0\0" + payload)
                continue
            if opcode in (0x0, 0x1, 0x2):
                message += payload
                if fin:
                    return message.decode("utf-8")

    def close(self) -> None:
        try:
            self.sock.sendall(bytes([0x88, 0x80]) + b"\0\0\0\0")
        except OSError:
            pass
        self.sock.close()


class Chromium:
    """One headless Chromium process and a DevTools session on its first page."""

    def __init__(self, process: subprocess.Popen[bytes], profile: tempfile.TemporaryDirectory[str],
                 socket_: WebSocket) -> None:
        self.process = process
        self.profile = profile
        self.ws = socket_
        self.next_id = 0
        self.events: list[dict[str, Any]] = []

    @classmethod
    def launch(cls, executable: str | None = None, timeout: float = 30.0) -> Chromium:
        """Start Chromium headless with a fresh profile and connect to its page."""
        binary = executable or find_chromium()
        if binary is None:
            raise DevToolsError("no chromium on PATH (Debian: apt-get install chromium)")
        profile = tempfile.TemporaryDirectory(prefix="agentctx-chromium-",
                                              ignore_cleanup_errors=True)
        process = subprocess.Popen([binary, *FLAGS, f"--user-data-dir={profile.name}",
                                    "about:blank"], stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            port = cls._port(Path(profile.name), process, timeout)
            deadline = time.monotonic() + timeout
            while True:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list",
                                            timeout=timeout) as reply:
                    targets = json.loads(reply.read())
                pages = [t for t in targets if t.get("type") == "page"]
                if pages or time.monotonic() > deadline:
                    break
                time.sleep(0.05)
            if not pages:
                raise DevToolsError("chromium opened no page")
            browser = cls(process, profile, WebSocket(pages[0]["webSocketDebuggerUrl"], timeout))
            browser.call("Page.enable")
            browser.call("Runtime.enable")
            return browser
        except BaseException:
            process.kill()
            process.wait(timeout=10)
            profile.cleanup()
            raise

    @staticmethod
    def _port(profile: Path, process: subprocess.Popen[bytes], timeout: float) -> int:
        """The DevTools port Chromium wrote into its profile (``--remote-debugging-port=0``)."""
        marker = profile / "DevToolsActivePort"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise DevToolsError(f"chromium exited with status {process.returncode}")
            try:
                first = marker.read_text().split("\n", 1)[0].strip()
                if first:
                    return int(first)
            except (OSError, ValueError):
                pass
            time.sleep(0.05)
        raise DevToolsError("chromium did not open its DevTools port in time")

    def __enter__(self) -> Chromium:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection, end the browser (and its helpers) and remove its profile."""
        self.ws.close()
        try:
            os.killpg(self.process.pid, 15)
        except OSError:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, 9)
            self.process.wait(timeout=10)
        self.profile.cleanup()

    def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send a DevTools command and return its result (events that arrive meanwhile are
        kept in :attr:`events`)."""
        self.next_id += 1
        wanted = self.next_id
        self.ws.send(json.dumps({"id": wanted, "method": method, "params": params or {}}))
        while True:
            message = json.loads(self.ws.receive())
            if message.get("id") == wanted:
                if "error" in message:
                    raise DevToolsError(f"{method}: {message['error'].get('message')}")
                result: dict[str, Any] = message.get("result", {})
                return result
            if "method" in message:
                self.events.append(message)

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (promises awaited)."""
        reply = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                               "awaitPromise": True})
        if "exceptionDetails" in reply:
            details = reply["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text")
            raise DevToolsError(f"{expression[:60]!r} threw: {text}")
        return reply.get("result", {}).get("value")

    def navigate(self, url: str) -> None:
        """Load ``url`` in the page (returns once the navigation is committed)."""
        reply = self.call("Page.navigate", {"url": url})
        if reply.get("errorText"):
            raise DevToolsError(f"cannot load {url}: {reply['errorText']}")

    def wait_for(self, expression: str, timeout: float = 10.0) -> Any:
        """Poll a JavaScript expression until it is truthy; its value."""
        deadline = time.monotonic() + timeout
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise DevToolsError(f"timed out waiting for {expression!r}")
            time.sleep(0.02)

    def type_text(self, selector: str, text: str) -> None:
        """Focus the element and type ``text`` as keyboard input (``input`` events fire)."""
        self.evaluate(f"document.querySelector({json.dumps(selector)}).focus()")
        for char in text:
            self.call("Input.insertText", {"text": char})

    def screenshot(self, path: Path) -> None:
        """Save a PNG of the page."""
        data = self.call("Page.captureScreenshot", {"format": "png"})["data"]
        path.write_bytes(base64.b64decode(data))
