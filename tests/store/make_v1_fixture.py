"""Regenerate ``fixtures/store_v1.db``: a real store file written by schema version 1.

Run once when version 1 was current (it is kept as history; never regenerate it later).
"""

from __future__ import annotations

import sqlite3
import sys
import tempfile
from pathlib import Path

from agentctx.store import Store, graph, projects, records, sessions
from agentctx.store.models import Draft


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        db = Store.open(Path(tmp) / "v1.db")
        assert db.scalar("PRAGMA user_version") == 1
        root = Path(tmp) / "proj"
        root.mkdir()
        project = projects.resolve(db, str(root)).project
        first = records.add(db, Draft(type="decision", title="Use REST for the internal API",
                                      body="JSON over HTTP.", valid_from="2026-01-05"),
                            project_id=project.id)
        records.supersede(db, first.id, Draft(type="", title="Use gRPC for the internal API",
                                              body="protobuf", valid_from="2026-03-01"),
                          "REST was too slow", actor="cli")
        pref = records.add(db, Draft(type="preference", title="Prefers pytest fixtures",
                                     scope="global", confidence="reinforced"), project_id="x")
        node = graph.ensure_node(db, project.id, "file", "src/api.py")
        graph.link_record(db, pref.id, node)
        sessions.ensure(db, "s-1", project.id, cwd=str(root))
        sessions.add_receipt(db, session_id="s-1", project_id=project.id, event="SessionStart",
                             record_ids=[first.id], scores=[1.0], tokens=12, chars=40)
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db.execute("PRAGMA journal_mode = DELETE")
        db.execute("VACUUM")
        db.close()
        out = Path(__file__).parent / "fixtures" / "store_v1.db"
        out.write_bytes((Path(tmp) / "v1.db").read_bytes())
    print(f"wrote {out} (SQLite {sqlite3.sqlite_version})", file=sys.stderr)


if __name__ == "__main__":
    main()
