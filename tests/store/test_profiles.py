"""The developer's preferences and a project's profile, as the store hands them out."""

from __future__ import annotations

from pathlib import Path

from agentctx.store import Store, profiles, projects, records, sessions, upkeep
from agentctx.store.models import Draft


def test_preferences_with_category_origin_and_pages(store: Store, project_dir: Path) -> None:
    project = projects.resolve(store, str(project_dir)).project
    sessions.ensure(store, "s-1", project.id)
    learned = records.add(store, Draft(type="preference", title="Prefers pytest fixtures",
                                       body="Category: testing.", scope="global",
                                       source="llm_extraction", session_id="s-1",
                                       confidence="reinforced", reinforce_count=3),
                          project_id=project.id)
    stated = records.add(store, Draft(type="preference", title="Answers in English",
                                      body="Always.", scope="global", confidence="explicit"),
                         project_id="x")
    gone = records.add(store, Draft(type="preference", title="Prefers tabs", scope="global",
                                    body="Category: style."), project_id="x")
    upkeep.retire(store, gone.id, "switched to spaces", actor="cli")
    records.add(store, Draft(type="decision", title="Not a preference"), project_id=project.id)

    found = profiles.preferences(store)
    assert [p.record.id for p in found] == [stated.id, learned.id]  # explicit first
    assert profiles.count_preferences(store) == 2
    first, second = found
    assert (second.category, second.learned_in, second.learned_in_name) == (
        "testing", project.id, "app")
    assert second.record.reinforce_count == 3 and second.record.confidence == "reinforced"
    assert (first.category, first.learned_in) == (None, None)
    everything = profiles.preferences(store, include_superseded=True)
    assert profiles.count_preferences(store, include_superseded=True) == 3 == len(everything)
    assert everything[-1].category == "style" and not everything[-1].record.current
    assert [p.record.id for p in profiles.preferences(store, limit=1, offset=1)] == [learned.id]


def test_category_is_read_only_from_the_start_of_the_body() -> None:
    assert profiles.category_of("Category: code style.") == "code style"
    assert profiles.category_of("Category: testing.\nmore") == "testing"
    assert profiles.category_of("Prefers it. Category: x.") is None
    assert profiles.category_of("") is None


def test_project_profile_in_its_display_order(store: Store) -> None:
    for key, title in (("entry_points", "Entry: app.main"), ("command.lint", "Lint: ruff"),
                       ("stack", "Stack: python"), ("command.test", "Test: pytest"),
                       ("name", "Name: app"), ("zz.custom", "Custom")):
        records.add(store, Draft(type="profile", key=key, title=title, source="detection"),
                    project_id="p")
    assert [r.key for r in profiles.project_profile(store, "p")] == [
        "name", "stack", "command.test", "command.lint", "entry_points", "zz.custom"]
