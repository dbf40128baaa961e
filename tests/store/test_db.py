"""The store file itself: WAL, versions, upgrades with a backup, concurrent writers."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from agentctx.store import SCHEMA_VERSION, Store, StoreTooNew, records, search
from agentctx.store.errors import StoreError
from agentctx.store.models import Draft

FIXTURE_V1 = Path(__file__).parent / "fixtures" / "store_v1.db"


def test_new_store_is_wal_with_current_schema(store: Store) -> None:
    assert store.scalar("PRAGMA journal_mode") == "wal"
    assert store.scalar("PRAGMA user_version") == SCHEMA_VERSION
    assert store.scalar("PRAGMA foreign_keys") == 1
    assert store.scalar("PRAGMA busy_timeout") > 0


def test_migrations_and_schema_version_agree() -> None:
    from agentctx.store.schema import MIGRATIONS

    assert len(MIGRATIONS._migrations) == SCHEMA_VERSION


def test_fts_triggers_fire_only_on_title_body_project() -> None:
    from agentctx.store.schema import m001_initial

    source = Path(m001_initial.__code__.co_filename).read_text(encoding="utf-8")
    assert "AFTER UPDATE OF title, body, project_id ON records" in source


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
        hits = search.search(db, search.Query(text="grpc internal api", include_superseded=True))
        titles = [h.record.title for h in hits]
        assert titles[0] == "Use gRPC for the internal API"
        assert "Use REST for the internal API" in titles
        chain = records.history(db, hits[0].record.id)
        assert [r.title for r in chain] == ["Use REST for the internal API",
                                            "Use gRPC for the internal API"]
        db.execute("INSERT INTO records_fts(records_fts) VALUES ('integrity-check')")
        new = records.add(db, Draft(type="discovery", title="after upgrade"), project_id="p")
        assert records.get(db, new.id).title == "after upgrade"
    finally:
        db.close()
    if SCHEMA_VERSION > 1:
        assert (tmp_path / "agentctx.db.v1.bak").exists()


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
