"""What only the real ``agentctx`` process shows: the exit status the shell sees and the one-line
error on stderr (the other CLI tests run the same code in process)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import run_process


def test_success_bad_input_and_usage_errors_exit_as_documented(project_dir: Path) -> None:
    assert run_process("--version").returncode == 0
    missing = run_process("show", "01ZZZZZZZZZZ", cwd=project_dir)
    assert missing.returncode == 1
    assert missing.stdout == ""
    assert [line for line in missing.stderr.splitlines() if line.strip()] == [
        line for line in missing.stderr.splitlines() if line.startswith("agentctx: ")]
    assert "Traceback" not in missing.stderr
    usage = run_process("list", "--no-such-option", cwd=project_dir)
    assert usage.returncode == 2 and "No such option" in usage.stderr
    assert "Traceback" not in usage.stderr
