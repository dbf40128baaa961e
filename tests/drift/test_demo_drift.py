"""The demo's CLAUDE.md, which states three superseded facts almost word for word."""

from __future__ import annotations

import json
import re
from pathlib import Path

from agentctx import demo
from agentctx.drift import memfiles, scanner
from agentctx.store import Store
from agentctx.store import projects as proj
from tests.conftest import run_cli

SUPERSEDED = {  # the demo's CLAUDE.md line, the record in force, the older version it states
    5: ("Internal API is gRPC served through connect-python",
        "Internal API is REST/JSON between services"),
    6: ("Tests run with pytest -n auto (pytest-xdist)", "Tests run with nose"),
    7: ("Payment code lives in harbor/payments/ (renamed from billing/)",
        "Billing code lives in harbor/billing/"),
}
OLD_TEXT = ("REST/JSON", "nosetests", "harbor/billing/")


def test_the_three_superseded_facts_are_contradicted_and_money_is_stated(
        store: Store, tmp_path: Path) -> None:
    root = tmp_path / "harbor"
    demo.build(store, root)
    project = proj.resolve(store, str(root)).project
    found = scanner.scan(store, project, root)
    contradicted = {c.line: (c.record.title, c.old.title if c.old else None)
                    for c in found.candidates if c.kind == scanner.CONTRADICTED}
    assert contradicted == SUPERSEDED
    assert not [c for c in found.candidates if c.kind == scanner.STALE]
    # "Store money as integer cents." states the current record in other words.
    money = next(r for r in found.checked if r.title.startswith("Money is stored"))
    assert money.id in found.present


def unstruck(text: str) -> list[str]:
    """Lines that still say one of the old facts outside struck text (and outside the record in
    force written after it, which may tell of the old one: "renamed from billing/")."""
    plain = [re.sub(r"~~.+?~~ → .*", "", line) for line in text.splitlines()]
    return [line for line in plain if any(old in line for old in OLD_TEXT)]


def test_sync_apply_strikes_them_and_check_passes_after(isolated_home: Path,
                                                        tmp_path: Path) -> None:
    root = tmp_path / "harbor"
    with Store.open() as db:
        demo.build(db, root)
    before = run_cli("sync", "--check", "--json", cwd=root)
    assert before.returncode == 1, before.stderr
    document = json.loads(before.stdout)
    stated = [(c["class"], c["file"], c["line"]) for c in document["candidates"]
              if c["stated"] is not None]
    assert sorted(stated) == [("contradicted", "CLAUDE.md", line) for line in SUPERSEDED]
    assert unstruck((root / "CLAUDE.md").read_text(encoding="utf-8"))

    applied = run_cli("sync", "--apply", "--yes", cwd=root)
    assert applied.returncode == 0, applied.stderr
    text = (root / "CLAUDE.md").read_text(encoding="utf-8")
    assert unstruck(text) == []
    assert "- Store money as integer cents.\n" in text  # stated: left alone
    # Every tie is a comment on a line of its own (Claude Code strips those).
    assert all(memfiles.TIE_LINE.match(line) or line in (memfiles.BEGIN_MARK, memfiles.END_MARK)
               for line in text.splitlines() if "<!--" in line)

    after = run_cli("sync", "--check", cwd=root)
    assert after.returncode == 0, after.stdout + after.stderr
    assert after.stdout.startswith("In sync: CLAUDE.md reflect")
    again = run_cli("sync", "--apply", "--yes", cwd=root)
    assert again.returncode == 0 and "Nothing to apply." in again.stdout
    assert (root / "CLAUDE.md").read_text(encoding="utf-8") == text
