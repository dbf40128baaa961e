"""The coding benchmark's data ships in the wheel, so ``agentctx bench coding`` runs anywhere."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import REPO


def test_benchmark_data_ships_in_the_wheel(tmp_path: Path) -> None:
    """Build the real wheel and find the history and both query files in it."""
    result = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q",
                             "-w", str(tmp_path), str(REPO)], capture_output=True, text=True,
                            timeout=240)
    if result.returncode != 0:
        pytest.skip(f"wheel build unavailable offline: {result.stderr.strip()[-200:]}")
    names = set(zipfile.ZipFile(next(tmp_path.glob("agentctx-*.whl"))).namelist())
    for name in ("coding_history.json", "coding_queries_tuning.json",
                 "coding_queries_heldout.json"):
        assert f"agentctx/benchmarks/data/{name}" in names
    assert "agentctx/benchmarks/coding.py" in names and "agentctx/cli/bench.py" in names
