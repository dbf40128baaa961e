"""``agentctx demo`` in a pseudo-terminal: it opens the TUI on a temporary home, names that home,
and says it is deleted when the user quits."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from tests.tui.test_editor_pty import Terminal


def test_the_demo_names_its_home_and_says_it_is_gone_after_quit(tmp_path: Path) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**os.environ, "TERM": "xterm-256color", "TMPDIR": str(temp)}
    term = Terminal([sys.executable, "-m", "agentctx", "demo"], env)
    try:
        term.wait_for(b"Records", timeout=60)
        [home] = list(temp.iterdir())
        assert str(home).encode() in term.output
        term.send(b"q")
        assert term.proc.wait(timeout=30) == 0
        said = f"the demo home {home} is deleted".encode()
        deadline = time.monotonic() + 10  # the last output may still be on its way
        while said not in term.output and time.monotonic() < deadline:
            time.sleep(0.05)
        assert said in term.output, bytes(term.output[-400:])
    finally:
        term.close()
    assert not home.exists()
