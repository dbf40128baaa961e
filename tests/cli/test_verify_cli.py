"""``agentctx verify``: records whose named paths are all gone, listed and resolved (keep,
forget, supersede) by the real CLI process; bad input is one line and changes nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from agentctx.store import Store, projects, records
from agentctx.store.models import Draft
from tests.conftest import run_cli


def _add(folder: Path, title: str, body: str = "") -> str:
    with Store.open() as db:
        project = projects.resolve(db, str(folder)).project
        return records.add(db, Draft(type="decision", title=title, body=body,
                                     confidence="explicit"), project_id=project.id).id


def _listed(folder: Path) -> list[dict[str, Any]]:
    done = run_cli("verify", "--json", cwd=folder)
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout)["possibly_stale"])


def test_verify_lists_and_resolves_possibly_stale_records(project_dir: Path) -> None:
    for folder in ("harbor/billing", "harbor/jobs", "legacy"):
        (project_dir / folder).mkdir(parents=True)
    billing = _add(project_dir, "Billing code lives in harbor/billing/")
    jobs = _add(project_dir, "Jobs are defined in harbor/jobs/", "See harbor/jobs/README.md.")
    legacy = _add(project_dir, "The legacy/ folder is frozen")
    both = _add(project_dir, "Payments moved from harbor/billing/ to harbor/payments/")
    (project_dir / "harbor" / "payments").mkdir()
    _add(project_dir, "We use REST/JSON between services")  # no path: "REST/JSON" is not one
    assert _listed(project_dir) == []
    done = run_cli("verify", cwd=project_dir)
    assert "every record naming files or folders names one that exists" in done.stdout

    for folder in ("harbor/billing", "harbor/jobs", "legacy"):
        shutil.rmtree(project_dir / folder)
    stale = {item["id"]: item["gone"] for item in _listed(project_dir)}
    assert stale == {billing: ["harbor/billing/"], legacy: ["legacy/"],
                     jobs: ["harbor/jobs/", "harbor/jobs/README.md"]}
    assert both not in stale  # harbor/payments/ is still there
    text = run_cli("verify", cwd=project_dir).stdout
    assert "3 possibly stale" in text and "(harbor/billing/ no longer exists)" in text
    assert "--keep ID" in text

    kept = run_cli("verify", "--keep", legacy[:12], cwd=project_dir)
    assert kept.returncode == 0 and "not flagged again while legacy/ is gone" in kept.stdout
    forgot = run_cli("verify", "--forget", jobs, "--yes", cwd=project_dir)
    assert forgot.returncode == 0 and forgot.stdout.strip() == f"forgot {jobs}"
    moved = run_cli("verify", "--supersede", billing, "--why", "billing/ became payments/",
                    "--body", "Refunds are in harbor/payments/refunds.py.",
                    "--title", "Payment code lives in harbor/payments/", cwd=project_dir)
    assert moved.returncode == 0 and moved.stdout.startswith(f"{billing} superseded by ")
    assert _listed(project_dir) == []
    with Store.open() as db:
        assert not records.get(db, billing).current and records.get(db, legacy).current
    (project_dir / "legacy").mkdir()  # back, then gone again: same paths, still kept
    shutil.rmtree(project_dir / "legacy")
    assert _listed(project_dir) == []


def test_bad_input_is_one_line_and_changes_nothing(project_dir: Path) -> None:
    record = _add(project_dir, "Billing code lives in harbor/billing/")
    for args in (("--keep", record, "--forget", record), ("--supersede", record),
                 ("--why", "because"), ("--keep", "ZZZZZZZZ")):
        done = run_cli("verify", *args, cwd=project_dir)
        assert done.returncode != 0 and "Traceback" not in done.stderr, args
        assert len(done.stderr.strip().splitlines()) == 1, (args, done.stderr)
    with Store.open() as db:
        assert records.get(db, record).current
