"""The proposed diff, the marked section, strikethroughs, and writing them (only when asked)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agentctx import drift
from agentctx.drift import memfiles, writer
from agentctx.drift.propose import FileChange, entry_text, id_comment
from agentctx.store import Store, records
from agentctx.store import projects as proj
from agentctx.store.models import Draft, Project, Record
from tests.drift.conftest import Loaded


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` with its bytes."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


def test_the_proposal_strikes_old_text_and_adds_a_marked_section(orders: Loaded) -> None:
    before = snapshot(orders.root)
    found = drift.proposal(orders.db, orders.project, orders.root)
    assert snapshot(orders.root) == before  # proposing writes nothing
    assert found.target == "CLAUDE.md"
    assert [c.name for c in found.changes] == ["CLAUDE.md", "docs/architecture.md"]
    claude = found.changes[0].after
    dramatiq = orders.record("queue-dramatiq")
    # Struck where it is, the record in force beside it, tied on a line of its own after the
    # paragraph (a block-level comment: Claude Code strips it).
    assert (f"~~Long-running work (e-mails, invoice PDFs) goes to Celery workers, with Redis as "
            f"the broker.~~ → {entry_text(dramatiq)}\nTask modules sit in `app/tasks/`.\n"
            f"{id_comment(dramatiq.id)}\n") in claude  # the next sentence is left alone
    assert claude.count(memfiles.BEGIN_MARK) == 1 and claude.count(memfiles.END_MARK) == 1
    section = claude.split(memfiles.BEGIN_MARK)[1].split(memfiles.END_MARK)[0]
    assert section.startswith(f"\n{memfiles.SECTION_HEADING}\n\n- ")
    # The missing records, and pytest (its old command sits in a code fence, never edited).
    for name in ("ids-uuid", "auth-jwt", "pr-size", "tests-pytest"):
        record = orders.record(name)
        assert f"- {entry_text(record)}\n{id_comment(record.id)}\n" in section
    assert "nosetests -v" in claude
    architecture = found.changes[1].after
    assert "- ~~Database: PostgreSQL 15 through SQLAlchemy 2.0, DSN read from `DATABASE_URL`.~~" \
        in architecture
    assert found.diff.startswith("--- a/CLAUDE.md\n+++ b/CLAUDE.md\n")
    assert "--- a/docs/architecture.md\n+++ b/docs/architecture.md\n" in found.diff


def test_json_has_a_line_per_candidate_and_the_diff(orders: Loaded) -> None:
    found = drift.proposal(orders.db, orders.project, orders.root)
    document = json.loads(json.dumps(drift.as_json(found)))
    assert document["diff"] == found.diff
    by_name = {orders.name_of(c["id"]): c for c in document["candidates"]}
    # id: the record in force (for the stale one, its replacement); stated: the old one.
    assert set(by_name) == {"ids-uuid", "auth-jwt", "pr-size", "tests-pytest", "queue-dramatiq",
                            "db-postgres-16"}
    for item in document["candidates"]:
        assert {"id", "class", "score", "file", "line"} <= set(item)
        assert 0.5 < item["score"] <= 1.0
    after = found.changes[0].after.splitlines()
    uuid = by_name["ids-uuid"]
    assert uuid["class"] == "missing" and uuid["file"] == "CLAUDE.md"
    assert after[uuid["line"] - 1] == f"- {entry_text(orders.record('ids-uuid'))}"
    assert after[uuid["line"]] == id_comment(orders.ids["ids-uuid"])
    assert (by_name["queue-dramatiq"]["file"], by_name["queue-dramatiq"]["line"]) == \
        ("CLAUDE.md", 32)
    pytest_ = by_name["tests-pytest"]
    assert (pytest_["class"], pytest_["file"], pytest_["line"]) == ("contradicted", "CLAUDE.md", 18)
    assert "cannot be struck" in pytest_["note"]
    assert by_name["db-postgres-16"] == {
        **by_name["db-postgres-16"], "class": "stale", "stated": orders.ids["db-postgres"],
        "file": "docs/architecture.md", "line": 8, "edited": True}
    assert document["missing_imports"] == ["docs/architecture.md:13: @missing.md"]


def test_apply_writes_exactly_the_diff_with_a_backup_and_twice_is_idempotent(
        orders: Loaded, isolated_home: Path) -> None:
    before = snapshot(orders.root)
    found = drift.proposal(orders.db, orders.project, orders.root)
    applied = drift.apply(orders.db, found)
    after = snapshot(orders.root)
    changed = {name for name in after if after[name] != before.get(name)}
    assert changed == {"CLAUDE.md", "docs/architecture.md"} and set(after) == set(before)
    for change in found.changes:
        assert (orders.root / change.name).read_text(encoding="utf-8") == change.after
    assert applied.written == ("CLAUDE.md", "docs/architecture.md") and applied.created == ()
    assert applied.backup is not None and applied.backup.is_relative_to(isolated_home)
    assert (applied.backup / "files" / "CLAUDE.md").read_bytes() == before["CLAUDE.md"]
    manifest = json.loads((applied.backup / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["created"] == [] and len(manifest["replaced"]) == 2
    # Only pytest's old command (in a code fence, which agentctx never edits) is still there.
    assert [(orders.name_of(c.id), c.kind) for c in applied.scan.candidates] == \
        [("tests-nose", "stale")]
    again = drift.proposal(orders.db, orders.project, orders.root)
    assert again.changes == () and again.diff == ""
    assert drift.apply(orders.db, again).written == ()
    assert snapshot(orders.root) == after


def test_a_file_edited_after_the_proposal_is_not_overwritten(orders: Loaded) -> None:
    found = drift.proposal(orders.db, orders.project, orders.root)
    edited = orders.root / "docs" / "architecture.md"
    edited.write_text(edited.read_text(encoding="utf-8") + "\nA late edit.\n", encoding="utf-8")
    before = snapshot(orders.root)
    with pytest.raises(drift.Changed, match=r"docs/architecture\.md changed"):
        drift.apply(orders.db, found)
    assert snapshot(orders.root) == before


def test_a_failed_write_leaves_every_file_as_it_was(tmp_path: Path) -> None:
    first = tmp_path / "CLAUDE.md"
    first.write_text("old\n", encoding="utf-8")
    changes = [FileChange(first, "CLAUDE.md", "old\n", "new\n"),
               FileChange(tmp_path / "gone" / "x.md", "gone/x.md", None, "new file\n")]
    with pytest.raises(OSError):
        writer.write(changes, tmp_path / "backup")
    assert first.read_text(encoding="utf-8") == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["CLAUDE.md", "backup"]


# ----------------------------------------------------------------------------- marked section


def setup(db: Store, root: Path, files: dict[str, str]) -> Project:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    return proj.resolve(db, str(root)).project


def decision(db: Store, project: Project, title: str, body: str = "") -> Record:
    return records.add(db, Draft(type="decision", title=title, body=body, confidence="explicit"),
                       project_id=project.id)


def test_an_existing_marked_section_is_updated_in_place(store: Store, tmp_path: Path) -> None:
    root = tmp_path / "app"
    project = setup(store, root, {"CLAUDE.md": "# App\n"})
    kept = decision(store, project, "Deploy with Helm charts", "charts in deploy/helm")
    old = decision(store, project, "Cache with memcached", "one memcached per region")
    new = records.supersede(store, old.id, Draft(type="", title="Cache with Redis 7",
                                                 body="ElastiCache, one cluster per region",
                                                 confidence="explicit"), "streams")
    missing = decision(store, project, "Public ids are UUIDv7 strings")
    teammate = "01HZZZZZZZZZZZZZZZZZZZZZZZ"
    text = ("# App 🚀\n\nIntro.\n\n"
            f"{memfiles.BEGIN_MARK}\n{memfiles.SECTION_HEADING}\n\n"
            f"- {entry_text(kept)}\n{id_comment(kept.id)}\n"
            f"- {entry_text(old)}\n{id_comment(old.id)}\n"
            f"- Teammate's rule: squash merges only\n{id_comment(teammate)}\n"
            f"{memfiles.END_MARK}\n\n## After\n\nMore text.\n")
    (root / "CLAUDE.md").write_text(text, encoding="utf-8")
    found = drift.proposal(store, project, root)
    after = found.changes[0].after
    assert after.count(memfiles.BEGIN_MARK) == 1 and after.count(memfiles.SECTION_HEADING) == 1
    section = after.split(memfiles.BEGIN_MARK)[1].split(memfiles.END_MARK)[0].splitlines()
    assert section == ["", memfiles.SECTION_HEADING, "",
                       f"- {entry_text(kept)}", id_comment(kept.id),
                       f"- {entry_text(new)}", id_comment(new.id),
                       "- Teammate's rule: squash merges only", id_comment(teammate),
                       f"- {entry_text(missing)}", id_comment(missing.id)]
    assert after.endswith(f"{memfiles.END_MARK}\n\n## After\n\nMore text.\n")
    drift.apply(store, found)
    assert drift.proposal(store, project, root).changes == ()


def test_broken_markers_are_reported_and_not_touched(store: Store, tmp_path: Path) -> None:
    root = tmp_path / "app"
    project = setup(store, root, {"CLAUDE.md": f"# App\n{memfiles.BEGIN_MARK}\n- x\n"})
    decision(store, project, "Public ids are UUIDv7 strings")
    found = drift.proposal(store, project, root)
    assert found.changes == () and found.diff == ""
    assert "CLAUDE.md: it has 1 '<!-- agentctx:begin -->' and 0" in found.problems[0]


def test_additions_go_to_dot_claude_claude_md_without_a_root_one(tilekit: Loaded) -> None:
    added = decision(tilekit.db, tilekit.project, "Tiles are cached for 30 days",
                     "TTL 30 days in the on-disk cache")
    found = drift.proposal(tilekit.db, tilekit.project, tilekit.root)
    assert found.target == ".claude/CLAUDE.md"
    assert [c.name for c in found.changes] == [".claude/CLAUDE.md"]
    assert id_comment(added.id) in found.changes[0].after


def test_without_memory_files_a_new_claude_md_is_proposed(store: Store, tmp_path: Path) -> None:
    root = tmp_path / "bare"
    project = setup(store, root, {"README.md": "# Bare\n"})
    added = decision(store, project, "Use gRPC for the internal API")
    found = drift.proposal(store, project, root)
    assert found.diff.startswith("--- /dev/null\n+++ b/CLAUDE.md\n")
    applied = drift.apply(store, found)
    assert applied.created == ("CLAUDE.md",) and applied.written == ()
    assert (root / "CLAUDE.md").read_text(encoding="utf-8") == (
        f"{memfiles.BEGIN_MARK}\n{memfiles.SECTION_HEADING}\n\n"
        f"- {entry_text(added)}\n{id_comment(added.id)}\n{memfiles.END_MARK}\n")
    assert applied.backup is not None
    manifest = json.loads((applied.backup / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["created"] == [str((root / "CLAUDE.md").resolve())]


def test_claude_local_md_is_never_edited(store: Store, tmp_path: Path) -> None:
    root = tmp_path / "app"
    project = setup(store, root, {"CLAUDE.md": "# App\n\nNothing here yet.\n",
                                  "CLAUDE.local.md": "# Mine\n\n- I run the suite with nose.\n"})
    old = decision(store, project, "Run the suite with nose", "nosetests")
    new = records.supersede(store, old.id, Draft(type="", title="Run the suite with pytest",
                                                 confidence="explicit"), "nose is dead")
    found = drift.proposal(store, project, root)
    [candidate] = found.candidates
    assert (candidate.candidate.kind, candidate.file) == ("contradicted", "CLAUDE.local.md")
    assert [c.name for c in found.changes] == ["CLAUDE.md"]
    assert id_comment(new.id) in found.changes[0].after
    drift.apply(store, found)
    assert (root / "CLAUDE.local.md").read_text(encoding="utf-8") == \
        "# Mine\n\n- I run the suite with nose.\n"
    [left] = drift.proposal(store, project, root).candidates
    assert left.candidate.kind == "stale" and "CLAUDE.local.md" in left.note


def test_table_rows_are_struck_cell_by_cell_and_crlf_is_kept(store: Store,
                                                              tmp_path: Path) -> None:
    root = tmp_path / "app"
    text = ("# Stack\r\n\r\n| Piece | Choice |\r\n|---|---|\r\n"
            "| Queue | Celery workers on Redis |\r\n| Web | FastAPI |\r\n")
    project = setup(store, root, {"CLAUDE.md": text})
    decision(store, project, "Web framework is FastAPI")
    old = decision(store, project, "Queue: Celery workers on Redis")
    new = records.supersede(store, old.id, Draft(type="", title="Queue: Dramatiq actors",
                                                 body="Dramatiq | Redis broker",
                                                 confidence="explicit"), "lighter")
    found = drift.proposal(store, project, root)
    after = found.changes[0].after
    # Only the cell that says the old thing is struck; the record in force is written there,
    # short (its title), and tied on a line of its own after the table.
    assert after.endswith("| Queue | ~~Celery workers on Redis~~ Queue: Dramatiq actors |\r\n"
                          f"| Web | FastAPI |\r\n{id_comment(new.id)}\r\n")
    assert after.count("\r\n") == text.count("\r\n") + 1 and "\n" not in after.replace("\r\n", "")
    drift.apply(store, found)
    assert drift.proposal(store, project, root).candidates == ()


def test_a_symlinked_claude_md_is_edited_through_its_target(store: Store, tmp_path: Path) -> None:
    root = tmp_path / "app"
    project = setup(store, root, {"AGENTS.md": "# Agents\n"})
    os.symlink("AGENTS.md", root / "CLAUDE.md")
    decision(store, project, "Use gRPC for the internal API")
    found = drift.proposal(store, project, root)
    assert found.target == "AGENTS.md"
    drift.apply(store, found)
    assert (root / "CLAUDE.md").is_symlink() and memfiles.BEGIN_MARK in \
        (root / "AGENTS.md").read_text(encoding="utf-8")


def test_the_memory_folder_of_a_foreign_folder_is_the_root_and_creates_nothing(
        store: Store, tmp_path: Path) -> None:
    """Looking from a folder the store does not know (the TUI started elsewhere) gives the
    project's root and writes no project for that folder."""
    (tmp_path / "shop" / ".git").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    project = proj.resolve(store, str(tmp_path / "shop")).project
    assert drift.project_folder(store, project, tmp_path / "elsewhere") == Path(project.root)
    assert proj.count(store) == 1
    assert drift.project_folder(store, project, tmp_path / "shop") == tmp_path / "shop"


# ----------------------------------------------------------------------------- ties, AGENTS.md


def own_line_ties_only(text: str) -> bool:
    """Whether every agentctx comment of ``text`` is on a line of its own."""
    return all(memfiles.TIE_LINE.match(line) or line.strip() in (memfiles.BEGIN_MARK,
                                                                  memfiles.END_MARK)
               for line in text.splitlines() if "<!-- agentctx" in line)


STACK = """# shop

- The HTTP API is FastAPI.
- Background jobs run on Celery workers with RabbitMQ as the broker.

| Piece | Choice |
|---|---|
| Web | FastAPI |
| Queue | Celery on RabbitMQ |
"""


def test_list_items_and_table_cells_are_struck_in_place_and_twice_changes_nothing(
        store: Store, tmp_path: Path) -> None:
    root = tmp_path / "shop"
    project = setup(store, root, {"CLAUDE.md": STACK})
    decision(store, project, "Serve the HTTP API with FastAPI")
    old = decision(store, project, "Background jobs on Celery with RabbitMQ",
                   "Celery workers, RabbitMQ broker")
    new = records.supersede(store, old.id, Draft(type="", title="Dramatiq on Postgres",
                                                 body="Dramatiq actors with the Postgres broker",
                                                 confidence="explicit"), "one datastore")
    found = drift.proposal(store, project, root)
    assert [(c.candidate.kind, c.line) for c in found.candidates] == [("contradicted", 4)]
    drift.apply(store, found)
    after = (root / "CLAUDE.md").read_text(encoding="utf-8")
    assert after == STACK.replace(
        "- Background jobs run on Celery workers with RabbitMQ as the broker.\n",
        "- ~~Background jobs run on Celery workers with RabbitMQ as the broker.~~ → "
        f"{entry_text(new)}\n{id_comment(new.id)}\n").replace(
        "| Queue | Celery on RabbitMQ |\n",
        f"| Queue | ~~Celery on RabbitMQ~~ Dramatiq on Postgres |\n{id_comment(new.id)}\n")
    assert own_line_ties_only(after)
    again = drift.proposal(store, project, root)
    assert again.candidates == () and again.changes == ()


def test_inline_ties_of_older_versions_move_onto_lines_of_their_own(
        store: Store, tmp_path: Path) -> None:
    root = tmp_path / "app"
    project = setup(store, root, {"CLAUDE.md": "# App\n"})
    kept = decision(store, project, "Deploy with Helm charts", "charts in deploy/helm")
    old = decision(store, project, "Run the tests with nose", "nosetests -v")
    new = records.supersede(store, old.id, Draft(type="", title="Run the tests with pytest",
                                                 body="pytest -q", confidence="explicit"),
                            "nose is dead")
    text = (f"# App\n\n- ~~Run the tests with nose.~~ → {id_comment(new.id)} Run the tests with "
            f"pytest.\n- Use tabs.\n\n{memfiles.BEGIN_MARK}\n{memfiles.SECTION_HEADING}\n\n"
            f"- {entry_text(kept)} {id_comment(kept.id)}\n{memfiles.END_MARK}\n")
    (root / "CLAUDE.md").write_text(text, encoding="utf-8")
    found = drift.proposal(store, project, root)
    assert found.candidates == ()  # the inline ties are read as they always were
    [change] = found.changes
    assert change.after == (
        f"# App\n\n- ~~Run the tests with nose.~~ → Run the tests with pytest.\n"
        f"{id_comment(new.id)}\n- Use tabs.\n\n{memfiles.BEGIN_MARK}\n"
        f"{memfiles.SECTION_HEADING}\n\n- {entry_text(kept)}\n{id_comment(kept.id)}\n"
        f"{memfiles.END_MARK}\n")
    drift.apply(store, found)
    again = drift.proposal(store, project, root)
    assert again.candidates == () and again.changes == ()


def test_stale_text_beside_its_replacement_is_never_in_sync(store: Store, tmp_path: Path) -> None:
    """Appending the replacement is not enough: the old text is struck, or stays a candidate
    where agentctx does not edit (a code fence)."""
    root = tmp_path / "app"
    project = setup(store, root, {"CLAUDE.md": (
        "# App\n\n- Run the tests with `nosetests`.\n\n```sh\nnosetests -v\n```\n")})
    old = decision(store, project, "Tests run with nose", "Run `nosetests` from the root.")
    new = records.supersede(store, old.id, Draft(type="", title="Tests run with pytest",
                                                 body="Run `pytest -q`.", confidence="explicit"),
                            "nose is dead")
    first = drift.apply(store, drift.proposal(store, project, root))
    text = (root / "CLAUDE.md").read_text(encoding="utf-8")
    assert f"- ~~Run the tests with `nosetests`.~~ → {entry_text(new)}\n" in text
    assert [(c.kind, c.line) for c in first.scan.candidates] == [("stale", 7)]
    assert "nosetests -v" in text  # a code fence is never edited: it stays a candidate
    assert drift.proposal(store, project, root).changes == ()


def test_without_a_claude_md_agents_md_is_read_and_edited(store: Store, tmp_path: Path) -> None:
    root = tmp_path / "app"
    project = setup(store, root, {"AGENTS.md": "# Agents\n\n- Requires Java 17.\n",
                                  "docs/setup.md": "# Setup\n"})
    (root / "AGENTS.md").write_text("# Agents\n\n- Requires Java 17.\n\nSee @docs/setup.md.\n",
                                    encoding="utf-8")
    old = decision(store, project, "Java 17", "The service compiles and runs on Java 17.")
    new = records.supersede(store, old.id, Draft(type="", title="Java 21 with virtual threads",
                                                 body="The toolchain is Java 21.",
                                                 confidence="explicit"), "virtual threads")
    missing = decision(store, project, "Public ids are UUIDv7 strings")
    found = drift.proposal(store, project, root)
    assert found.target == "AGENTS.md"
    document = drift.as_json(found)
    assert [(c["class"], c["file"], c["stated"]) for c in document["candidates"]] == [
        ("missing", "AGENTS.md", None), ("contradicted", "AGENTS.md", old.id)]
    assert document["files"] == ["AGENTS.md", "docs/setup.md"]
    drift.apply(store, found)
    assert not (root / "CLAUDE.md").exists()
    text = (root / "AGENTS.md").read_text(encoding="utf-8")
    assert f"- ~~Requires Java 17.~~ → {entry_text(new)}\n{id_comment(new.id)}\n" in text
    assert f"- {entry_text(missing)}\n{id_comment(missing.id)}\n" in text
    assert drift.proposal(store, project, root).candidates == ()


def test_agents_md_beside_a_claude_md_that_does_not_import_it_is_left_alone(
        store: Store, tmp_path: Path) -> None:
    root = tmp_path / "app"
    project = setup(store, root, {"CLAUDE.md": "# App\n\nThe JDK comes from the toolchain.\n",
                                  "AGENTS.md": "# Agents\n\n- Requires Java 17.\n"})
    old = decision(store, project, "Java 17", "The service compiles and runs on Java 17.")
    records.supersede(store, old.id, Draft(type="", title="Java 21 with virtual threads",
                                           body="The toolchain is Java 21.",
                                           confidence="explicit"), "virtual threads")
    found = drift.proposal(store, project, root)
    assert [(c.candidate.kind, c.file) for c in found.candidates] == [("missing", "CLAUDE.md")]
    assert [c.name for c in found.changes] == ["CLAUDE.md"]
