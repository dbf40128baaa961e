"""Importing Claude Code's auto memory: a fake ``~/.claude/projects/<encoded>/memory/`` in the
test's HOME, read by the real ``agentctx import --claude-memory`` process; the folder is never
written; types map as the README says; re-imports are idempotent, a changed file supersedes
its record, a restatement reinforces the record it restates."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from agentctx.drift import automemory
from agentctx.store import Store, projects, records
from agentctx.store.models import Draft
from agentctx.store.selection import Selection
from tests.conftest import run_cli

BILLING = """---
name: billing layout
description: Billing code lives in harbor/billing/
type: project
modified: 2026-11-01T10:00:00Z
---

Billing code lives in harbor/billing/; invoices come from harbor/billing/invoices.py.
"""
TESTING = """---
name: testing
description: Don't mock the database in integration tests
type: feedback
---

Integration tests hit a real Postgres through `make test-db`; a mock hid a broken migration.
"""
USER = """---
name: user role
description: The developer is a backend engineer who wants short answers
type: user
---

Senior backend engineer; answers with the code first.
"""
DEPLOY = """---
name: deploys
description: We deploy with Helm charts instead of raw manifests
type: project
---

The charts are in deploy/charts; always bump the chart version.
"""
LINKS = """---
name: links
description: Bugs are tracked in the Linear project INGEST
type: reference
---

https://linear.app/acme/project/ingest
"""
INDEX = """# Memory

- [Billing layout](billing.md) — where billing code is
- [Testing](testing.md) — how integration tests run
- The staging database is reset every Monday at 06:00 UTC.

Notes kept by Claude.
"""


def memory_folder(project_dir: Path) -> Path:
    """Where Claude Code keeps the project's auto memory in the test's HOME."""
    return Path(os.environ["HOME"]) / ".claude" / "projects" / automemory.encode(
        project_dir) / "memory"


def write_memory(project_dir: Path, files: dict[str, str]) -> Path:
    folder = memory_folder(project_dir)
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(folder.iterdir())}


def import_json(project_dir: Path) -> dict[str, Any]:
    done = run_cli("import", "--claude-memory", "--json", cwd=project_dir)
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def current(project_dir: Path) -> dict[str, Any]:
    with Store.open() as db:
        project = projects.resolve(db, str(project_dir)).project
        found = records.list_records(db, Selection(project_id=project.id, include_global=True))
    return {r.title: r for r in found}


def test_encoded_folder_is_the_root_with_every_other_character_a_dash() -> None:
    assert automemory.encode("/home/dev/my_app.v2") == "-home-dev-my-app-v2"
    assert automemory.encode("/tmp/h31/app") == "-tmp-h31-app"


def test_import_maps_types_keeps_text_and_never_writes_the_folder(project_dir: Path) -> None:
    folder = write_memory(project_dir, {"MEMORY.md": INDEX, "billing.md": BILLING,
                                        "testing.md": TESTING, "user.md": USER,
                                        "deploy.md": DEPLOY, "links.md": LINKS})
    before = snapshot(folder)
    report = import_json(project_dir)
    assert report["enabled"] and report["why"] == "on by default"
    assert report["items"] == 6 and len(report["added"]) == 6  # prose of MEMORY.md is not one
    stored = current(project_dir)
    expect = {
        "Billing code lives in harbor/billing/": ("discovery", "project"),
        "Don't mock the database in integration tests": ("convention", "project"),
        "The developer is a backend engineer who wants short answers": ("preference",
                                                                        "global"),
        "We deploy with Helm charts instead of raw manifests": ("decision", "project"),
        "Bugs are tracked in the Linear project INGEST": ("discovery", "project"),
        "The staging database is reset every Monday at 06:00 UTC.": ("discovery", "project"),
    }
    for title, (type_, scope) in expect.items():
        record = stored[title]
        assert (record.type, record.scope, record.source, record.confidence) == \
            (type_, scope, "claude-memory", "inferred"), title
    assert stored["Billing code lives in harbor/billing/"].body == (
        "Billing code lives in harbor/billing/; invoices come from harbor/billing/invoices.py.")
    assert stored["Billing code lives in harbor/billing/"].valid_from.startswith("2026-11-01")
    assert snapshot(folder) == before  # read only: not a byte, not an mtime changed


def test_reimport_is_idempotent_a_changed_file_supersedes_a_forgotten_one_stays_out(
        project_dir: Path) -> None:
    folder = write_memory(project_dir, {"MEMORY.md": INDEX, "billing.md": BILLING,
                                        "testing.md": TESTING})
    first = import_json(project_dir)
    assert len(first["added"]) == 3
    again = import_json(project_dir)
    assert (again["added"], again["superseded"], again["unchanged"]) == ([], [], 3)

    (folder / "billing.md").write_text(BILLING.replace(
        "harbor/billing/;", "harbor/payments/ since the rename;").replace(
        "modified: 2026-11-01T10:00:00Z", "modified: 2026-12-01T10:00:00Z"), encoding="utf-8")
    changed = import_json(project_dir)
    assert changed["unchanged"] == 2 and len(changed["superseded"]) == 1
    [pair] = changed["superseded"]
    with Store.open() as db:
        old, new = records.get(db, pair["old"]), records.get(db, pair["new"])
        history = records.history(db, new.id)
        assert old.superseded_by == new.id and not old.current
        assert "harbor/payments/ since the rename" in new.body and new.source == "claude-memory"
        assert [r.id for r in history] == [old.id, new.id]
        note = records.supersession_note(db, new.id, old.id)
        assert note == "the auto memory file billing.md changed"
    assert import_json(project_dir)["unchanged"] == 3  # the new text is known now

    forgotten = current(project_dir)["The staging database is reset every Monday at 06:00 UTC."]
    assert run_cli("forget", forgotten.id, "--yes", cwd=project_dir).returncode == 0
    after = import_json(project_dir)
    assert (after["added"], after["forgotten"]) == ([], 1)
    assert "The staging database is reset every Monday at 06:00 UTC." not in current(project_dir)


def test_a_restatement_of_a_record_reinforces_it_instead_of_adding(project_dir: Path) -> None:
    with Store.open() as db:
        project = projects.resolve(db, str(project_dir)).project
        mine = records.add(db, Draft(type="convention",
                                     title="Do not mock the database in integration tests",
                                     body="Integration tests hit a real Postgres through "
                                          "`make test-db`."), project_id=project.id)
        other = records.add(db, Draft(type="convention", title="Tests mirror the package"),
                            project_id=project.id)
    write_memory(project_dir, {"testing.md": TESTING, "deploy.md": DEPLOY})
    report = import_json(project_dir)
    assert report["reinforced"] == [mine.id] and len(report["added"]) == 1
    with Store.open() as db:
        reinforced = records.get(db, mine.id)
        assert (reinforced.reinforce_count, reinforced.confidence) == (1, "reinforced")
        assert reinforced.title == mine.title and reinforced.body == mine.body  # not rewritten
        assert records.get(db, other.id).reinforce_count == 0
    assert import_json(project_dir)["unchanged"] == 2  # reinforced once, not on every import


def test_moved_and_disabled_auto_memory(project_dir: Path) -> None:
    moved = project_dir / ".claude" / "memory"
    moved.mkdir(parents=True)
    (moved / "deploy.md").write_text(DEPLOY, encoding="utf-8")
    (project_dir / ".claude" / "settings.json").write_text(
        json.dumps({"autoMemoryDirectory": ".claude/memory"}), encoding="utf-8")
    report = import_json(project_dir)
    assert report["folder"] == str(moved) and len(report["added"]) == 1
    off = run_cli("doctor", "--quick", "--json", cwd=project_dir,
                  env={"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"})
    line = next(c for c in json.loads(off.stdout)["checks"] if c["name"] == "auto memory")
    assert line["detail"].startswith("off for this project (CLAUDE_CODE_DISABLE_AUTO_MEMORY=1)")
    (project_dir / ".claude" / "settings.local.json").write_text(
        json.dumps({"autoMemoryEnabled": False}), encoding="utf-8")
    assert not automemory.state(str(project_dir)).enabled


def test_doctor_compares_auto_memory_with_the_digest(project_dir: Path) -> None:
    write_memory(project_dir, {"MEMORY.md": INDEX, "deploy.md": DEPLOY})
    with Store.open() as db:
        projects.resolve(db, str(project_dir))
    done = run_cli("doctor", "--quick", "--json", cwd=project_dir)
    line = next(c for c in json.loads(done.stdout)["checks"] if c["name"] == "auto memory")
    assert line["status"] == "ok" and line["detail"].startswith("on (on by default): MEMORY.md "
                                                                "loads ")
    assert "1 topic files" in line["detail"] and "0 imported" in line["detail"]
    assert "agentctx import --claude-memory" in line["fix"]
    import_json(project_dir)
    assert run_cli("consolidate", cwd=project_dir, env={"AGENTCTX_EMBEDDINGS": "off"}) \
        .returncode == 0
    done = run_cli("doctor", "--quick", "--json", cwd=project_dir)
    line = next(c for c in json.loads(done.stdout)["checks"] if c["name"] == "auto memory")
    # the index lines link topic files this folder lacks: they are memories of their own
    assert "agentctx's digest" in line["detail"] and " tokens; 4 imported" in line["detail"]
    assert line["fix"] == ""


def test_bad_input_is_one_line_and_changes_nothing(project_dir: Path) -> None:
    write_memory(project_dir, {"deploy.md": DEPLOY})
    done = run_cli("import", "some.md", "--claude-memory", cwd=project_dir)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert current(project_dir) == {}


def test_init_offers_the_import(project_dir: Path) -> None:
    from tests.install.conftest import run_cli as run_launcher

    write_memory(project_dir, {"deploy.md": DEPLOY, "links.md": LINKS})
    quiet = run_launcher("init", "--yes", cwd=project_dir)
    assert quiet.returncode == 0, quiet.stderr
    assert ("note: Claude Code's auto memory for this project holds 2 memories: 'agentctx "
            "import --claude-memory' imports them (read only)") in quiet.stdout
    assert current(project_dir) == {}  # no terminal, no flag: only offered
    asked = run_launcher("init", "--yes", "--claude-memory", cwd=project_dir)
    assert asked.returncode == 0, asked.stderr
    assert "2 memories (on: on by default) · 2 added" in asked.stdout
    assert len(current(project_dir)) == 2
