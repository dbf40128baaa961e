"""Fuzzing the hooks: payloads shaped like Claude Code's with any field replaced by anything, and
projects whose build, git, config and transcript files are anything at all.

The payload fuzz runs the dispatcher in this process (thousands of examples in seconds) on real
payloads with fields at every depth replaced, removed or swapped for odd values; the detached
children of Stop and SessionEnd are not started (``spawn_detached`` is replaced, nothing is
asserted on it). The special-file fuzz runs the real hook processes, each with a memory cap and a
time limit that only a hang reaches. Either way every hook exits 0, prints nothing or exactly one
contract object within the budgets, and logs no failure: bad input is refused or ignored, never a
crash.
"""

from __future__ import annotations

import io
import itertools
import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentctx.core import background, config
from agentctx.core.budget import estimate_tokens
from agentctx.hooks import dispatch
from agentctx.store import Store
from tests.hooks.conftest import EVENT_OF, LAUNCHER, at, check_contract, payloads
from tests.support import special_files

EVENT_NAMES = sorted(EVENT_OF)
ODD_TEXT = st.sampled_from([
    "", " ", "\x00", "\n\n", "../../../../etc/passwd", "/dev/zero", "/proc/self/mem", "#noctx",
    "~", "C:\\Windows", "\u202e\u0000x", "🙂" * 50, "a" * 100_000, "%s%n%x", "{}", "[]", "null",
    "PostToolUse", "'; DROP TABLE records; --", "sk-ant-api03-" + "A" * 40,
])
LEAVES = (st.none() | st.booleans() | st.integers() | st.integers(min_value=2**63) |
          st.floats(allow_nan=False) | st.text(max_size=40) | ODD_TEXT)
VALUES = st.recursive(LEAVES, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.text(max_size=12) | ODD_TEXT, inner, max_size=4),
                      max_leaves=10)
BUDGETS = {"SessionStart": config.SESSION_START_MAX_TOKENS,
           "UserPromptSubmit": config.PROMPT_MAX_TOKENS,
           "SubagentStart": config.SESSION_START_MAX_TOKENS}


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path into a payload (keys of objects, indexes of lists), the root's keys first."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield (*prefix, key)
            yield from _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value[:3]):
            yield (*prefix, index)
            yield from _paths(item, (*prefix, index))


def _set(payload: Any, path: tuple[Any, ...], value: Any, remove: bool) -> None:
    target = payload
    for step in path[:-1]:
        target = target[step]
    if remove and isinstance(target, dict):
        target.pop(path[-1], None)
    elif isinstance(target, dict) or (isinstance(target, list) and path[-1] < len(target)):
        target[path[-1]] = value


@st.composite
def mutated_payloads(draw: st.DrawFn, app: Path) -> tuple[str, dict[str, Any]]:
    """A real payload of some event with fields at any depth replaced or removed."""
    name = draw(st.sampled_from(EVENT_NAMES))
    payload = at(draw(st.sampled_from(payloads(name))), app)
    paths = [p for p in _paths(payload) if p != ("session_id",) or draw(st.booleans())]
    for path in draw(st.lists(st.sampled_from(paths), max_size=4, unique=True)):
        try:
            _set(payload, path, draw(VALUES), remove=draw(st.booleans()))
        except (KeyError, IndexError, TypeError):
            continue  # an earlier change removed or replaced a parent
    extra = draw(st.dictionaries(st.sampled_from(["prompt", "tool_input", "tool_response",
                                                  "new_cwd", "transcript_path", "source",
                                                  "custom_instructions", "agent_type"]),
                                 VALUES, max_size=2))
    payload.update(extra)
    return EVENT_OF[name], payload


@contextmanager
def _no_children() -> Iterator[list[list[str]]]:
    started: list[list[str]] = []
    real = background.spawn_detached

    def record(args: list[str], **_: object) -> int:
        started.append(args)
        return 0

    background.spawn_detached = record
    try:
        yield started
    finally:
        background.spawn_detached = real


def run_in_process(event: str, raw: bytes) -> str:
    """One hook call through the real dispatcher in this process; its stdout."""
    out = io.BytesIO()
    stdin, stdout = io.TextIOWrapper(io.BytesIO(raw)), io.TextIOWrapper(out)
    saved = sys.stdin, sys.stdout
    sys.stdin, sys.stdout = stdin, stdout
    try:
        assert dispatch.run([event]) == 0
        stdout.flush()
    finally:
        sys.stdin, sys.stdout = saved
    return out.getvalue().decode("utf-8")


def _check(stdout: str, log: list[str]) -> None:
    document = check_contract(stdout)
    if document is not None:
        specific = document["hookSpecificOutput"]
        text = specific["additionalContext"]
        assert len(text) <= config.INJECTION_MAX_CHARS
        assert estimate_tokens(text) <= BUDGETS[specific["hookEventName"]]
    failures = [line for line in log if "hook failed" in line or "detection failed" in line]
    assert failures == []


def _log(home: Path) -> list[str]:
    path = home / "logs" / "hooks.log"
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


@pytest.mark.parametrize("examples", [pytest.param(400, id="400"),
                                      pytest.param(5000, id="5000",
                                                   marks=[pytest.mark.slow,
                                                          pytest.mark.timeout(3600)])])
def test_fuzzed_payloads_are_refused_or_ignored_never_a_crash(
        examples: int, app: Path, isolated_home: Path) -> None:
    (app / "Makefile").write_text("test:\n\tpytest\n", encoding="utf-8")

    @settings(max_examples=examples, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(case=mutated_payloads(app), as_bytes=st.sampled_from(["json", "ascii", "broken"]))
    def fuzz(case: tuple[str, dict[str, Any]], as_bytes: str) -> None:
        event, payload = case
        raw = json.dumps(payload, ensure_ascii=as_bytes == "ascii").encode("utf-8", "replace")
        if as_bytes == "broken":
            raw = raw[: len(raw) // 2]
        before = len(_log(isolated_home))
        _check(run_in_process(event, raw), _log(isolated_home)[before:])

    with _no_children():
        fuzz()
    with Store.open() as db:
        assert db.scalar("PRAGMA integrity_check") == "ok"
        db.execute("INSERT INTO records_fts(records_fts, rank) VALUES ('integrity-check', 1)")


# ------------------------------------------------------------------------------ special files

CONTENTS: dict[str, Callable[[Path], object]] = {
    **special_files.MAKERS,
    "dangling-link": lambda path: path.symlink_to(path.parent / "missing-target"),
    "empty": lambda path: path.write_bytes(b""),
    "binary": lambda path: path.write_bytes(bytes(range(256)) * 64),
    "deep-json": lambda path: path.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8"),
    "wrong-types-json": lambda path: path.write_text(json.dumps({
        "name": ["x"], "dependencies": [1, 2], "devDependencies": "react", "scripts": [],
        "bin": 7, "main": {"a": 1}}), encoding="utf-8"),
    "wrong-types-toml": lambda path: path.write_text(
        'tool = 3\nproject = "x"\n[build-system]\nrequires = 5\n', encoding="utf-8"),
    "wrong-types-toml-2": lambda path: path.write_text(
        '[project]\nname = 5\ndependencies = "fastapi"\nscripts = ["a"]\n'
        'optional-dependencies = {dev = "pytest"}\n[tool.poetry]\ndependencies = [1]\n',
        encoding="utf-8"),
    "gitdir-pointer": lambda path: path.write_text("gitdir: /dev/zero\n", encoding="utf-8"),
    "bad-utf8": lambda path: path.write_bytes(b"\xff\xfe[remote \"origin\"]\n\turl = \x80\n"),
}
PLACES = (".git", ".git/config", ".git/commondir", "pyproject.toml", "package.json",
          "Makefile", "justfile", "go.mod", "Cargo.toml", "setup.py", "config.json", "transcript")
_counter = itertools.count()


def _project(base: Path, layout: dict[str, str]) -> tuple[Path, Path, Path]:
    """A fresh project, home and transcript path, each place holding the content asked for."""
    root = base / f"case-{next(_counter)}"
    app, home = root / "app", root / "home"
    (app / ".git").mkdir(parents=True)
    (app / ".git" / "config").write_text('[remote "origin"]\n\turl = git@h.io:a/b.git\n',
                                         encoding="utf-8")
    home.mkdir(mode=0o700)
    transcript = root / "session.jsonl"
    for place, kind in sorted(layout.items(), key=lambda item: item[0].count("/")):
        path = {"config.json": home / "config.json", "transcript": transcript}.get(
            place, app / place)
        if not path.parent.is_dir() or path.parent.is_symlink():
            continue  # .git/config when .git is no longer a folder
        special_files.remove(path)
        CONTENTS[kind](path)
    return app, home, transcript


def _run_process(event: str, payload: dict[str, Any], home: Path, cwd: Path) -> str:
    import os

    command = [str(LAUNCHER)] if LAUNCHER.exists() else [sys.executable, "-m", "agentctx"]
    env = {**os.environ, "AGENTCTX_HOME": str(home), "AGENTCTX_LLM": "off",
           "AGENTCTX_EMBEDDINGS": "off"}
    done = subprocess.run([*command, "hook", event], input=json.dumps(payload).encode(),
                          capture_output=True, timeout=60, cwd=cwd, env=env, check=False,
                          preexec_fn=special_files.cap_memory)
    assert done.returncode == 0, done.stderr
    return done.stdout.decode("utf-8")


@pytest.mark.parametrize("examples", [pytest.param(8, id="8"),
                                      pytest.param(25, id="25",
                                                   marks=[pytest.mark.slow, pytest.mark.ci]),
                                      pytest.param(300, id="300",
                                                   marks=[pytest.mark.slow,
                                                          pytest.mark.timeout(3600)])])
def test_fuzzed_project_files_never_hang_swell_or_break_a_hook(examples: int,
                                                                tmp_path: Path) -> None:
    @settings(max_examples=examples, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(layout=st.dictionaries(st.sampled_from(PLACES), st.sampled_from(sorted(CONTENTS)),
                                  min_size=1, max_size=4),
           events=st.lists(st.sampled_from(EVENT_NAMES), min_size=1, max_size=3))
    def fuzz(layout: dict[str, str], events: list[str]) -> None:
        app, home, transcript = _project(tmp_path, layout)
        for name in ["SessionStart", *events]:
            payload = at(payloads(name)[0], app, transcript_path=str(transcript))
            if name == "CwdChanged":
                payload["new_cwd"] = str(app)
            _check(_run_process(EVENT_OF[name], payload, home, app), _log(home))

    fuzz()


@pytest.mark.parametrize(("name", "field"), [("CwdChanged", "new_cwd"),
                                             ("PreCompact", "transcript_path"),
                                             ("Stop", "transcript_path"),
                                             ("SessionEnd", "transcript_path")])
def test_a_path_with_a_nul_byte_is_ignored(name: str, field: str, app: Path,
                                          isolated_home: Path) -> None:
    payload = at(payloads(name)[0], app, **{field: f"{app}/x\x00y"})
    with _no_children() as started:
        _check(run_in_process(EVENT_OF[name], json.dumps(payload).encode()), _log(isolated_home))
    assert all("\x00" not in " ".join(args) for args in started)


def test_json_nested_too_deeply_is_refused_not_a_crash(app: Path, isolated_home: Path,
                                                       tmp_path: Path) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(deep + "\n", encoding="utf-8")
    (app / "package.json").write_text(deep, encoding="utf-8")
    (app / "pyproject.toml").write_text("a = " + deep, encoding="utf-8")
    before = len(_log(isolated_home))
    assert run_in_process("session-start", deep.encode()) == ""
    [line] = _log(isolated_home)[before:]
    assert "nested too deeply" in line
    payload = at(payloads("PreCompact")[0], app, transcript_path=str(transcript))
    _check(run_in_process("pre-compact", json.dumps(payload).encode()), _log(isolated_home))
    _check(run_in_process("session-start", json.dumps(at(payloads("SessionStart")[0], app))
                          .encode()), _log(isolated_home))
    config.ensure_home()
    config.config_path().write_text(deep, encoding="utf-8")
    with pytest.raises(config.ConfigError, match="nested too deeply"):
        config.Config.load()
