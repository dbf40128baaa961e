"""The demo's CLAUDE.md, which states superseded facts almost word for word."""

from __future__ import annotations

from pathlib import Path

from agentctx import demo
from agentctx.drift import scanner
from agentctx.store import Store
from agentctx.store import projects as proj


def test_a_superseded_fact_stated_verbatim_is_contradicted(store: Store, tmp_path: Path) -> None:
    root = tmp_path / "harbor"
    demo.build(store, root)
    project = proj.resolve(store, str(root)).project
    found = scanner.scan(store, project, root)
    by_title = {c.record.title: c for c in found.candidates}
    rest = by_title["Internal API is gRPC served through connect-python"]
    assert rest.kind == scanner.CONTRADICTED and rest.line == 5
    assert rest.old is not None and rest.old.title == "Internal API is REST/JSON between services"
    nose = by_title["Tests run with pytest -n auto (pytest-xdist)"]
    # "Run the tests with `nosetests`." against the title "Tests run with nose".
    assert nose.kind == scanner.CONTRADICTED and nose.line == 6
    assert nose.old is not None and nose.old.title == "Tests run with nose"
