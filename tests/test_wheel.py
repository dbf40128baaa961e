"""The built wheel carries every data file agentctx reads at run time."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

from tests.conftest import REPO

DATA_FILES = (
    "agentctx/py.typed",
    "agentctx/data/prices.json",
    "agentctx/data/common_words.txt",
    "agentctx/data/software_words.txt",
    "agentctx/benchmarks/data/coding_history.json",
    "agentctx/benchmarks/data/coding_queries_tuning.json",
    "agentctx/benchmarks/data/coding_queries_tuning2.json",
    "agentctx/benchmarks/data/coding_queries_tuning3.json",
    "agentctx/benchmarks/data/coding_queries_tuning4.json",
    "agentctx/benchmarks/data/coding_queries_tuning5.json",
    "agentctx/benchmarks/data/coding_queries_heldout.json",
    "agentctx/web/static/index.html",
    "agentctx/web/static/web.js",
    "agentctx/web/static/graph.js",
    "agentctx/web/static/web.css",
    "agentctx/web/static/icon.svg",
)


def test_the_wheel_ships_the_data_files(tmp_path: Path) -> None:
    """Build the real wheel (as pip would for an install) and find each data file in it."""
    result = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q",
                             "-w", str(tmp_path), str(REPO)], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    names = set(zipfile.ZipFile(next(tmp_path.glob("agentctx-*.whl"))).namelist())
    missing = [name for name in DATA_FILES if name not in names]
    assert not missing, f"missing from the wheel: {missing}"
    assert "agentctx/hooks/dispatch.py" in names and "agentctx/cli/bench.py" in names
