"""The store file itself: WAL, versions, upgrades with a backup, concurrent writers."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from agentctx.store import SCHEMA_VERSION, Store, StoreTooNew, records, search, sessions
from agentctx.store.errors import StoreError
from agentctx.store.models import Draft
from agentctx.store.selection import Selection

FIXTURE_V1 = Path(__file__).parent / "fixtures" / "store_v1.db"


def test_new_store_is_wal_with_current_schema(store: Store) -> None:
    assert store.scalar("PRAGMA journal_mode") == "wal"
    assert store.scalar("PRAGMA user_version") == SCHEMA_VERSION
    assert store.scalar("PRAGMA foreign_keys") == 1
    assert store.scalar("PRAGMA busy_timeout") > 0


def test_migrations_and_schema_version_agree() -> None:
    from agentctx.store.schema import MIGRATIONS

    assert len(MIGRATIONS._migrations) == SCHEMA_VERSION


def test_fts_triggers_fire_only_on_title_body_project(store: Store) -> None:
    triggers = {row[0]: row[1] for row in store.rows(
        "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND name LIKE '%fts_au'")}
    assert "AFTER UPDATE OF title, body, project_id ON records\n" in triggers["records_fts_au"]
    assert "AFTER UPDATE OF title, body, project_id ON records_archive " in \
        triggers["records_archive_fts_au"]
    record = records.add(store, Draft(type="decision", title="Use gRPC"), project_id="p")
    before = store.scalar("SELECT count(*) FROM records_fts_data")
    records.touch(store, [record.id])
    assert store.scalar("SELECT count(*) FROM records_fts_data") == before


def test_a_store_from_a_newer_agentctx_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    Store.open(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(StoreTooNew, match="newer agentctx"):
        Store.open(path)


def test_a_file_that_is_not_a_store_gets_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "junk.db"
    path.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(StoreError, match="not an agentctx store"):
        Store.open(path)


def test_the_first_version_store_upgrades_and_keeps_its_data(tmp_path: Path) -> None:
    path = tmp_path / "agentctx.db"
    shutil.copy(FIXTURE_V1, path)
    db = Store.open(path)
    try:
        assert db.scalar("PRAGMA user_version") == SCHEMA_VERSION
        hits = search.search(db, search.Query("grpc internal api", Selection(state="all")))
        titles = [h.record.title for h in hits]
        assert titles[0] == "Use gRPC for the internal API"
        assert "Use REST for the internal API" in titles
        chain = records.history(db, hits[0].record.id)
        assert [r.title for r in chain] == ["Use REST for the internal API",
                                            "Use gRPC for the internal API"]
        db.execute("INSERT INTO records_fts(records_fts) VALUES ('integrity-check')")
        new = records.add(db, Draft(type="discovery", title="after upgrade"), project_id="p")
        assert records.get(db, new.id).title == "after upgrade"
        # Version 2: the archive's full-text index exists (empty: nothing was archived).
        assert db.scalar("SELECT count(*) FROM records_archive_fts") == 0
        # Version 3: receipts say why; one written before has no prompt and no matched words.
        [old] = sessions.receipts(db, "s-1")
        assert old.prompt is None and old.matched == ()
        assert [(i.score, i.matched) for i in old.items] == [(1.0, ())]
        check_indexes(db)
    finally:
        db.close()
    assert (tmp_path / "agentctx.db.v1.bak").exists()
    with sqlite3.connect(tmp_path / "agentctx.db.v1.bak") as backup:
        assert backup.execute("PRAGMA user_version").fetchone()[0] == 1
        assert backup.execute("SELECT count(*) FROM records").fetchone()[0] == 3
    backup.close()


def test_a_first_version_store_with_archived_records_upgrades_to_an_archive_index(
        tmp_path: Path) -> None:
    path = tmp_path / "agentctx.db"
    shutil.copy(FIXTURE_V1, path)
    # Consolidate the version 1 store the way version 1 did (upkeep.archive's statements):
    # the superseded REST decision moves to records_archive, which had no full-text index.
    with sqlite3.connect(path) as conn:
        columns = ", ".join(row[1] for row in conn.execute("PRAGMA table_info(records)"))
        pk = conn.execute("SELECT pk FROM records WHERE title LIKE 'Use REST%'").fetchone()[0]
        conn.execute(f"INSERT INTO records_archive ({columns}, archived_at) SELECT {columns}, "
                     "'2026-11-30T00:00:00.000Z' FROM records WHERE pk = ?", (pk,))
        conn.execute("DELETE FROM records WHERE pk = ?", (pk,))
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 1
    conn.close()
    db = Store.open(path)
    try:
        assert db.scalar("PRAGMA user_version") == SCHEMA_VERSION
        applied = [row[0] for row in db.rows("SELECT name FROM _sqlite_migrations ORDER BY id")]
        assert applied[:2] == ["m001_initial", "m002_archive_fts"]
        assert len(applied) == SCHEMA_VERSION
        check_indexes(db)
        assert db.scalar("SELECT count(*) FROM records_archive_fts "
                         "WHERE records_archive_fts MATCH 'rest'") == 1
        [then] = search.search(db, search.Query("REST internal API", Selection(as_of="2026-02-01")))
        assert then.record.title == "Use REST for the internal API" and then.record.archived
        assert {"rest", "internal", "api"} <= set(then.matched)
        now = search.search(db, search.Query("REST internal API", Selection(state="all")))
        assert [h.record.title for h in now] == ["Use gRPC for the internal API"]
        # The triggers keep the upgraded index current: forgetting the archived record clears it.
        records.forget(db, then.record.id, actor="cli")
        check_indexes(db)
        assert search.search(db, search.Query("REST", Selection(as_of="2026-02-01"))) == []
    finally:
        db.close()


def test_the_upgrade_to_face_sources_relabels_what_the_tui_and_web_superseded(
        tmp_path: Path) -> None:
    """Before schema 9 a successor the TUI or the web view wrote was stored as ``cli``; the
    audit trail's supersede entry names the face, and the upgrade relabels it."""
    path = tmp_path / "agentctx.db"
    with Store.open(path) as db:
        made = {}
        for face in ("tui", "web", "cli"):
            old = records.add(db, Draft(type="decision", title=f"Old {face}", body="x"),
                              project_id="p")
            made[face] = records.supersede(db, old.id, Draft(type="", title=f"New {face}",
                                                              body="y", source="cli"),
                                           "why", actor=face).id
    with sqlite3.connect(path) as conn:  # back to schema 8, as an older agentctx left it
        conn.execute("DELETE FROM _sqlite_migrations WHERE name = 'm009_face_sources'")
        conn.execute("PRAGMA user_version = 8")
    conn.close()
    with Store.open(path) as db:
        assert db.scalar("PRAGMA user_version") == SCHEMA_VERSION
        assert {face: records.get(db, rid).source for face, rid in made.items()} == {
            "tui": "tui", "web": "web", "cli": "cli"}


def check_indexes(db: Store) -> None:
    """Both full-text indexes hold exactly their tables' rows (raises otherwise)."""
    for index in ("records_fts", "records_archive_fts"):
        db.execute(f"INSERT INTO {index}({index}, rank) VALUES ('integrity-check', 1)")


def test_write_rolls_back_everything_on_error(store: Store) -> None:
    with pytest.raises(RuntimeError), store.write():
        records.add(store, Draft(type="decision", title="a"), project_id="p")
        with store.write():
            records.add(store, Draft(type="decision", title="b"), project_id="p")
        raise RuntimeError("boom")
    assert store.scalar("SELECT count(*) FROM records") == 0


def test_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    Store.open(path).close()
    script = (
        "import sys\n"
        "from agentctx.store import Store, records\n"
        "from agentctx.store.models import Draft\n"
        "db = Store.open(sys.argv[1], busy_timeout_ms=20000)\n"
        "for i in range(150):\n"
        "    records.add(db, Draft(type='discovery', title=f'{sys.argv[2]} {i}'), project_id='p')\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", script, str(path), f"w{n}"])
             for n in range(3)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0]
    with Store.open(path) as db:
        assert db.scalar("SELECT count(*) FROM records") == 450
        assert db.scalar("SELECT count(DISTINCT id) FROM records") == 450


def test_the_store_files_are_private_whatever_the_umask(tmp_path: Path) -> None:
    import os

    old = os.umask(0o022)
    try:
        path = tmp_path / "agentctx.db"
        with Store.open(path) as db:
            records.add(db, Draft(type="discovery", title="written"), project_id="p")
            files = [path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")]
            modes = {f.name: oct(f.stat().st_mode & 0o777) for f in files}
        assert modes == {f.name: "0o600" for f in files}
        old_store = tmp_path / "old.db"
        shutil.copy(FIXTURE_V1, old_store)
        Store.open(old_store).close()
        backup = tmp_path / "old.db.v1.bak"
        assert oct(backup.stat().st_mode & 0o777) == "0o600"
    finally:
        os.umask(old)


def test_sqlite_features_of_this_interpreter() -> None:
    from agentctx.store.db import sqlite_features

    features = sqlite_features()
    assert features.version == sqlite3.sqlite_version
    assert features.json1 and features.fts5  # CPython builds agentctx supports have both


def test_backup_to_copies_the_whole_store(store: Store, tmp_path: Path) -> None:
    made = records.add(store, Draft(type="decision", title="Use gRPC"), project_id="p")
    sessions.ensure(store, "s", "p", started_at="2026-01-01T09:00:00.000Z")
    sessions.end(store, "s", at="2026-01-01T10:00:00.000Z")
    store.backup_to(tmp_path / "copy.db")
    with Store.open(tmp_path / "copy.db") as copy:
        assert records.get(copy, made.id) == made
        ended = sessions.get(copy, "s")
        assert ended is not None and ended.ended_at == "2026-01-01T10:00:00.000Z"
