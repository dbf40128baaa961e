"""TUI test support: a demo store built with a frozen clock and fixed ids, the app factory on it,
a pilot runner, and snapshots kept in the top-level ``snapshots/`` folder."""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple

import pytest
import pytest_textual_snapshot
from textual.pilot import Pilot
from textual.widgets import Input

from agentctx import demo
from agentctx.core import ids as store_ids
from agentctx.store import Store
from agentctx.tui.app import AgentctxApp, make_app

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
SNAPSHOT_ROOT = Path(__file__).resolve().parents[2] / "snapshots"


def _dirname(cls: object, *, test_location: object) -> str:
    return str(SNAPSHOT_ROOT / Path(test_location.filepath).stem)  # type: ignore[attr-defined]


pytest_textual_snapshot.SVGImageExtension.dirname = classmethod(_dirname)


class _FrozenDatetime(datetime):
    @classmethod
    def now(cls, tz: object = None) -> _FrozenDatetime:
        return cls.fromtimestamp(NOW.timestamp(), tz=UTC)


class _Clock:
    """``time.time`` at ``NOW`` (ULIDs' time part)."""

    @staticmethod
    def time() -> float:
        return NOW.timestamp()


class _Counter:
    """``os.urandom`` as a counter (ULIDs' random part): ids are the same on every run."""

    def __init__(self) -> None:
        self.n = 0

    def urandom(self, size: int) -> bytes:
        self.n += 1
        return self.n.to_bytes(size, "big")


@contextmanager
def frozen_ids(monkeypatch: pytest.MonkeyPatch, start: int = 10_000) -> Iterator[None]:
    """Records written inside get ids and times at ``NOW`` (ids counted from ``start``)."""
    counter = _Counter()
    counter.n = start
    with monkeypatch.context() as frozen:
        frozen.setattr(store_ids, "datetime", _FrozenDatetime)
        frozen.setattr(store_ids, "time", _Clock)
        frozen.setattr(os, "urandom", counter.urandom)
        yield


class Demo(NamedTuple):
    """The demo store of a test."""

    home: Path
    project_id: str
    folder: Path


class _Built(NamedTuple):
    """The session's demo: where every test's copy goes, the untouched copy, the project id."""

    base: Path
    pristine: Path
    project_id: str


@pytest.fixture(scope="session")
def demo_built(tmp_path_factory: pytest.TempPathFactory) -> _Built:
    """The embedded demo, built once per session at ``NOW`` with fixed ids into a folder holding
    the home (``.agentctx``) and the project (``harbor``), and kept untouched beside it."""
    base = tmp_path_factory.mktemp("demo")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(store_ids, "datetime", _FrozenDatetime)
        patch.setattr(store_ids, "time", _Clock)
        patch.setattr(os, "urandom", _Counter().urandom)
        patch.setenv("HOME", str(base))
        patch.setenv("AGENTCTX_HOME", str(base / ".agentctx"))
        with Store.open() as db:
            project_id = demo.build(db, base / "harbor", now=NOW)
    pristine = tmp_path_factory.mktemp("demo-pristine") / "demo"
    shutil.copytree(base, pristine, symlinks=True)
    return _Built(base, pristine, project_id)


@pytest.fixture
def demo_store(demo_built: _Built, isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> Demo:
    """The session's demo, afresh for this test: its home, and its project under ``HOME`` (so
    paths read ``~/harbor`` on every machine).

    The store holds absolute paths, so each test's copy is put where the demo was built (the
    previous test's copy is replaced): a test's writes never reach the next one.
    """
    shutil.rmtree(demo_built.base)
    shutil.copytree(demo_built.pristine, demo_built.base, symlinks=True)
    monkeypatch.setenv("HOME", str(demo_built.base))
    monkeypatch.setenv("AGENTCTX_HOME", str(demo_built.base / ".agentctx"))
    return Demo(demo_built.base / ".agentctx", demo_built.project_id, demo_built.base / "harbor")


@pytest.fixture(autouse=True)
def no_cursor_blink(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Inputs draw a steady cursor (snapshots must not catch it mid-blink)."""
    monkeypatch.setattr(Input, "_toggle_cursor", lambda self: None)
    yield


def app_on(store: Demo, poll_ms: int = 1000) -> AgentctxApp:
    """The app over the demo store, on its project, with the clock at ``NOW``."""
    return make_app(home=store.home, project=store.project_id, now=NOW, poll_ms=poll_ms)


def run(app: AgentctxApp, steps: Callable[[Pilot[None]], Awaitable[None]],
        size: tuple[int, int] = (120, 40)) -> None:
    """Run ``steps`` against ``app`` under a pilot."""
    async def main() -> None:
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            await steps(pilot)

    asyncio.run(main())


async def settle(pilot: Pilot[None]) -> None:
    """Let workers finish and the screen catch up."""
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.pause()
