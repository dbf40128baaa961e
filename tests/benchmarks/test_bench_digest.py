"""``bench/bench_digest.py``: the digest's ids and metadata stay under 15 % of its characters on
the demo store and a synthetic one, measured by the real benchmark process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "bench_digest.py"


def test_ids_and_metadata_are_at_most_fifteen_percent_of_the_digest(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, str(BENCH), "--records", "300", "--json"],
                          capture_output=True, text=True, timeout=300, check=False,
                          env={**os.environ, "TMPDIR": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)
    assert set(results) == {"demo", "synthetic 300"}
    for name, result in results.items():
        assert 0 < result["meta_share"] <= 0.15, (name, result)
        assert result["tokens"] <= 1500 and result["entries"] >= 10, (name, result)
        # a record line spends a short id and no more than a mark or two before its title
        assert result["meta_chars"] <= 24 * result["entries"], (name, result)
