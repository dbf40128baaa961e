"""TUI test support: a demo store built with a frozen clock and fixed ids, the app factory on it,
a pilot runner, and snapshots kept in the top-level ``snapshots/`` folder."""

from __future__ import annotations

import asyncio
import os
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


@pytest.fixture
def demo_store(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> Demo:
    """The embedded demo in the test's home, built at ``NOW`` with fixed ids, its project under
    ``HOME`` (so paths read ``~/harbor`` on every machine)."""
    folder = isolated_home.parent / "harbor"
    with monkeypatch.context() as frozen:
        frozen.setattr(store_ids, "datetime", _FrozenDatetime)
        frozen.setattr(store_ids, "time", _Clock)
        frozen.setattr(os, "urandom", _Counter().urandom)
        with Store.open() as db:
            project_id = demo.build(db, folder, now=NOW)
    return Demo(isolated_home, project_id, folder)


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
