"""The web view's writes keep the project's team file in step."""

from __future__ import annotations

import os
import time
from pathlib import Path

from agentctx import team
from agentctx.store import Store
from agentctx.store import projects as proj
from tests.web.conftest import Site


def test_an_edit_in_the_web_view_rewrites_the_team_file(site: Site,
                                                        isolated_home: Path) -> None:
    with Store.open(isolated_home / "agentctx.db") as db:
        project = proj.get(db, site.data.project)
        team.turn_on(db, project, project.root)
    path = Path(project.root) / team.TEAM_FILE
    assert "Make needs tabs." not in path.read_text(encoding="utf-8")
    edited = site.request("POST", f"/api/records/{site.data.style}/edit",
                          {"body": "Make needs tabs."})
    assert edited.status == 200
    assert "Make needs tabs." in path.read_text(encoding="utf-8")
    with Store.open(isolated_home / "agentctx.db") as db:
        assert team.status(db, project, project.root).in_step


def test_a_pin_past_a_fifo_team_file_answers_at_once(site: Site, isolated_home: Path) -> None:
    with Store.open(isolated_home / "agentctx.db") as db:
        project = proj.get(db, site.data.project)
        team.turn_on(db, project, project.root)
    path = Path(project.root) / team.TEAM_FILE
    path.unlink()
    os.mkfifo(path)
    start = time.monotonic()
    pinned = site.request("POST", f"/api/records/{site.data.style}/pin", {"pinned": True})
    assert pinned.status == 200 and time.monotonic() - start < 15
    assert "fifo" in pinned.json()["note"].lower() or "regular file" in pinned.json()["note"]
    with Store.open(isolated_home / "agentctx.db") as db:
        assert team.status(db, project, project.root).state == "unusable"
