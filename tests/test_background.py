"""Detached children start without the project's Python: a real child, a hostile user base."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from agentctx.core import background


def test_a_detached_child_runs_no_usercustomize_of_the_project(tmp_path: Path,
                                                               isolated_home: Path) -> None:
    mark = tmp_path / "ran.txt"
    base = tmp_path / "project-user-base"
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    folder = base / "lib" / version / "site-packages"
    folder.mkdir(parents=True)
    for name in ("usercustomize.py", "sitecustomize.py", "re.py"):
        (folder / name).write_text(f"open({str(mark)!r}, 'a').write({name!r})\n")
    (folder / "evil.pth").write_text(f"import os; open({str(mark)!r}, 'a').write('pth')\n")
    env = {**os.environ, "PYTHONUSERBASE": str(base), "PYTHONPATH": str(folder)}
    pid = background.spawn_detached(["--version"], log_name="child-test.log", env=env)
    deadline = time.monotonic() + 30
    log = isolated_home / "logs" / "child-test.log"
    while time.monotonic() < deadline and "agentctx" not in (
            log.read_text() if log.exists() else ""):
        time.sleep(0.05)
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
    assert "agentctx" in log.read_text()
    assert not mark.exists(), mark.read_text()
    assert "PYTHONUSERBASE" not in background.child_environment(env)
