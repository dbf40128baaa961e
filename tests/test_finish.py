"""Finishing a session (agentctx.ops.finish): the final extraction, then consolidation, each a real
``agentctx`` process; a failed step is reported and the next one still runs."""

from __future__ import annotations

from pathlib import Path

from agentctx.core import background, config
from agentctx.ops import finish
from agentctx.store import Store, projects


def _project(folder: Path) -> str:
    folder.mkdir(exist_ok=True)
    with Store.open() as db:
        return projects.resolve(db, str(folder)).project.id


def test_a_failed_extraction_is_reported_and_consolidation_still_runs(tmp_path: Path) -> None:
    pid = _project(tmp_path / "app")
    said: list[str] = []
    problems: list[str] = []
    cfg = config.Config({}, environ={"AGENTCTX_LLM": "on", "AGENTCTX_EMBEDDINGS": "off"})
    steps = finish.finish_session("s-1", pid, str(tmp_path / "gone.jsonl"), cfg,
                                  say=said.append, problem=problems.append)
    assert steps is not None
    assert [(s.name, s.ok) for s in steps] == [("agentctx extract", False),
                                               ("agentctx consolidate", True)]
    [problem] = problems
    assert problem.startswith("agentctx extract exited with ") and problem == steps[0].problem
    assert any(line.endswith("finish-session s-1: agentctx consolidate started") for line in said)
    assert any(problem in line for line in said)


def test_without_llm_or_transcript_only_consolidation_runs(tmp_path: Path) -> None:
    pid = _project(tmp_path / "app")
    cfg = config.Config({}, environ={"AGENTCTX_LLM": "off", "AGENTCTX_EMBEDDINGS": "off"})
    for transcript in (str(tmp_path / "t.jsonl"), None):
        steps = finish.finish_session("s-2", pid, transcript, cfg, say=lambda _: None,
                                      problem=lambda _: None)
        assert steps is not None and [s.name for s in steps] == ["agentctx consolidate"]


def test_a_command_this_installation_lacks_is_an_ordinary_failure() -> None:
    problems: list[str] = []
    step = finish.run_step(["no-such-command"], 60, "s-3", say=lambda _: None,
                           problem=problems.append)
    assert not step.ok and step.problem is not None
    assert problems == [step.problem] and "agentctx no-such-command exited with 2" in step.problem


def test_a_step_past_its_time_limit_is_stopped() -> None:
    problems: list[str] = []
    step = finish.run_step(["--version"], 0, "s-4", say=lambda _: None, problem=problems.append)
    assert not step.ok and problems == ["agentctx --version did not finish within 0 s and was "
                                        "stopped"]


def test_one_run_per_session(tmp_path: Path) -> None:
    said: list[str] = []
    with background.exclusive("finish-s-5") as held:
        assert held
        assert finish.finish_session("s-5", "p", None, config.Config({}, environ={}),
                                     say=said.append, problem=said.append) is None
    assert len(said) == 1 and said[0].endswith("already running, nothing to do")
