"""The upgrade re-redacts what a store written before the redactor knew a secret's format kept.

A version 2 store is built by the real migrations, then filled the way the older code filled it:
verbatim secrets in records (current and archived), the audit trail, supersession notes, session
meta, file names, digests and the cost ledger; in the hook logs; and in the backup an earlier
upgrade left. Opening it with this version must leave no secret anywhere under the home.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

from sqlite_utils import Database

from agentctx.core import config
from agentctx.ops import doctor
from agentctx.store import Store, graph, records, search
from agentctx.store.schema import MIGRATIONS
from agentctx.store.selection import Selection
from tests.support.secret_corpus import SECRETS

FIXTURE_V1 = Path(__file__).parent / "fixtures" / "store_v1.db"
NEW = [s for s in SECRETS if s.kind in ("url-password", "azure-key", "sendgrid-key",
                                        "cli-password", "aws-secret-key")
       or "private_key_id" in s.text]
TOKEN = "ghp_R4nd0mT0k3nV4lu3Xy123456789012345678"


def _version_2_store(path: Path) -> None:
    """A store at schema 2, built by the real migrations of that version."""
    db = Database(path)
    MIGRATIONS.apply(db, stop_before="m003_redact_stored_secrets")
    db.execute("PRAGMA user_version = 2")
    db.execute("PRAGMA journal_mode = WAL")
    db.conn.commit()
    db.close()


def _fill_as_before(path: Path) -> int:
    """What the older code stored verbatim; returns how many values hold a secret."""
    now = "2026-05-01T10:00:00.000Z"
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("INSERT INTO projects VALUES ('p', 'app', '/home/dev/app', NULL, ?, ?, 0)",
                     (now, now))
        for n, case in enumerate(NEW):
            conn.execute("INSERT INTO records (id, project_id, type, title, body, valid_from, "
                         "recorded_at, source, pending_embedding) VALUES (?, 'p', 'discovery', "
                         "?, ?, ?, ?, 'cli', 0)",
                         (f"01J{n:023d}", f"How to connect {n}", case.text, now, now))
            conn.execute("INSERT INTO embeddings VALUES (?, 'm', 2, x'00000000', ?)",
                         (conn.execute("SELECT max(pk) FROM records").fetchone()[0], now))
        conn.execute("INSERT INTO records_archive (id, project_id, type, title, body, "
                     "valid_from, recorded_at, source, superseded_at, archived_at) VALUES "
                     "('01JARCHIVED0000000000000000', 'p', 'decision', 'Old access', ?, ?, ?, "
                     "'cli', ?, ?)", (NEW[0].text, now, now, now, now))
        conn.execute("INSERT INTO edits (record_id, field, old_value, new_value, actor, "
                     "changed_at) VALUES ('x', 'body', ?, ?, 'cli', ?)",
                     (NEW[1].text, NEW[2].text, now))
        conn.execute("INSERT INTO edges VALUES ('e1', 'a', 'b', 'supersedes', 1.0, ?, ?)",
                     (f"rotated: {NEW[3].text}", now))
        meta = {"prompts": [{"at": now, "text": NEW[4].text}],
                "tests": [{"command": NEW[5].text, "files": [f"tests/{TOKEN}_test.py"]}],
                "bugfix_stubs": {NEW[3].text: "01J0"}}
        conn.execute("INSERT INTO sessions (session_id, project_id, started_at, meta) "
                     "VALUES ('s1', 'p', ?, ?)", (now, json.dumps(meta)))
        for name in (f"keys/{TOKEN}.txt", "keys/[REDACTED:github-token].txt"):
            conn.execute("INSERT INTO nodes VALUES (?, 'p', 'file', ?, ?)", (name[-12:], name, now))
        conn.execute("INSERT INTO record_entities VALUES ('01J00000000000000000000000', ?, "
                     "'applies_to', ?)", (f"keys/{TOKEN}.txt"[-12:], now))
        conn.execute("INSERT INTO digests VALUES ('p', 0, ?, ?, 10, 10, '[]', 'test')",
                     (now, f"## app\n- {NEW[6].text}"))
        conn.execute("INSERT INTO llm_calls (model, purpose, ok, error, created_at) VALUES "
                     "('m', 'extract', 0, ?, ?)", (f"400: bad request {NEW[0].text}", now))
    conn.close()
    # Values holding a secret: the records' bodies, the archived body, two audit values, the
    # note, the session's meta, the file name, the digest and the ledger's error.
    return len(NEW) + 1 + 2 + 1 + 1 + 1 + 1 + 1


def _old_backup(path: Path) -> None:
    shutil.copy(FIXTURE_V1, path)
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("UPDATE records SET body = ? WHERE title LIKE 'Use gRPC%'", (NEW[0].text,))
    conn.close()


def _everything_under(home: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(home.rglob("*")) if p.is_file())


def test_an_upgrade_re_redacts_what_older_versions_stored(isolated_home: Path) -> None:
    home = config.ensure_home()
    db_path = home / config.DB_NAME
    _version_2_store(db_path)
    values = _fill_as_before(db_path)
    _old_backup(home / f"{config.DB_NAME}.v1.bak")
    logs = home / "logs"
    (logs / "hooks.log").write_text(f"2026-05-01T10:00:00Z prompt s1 hook failed: {NEW[1].text}\n"
                                    "2026-05-01T10:00:01Z prompt s1 fine\n", encoding="utf-8")
    (logs / "extract.log.1").write_text(f"failed: {NEW[2].text}\n", encoding="utf-8")
    assert all(s.secret.encode() in _everything_under(home) for s in NEW)

    with Store.open() as db:  # the upgrade
        assert db.scalar("PRAGMA user_version") >= 3
        report = json.loads(db.meta_get("secrets_redacted_on_upgrade"))
        titles = [r.title for r in records.list_records(db, Selection(project_id="p"))]
        hits = search.search(db,
                             search.Query("connect", Selection(project_id="p", include_global=True),
                                          limit=20))
        names = [row[0] for row in db.rows("SELECT name FROM nodes")]
        linked = graph.entities_of(db, "01J00000000000000000000000")
        assert db.scalar("SELECT count(*) FROM records WHERE pending_embedding = 0") == 0
        assert db.scalar("SELECT count(*) FROM embeddings") == 0
        db.execute("INSERT INTO records_fts(records_fts, rank) VALUES ('integrity-check', 1)")
        db.execute("INSERT INTO records_archive_fts(records_archive_fts, rank) "
                   "VALUES ('integrity-check', 1)")
        assert db.scalar("PRAGMA integrity_check") == "ok"
    everything = _everything_under(home)
    leaked = [s.kind for s in NEW if s.secret.encode() in everything]
    assert leaked == [] and TOKEN.encode() not in everything
    # Twice the values (the store and the backup this upgrade took of it), the v1 backup's body
    # and the two log lines.
    assert report["count"] == 2 * values + 1 + 2
    assert len(titles) == len(NEW) and len(hits) == len(NEW)
    assert names == ["keys/[REDACTED:github-token].txt"]  # the two names merged into one
    assert [node.name for node, _ in linked] == names
    assert "fine" in (logs / "hooks.log").read_text(encoding="utf-8")
    assert "[REDACTED:" in (logs / "extract.log.1").read_text(encoding="utf-8")
    backup = sqlite3.connect(home / f"{config.DB_NAME}.v1.bak")
    assert backup.execute("PRAGMA user_version").fetchone()[0] == 1
    assert backup.execute("SELECT count(*) FROM records").fetchone()[0] == 3
    backup.close()
    for path in home.rglob("*"):
        if path.is_file() and path.parent.name != "models":
            assert path.stat().st_mode & 0o077 == 0, path
    store_check = doctor.check_store()
    assert f"re-redacted {report['count']} " in store_check.detail
    assert f"re-redacted {report['count']} " in (logs / "upgrade.log").read_text(encoding="utf-8")


def test_a_store_without_leaks_is_left_as_it_was(isolated_home: Path) -> None:
    home = config.ensure_home()
    db_path = home / config.DB_NAME
    _version_2_store(db_path)
    conn = sqlite3.connect(db_path)
    with conn:
        conn.execute("INSERT INTO records (id, project_id, type, title, body, valid_from, "
                     "recorded_at, source) VALUES ('01JABCDEF00000000000000000', 'p', 'decision',"
                     " 'Use gRPC', 'protobuf [REDACTED:github-token]', 'x', 'x', 'cli')")
    conn.close()
    with Store.open() as db:
        assert json.loads(db.meta_get("secrets_redacted_on_upgrade"))["count"] == 0
        assert records.get(db, "01JABCDEF00000000000000000").body == \
            "protobuf [REDACTED:github-token]"
    assert "re-redacted" not in doctor.check_store().detail
    assert not (home / "logs" / "upgrade.log").exists()
