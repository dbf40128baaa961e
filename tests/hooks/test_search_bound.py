"""``Query.min_relevance`` (the prompt hook's threshold) only skips searches nobody would keep.

For any store, prompt and threshold, the hits at or above the threshold are the same with and
without it; with it, a prompt whose terms cannot reach the threshold returns no hits at once.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentctx.store import Store, records
from agentctx.store.models import Draft
from agentctx.store.search import Query, search
from agentctx.store.selection import Selection

WORDS = ["grpc", "rest", "billing", "service", "retry", "webhook", "cache", "login", "queue",
         "redis", "schema", "migration", "token", "deploy", "pytest", "flaky", "timeout"]
PHRASE = st.lists(st.sampled_from([*WORDS, "tomato", "zebra", "please", "the"]), min_size=1,
                  max_size=8).map(" ".join)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("template") / "agentctx.db"
    Store.open(path).close()
    return path


@settings(max_examples=80, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(texts=st.lists(st.tuples(PHRASE, PHRASE), min_size=1, max_size=25), prompt=PHRASE,
       data=st.data())
def test_threshold_keeps_exactly_the_same_hits(template: Path, texts: list[tuple[str, str]],
                                               prompt: str, data: st.DataObject) -> None:
    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder) / "agentctx.db"
        shutil.copy(template, target)
        with Store.open(target) as db:
            with db.write():
                for title, body in texts:
                    records.add(db, Draft(type="decision", title=title, body=body),
                                project_id="p1")
            plain = search(db,
                           Query(prompt, Selection(project_id="p1", include_global=True), limit=3,
                                 backend="fts"))
            # Thresholds right at the hits' relevances exercise the bound's edge.
            threshold = data.draw(st.sampled_from(
                [h.relevance for h in plain] + [0.05, 0.3333, 0.5, 1.0]))
            bounded = search(db,
                             Query(prompt, Selection(project_id="p1", include_global=True), limit=3,
                                   backend="fts", min_relevance=threshold))
    kept = [h for h in plain if h.relevance >= threshold]
    assert [h for h in bounded if h.relevance >= threshold] == kept


def test_unreachable_threshold_skips_the_search(template: Path, tmp_path: Path) -> None:
    target = tmp_path / "agentctx.db"
    shutil.copy(template, target)
    with Store.open(target) as db:
        records.add(db, Draft(type="decision", title="Use gRPC for the billing service"),
                    project_id="p1")
        words = "grpc tomato cucumber lettuce"  # one known term of four
        assert search(db,
                      Query(words, Selection(project_id="p1", include_global=True), backend="fts"))
        assert search(db,
                      Query(words, Selection(project_id="p1", include_global=True), backend="fts",
                            min_relevance=0.5)) == []
