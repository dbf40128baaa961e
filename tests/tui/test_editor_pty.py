"""``E`` on the real app in a pseudo-terminal: the app suspends, ``$EDITOR`` (a small script)
edits the record, the app resumes and writes the change through the store (a headless pilot
cannot suspend, so this runs ``agentctx tui`` itself)."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path

from agentctx.store import Store
from agentctx.store import records as rec
from agentctx.store.selection import Selection
from tests.conftest import run_cli
from tests.tui.conftest import Demo

EDITOR = """\
import pathlib, sys
path = pathlib.Path(sys.argv[1])
path.write_text(path.read_text(encoding="utf-8").rstrip("\\n")
                + "\\nEdited in the editor.\\n", encoding="utf-8")
pathlib.Path(sys.argv[0]).with_name("editor-ran").touch()
"""


class Terminal:
    """A child process on a pty of 100×30, its output drained on a thread."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
        self.proc = subprocess.Popen(args, stdin=slave, stdout=slave, stderr=slave, env=env,
                                     start_new_session=True)
        os.close(slave)
        self.output = bytearray()
        self.reader = threading.Thread(target=self._drain, daemon=True)
        self.reader.start()

    def _drain(self) -> None:
        while True:
            try:
                chunk = os.read(self.master, 65536)
            except OSError:
                return
            if not chunk:
                return
            self.output += chunk

    def wait_for(self, text: bytes, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while text not in self.output:
            assert time.monotonic() < deadline, f"never saw {text!r}: {bytes(self.output[-400:])!r}"
            assert self.proc.poll() is None, bytes(self.output[-800:])
            time.sleep(0.05)

    def send(self, keys: bytes) -> None:
        os.write(self.master, keys)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)
        os.close(self.master)


def test_capital_e_edits_the_body_in_the_editor(demo_store: Demo, tmp_path: Path) -> None:
    script = tmp_path / "editor.py"
    script.write_text(EDITOR, encoding="utf-8")
    with Store.open(demo_store.home / "agentctx.db") as db:
        [first] = rec.list_records(db, Selection(project_id=demo_store.project_id), order="newest",
                                   limit=1)
    env = {**os.environ, "EDITOR": f"{sys.executable} {script}", "TERM": "xterm-256color"}
    env.pop("VISUAL", None)
    term = Terminal([sys.executable, "-m", "agentctx", "tui", "--project",
                     demo_store.project_id], env)
    try:
        term.wait_for(b"Records")
        time.sleep(1.0)  # the first paint done, the table focused
        term.send(b"E")
        deadline = time.monotonic() + 30
        while not (tmp_path / "editor-ran").exists():
            assert time.monotonic() < deadline, bytes(term.output[-800:])
            time.sleep(0.05)
        mark = len(term.output)
        term.wait_for(b"updated", timeout=30)  # the notification after the app resumed
        assert len(term.output) > mark
        term.send(b"q")
        assert term.proc.wait(timeout=30) == 0
    finally:
        term.close()
    with Store.open(demo_store.home / "agentctx.db") as db:
        after = rec.get(db, first.id)
        edits = rec.edits_of(db, first.id)
    assert after.body == (first.body + "\nEdited in the editor.").strip()
    assert after.title == first.title
    assert [(e.field, e.actor) for e in edits] == [("body", "tui")]
    assert run_cli("show", first.id, "--json").stdout.count("Edited in the editor.") >= 1


DROP_MARKER = """\
import pathlib, sys
path = pathlib.Path(sys.argv[1])
path.write_text(path.read_text(encoding="utf-8").replace("--- body below this line ---", ""),
                encoding="utf-8")
"""


def _editor_fails(demo_store: Demo, editor: str | None, said: bytes) -> None:
    """``E`` with this editor: a notification saying ``said``, then the app still answers keys
    (``q`` quits it with status 0) and the record is as it was."""
    with Store.open(demo_store.home / "agentctx.db") as db:
        [first] = rec.list_records(db, Selection(project_id=demo_store.project_id), order="newest",
                                   limit=1)
    env = {**os.environ, "TERM": "xterm-256color"}
    env.pop("VISUAL", None)
    env.pop("EDITOR", None)
    if editor is not None:
        env["EDITOR"] = editor
    term = Terminal([sys.executable, "-m", "agentctx", "tui", "--project",
                     demo_store.project_id], env)
    try:
        term.wait_for(b"Records")
        time.sleep(1.0)
        term.send(b"E")
        term.wait_for(said, timeout=30)
        time.sleep(0.3)
        term.send(b"q")
        assert term.proc.wait(timeout=30) == 0, bytes(term.output[-800:])
    finally:
        term.close()
    with Store.open(demo_store.home / "agentctx.db") as db:
        after = rec.get(db, first.id)
        assert rec.edits_of(db, first.id) == []
    assert (after.title, after.body, after.updated_at) == (first.title, first.body,
                                                           first.updated_at)


def test_a_failing_editor_leaves_the_app_running(demo_store: Demo) -> None:
    _editor_fails(demo_store, "false", b"nothing written")


def test_no_editor_is_a_notification(demo_store: Demo) -> None:
    _editor_fails(demo_store, None, b"nothing written")


def test_a_deleted_marker_line_writes_nothing(demo_store: Demo, tmp_path: Path) -> None:
    script = tmp_path / "editor.py"
    script.write_text(DROP_MARKER, encoding="utf-8")
    _editor_fails(demo_store, f"{sys.executable} {script}", b"nothing written")
