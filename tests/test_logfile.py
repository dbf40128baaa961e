"""The one log writer: private files, redacted entries, rotation, whole entries under concurrency,
and never an exception."""

from __future__ import annotations

import multiprocessing
import os
import stat
from pathlib import Path

import pytest

from agentctx.core import logfile

TOKEN = "ghp_R4nd0mT0k3nV4lu3Xy123456789012345678"


def test_an_entry_is_redacted_and_the_log_private(isolated_home: Path) -> None:
    logfile.append("team.log", f"pushed with {TOKEN}")
    logfile.append("team.log", "second line\n")
    path = isolated_home / "logs" / "team.log"
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2 and TOKEN not in lines[0] and lines[1] == "second line"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_a_full_log_is_rotated_once(isolated_home: Path) -> None:
    for index in range(30):
        logfile.append("cli.log", f"entry {index} " + "x" * 90, max_bytes=1000)
    logs = isolated_home / "logs"
    current = (logs / "cli.log").read_text(encoding="utf-8")
    rotated = (logs / "cli.log.1").read_text(encoding="utf-8")
    assert (logs / "cli.log").stat().st_size < 1000 + 100
    assert "entry 29 " in current and "entry 0 " not in current + rotated  # one copy kept
    assert sorted(p.name for p in logs.iterdir()) == ["cli.log", "cli.log.1"]


def test_the_knob_sets_the_size(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTCTX_LOG_MAX_BYTES", "10000")
    for _ in range(120):
        logfile.append("extract.log", "y" * 99)
    assert (isolated_home / "logs" / "extract.log.1").exists()


def test_a_log_that_cannot_be_written_raises_nothing(isolated_home: Path) -> None:
    isolated_home.mkdir(parents=True, exist_ok=True)
    (isolated_home / "logs").write_text("a file where the folder should be", encoding="utf-8")
    logfile.append("hooks.log", "lost, quietly")
    with pytest.raises(OSError):
        os.close(logfile.open_append("hooks.log"))


def _write_many(marker: str) -> None:
    for index in range(200):
        logfile.append("busy.log", f"{marker}{index:03d}" + marker * 3000, max_bytes=10**9)


def test_processes_writing_at_once_never_interleave_inside_an_entry(isolated_home: Path) -> None:
    workers = [multiprocessing.get_context("fork").Process(target=_write_many, args=(m,))
               for m in "ab"]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    lines = (isolated_home / "logs" / "busy.log").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 400
    assert all(line[4:] == line[0] * 3000 for line in lines)
