"""Every tool answer stays under the result cap, whatever the records look like (property)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentctx.core.budget import estimate_tokens
from agentctx.mcpserver import service
from agentctx.store import Store, graph, projects, records
from agentctx.store.models import Draft

texts = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")),
                min_size=1, max_size=8000)


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(bodies=st.lists(texts, min_size=1, max_size=20),
       title=st.text(alphabet="abcdefgh wxyz", min_size=1, max_size=300),
       missing=st.lists(st.text(alphabet="0123456789ABCDEFGHJKMNPQRSTVWXYZ", min_size=4,
                                max_size=26), max_size=5))
def test_answers_stay_under_the_cap(store: Store, tmp_path: Path, bodies: list[str], title: str,
                                    missing: list[str]) -> None:
    resolved = projects.resolve(store, str(tmp_path))
    where = service.Where(resolved.project, resolved.worktree)
    if not title.strip():
        return  # a blank title is refused by the store (tested there)
    made = []
    for body in bodies:
        record = records.add(store, Draft(type="discovery", title=title + " cache", body=body),
                             project_id=where.project.id)
        graph.link_record(store, record.id, graph.ensure_node(store, where.project.id, "file",
                                                              "src/cache.py"))
        made.append(record)
    refs = [r.id for r in made][: service.GET_MAX_IDS - len(missing)] + missing
    answers = [
        service.get(store, where, refs),
        service.search(store, where, service.build_query(where, title + " cache", limit=15)),
        service.related(store, where, "src/cache.py"),
    ]
    for answer in answers:
        assert answer
        assert estimate_tokens(answer) <= service.RESULT_MAX_TOKENS
    for line in answers[1].splitlines()[1:]:
        assert estimate_tokens(line) <= 50
