"""Project resolution (cached), worktrees, pause and merge."""

from __future__ import annotations

from pathlib import Path

from agentctx.store import Store, graph, projects, records, sessions
from agentctx.store.models import Draft


def add_worktree(main: Path, name: str) -> Path:
    tree = main.parent / name
    tree.mkdir()
    gitdir = main / ".git" / "worktrees" / name
    gitdir.mkdir(parents=True)
    (gitdir / "commondir").write_text("../..\n", encoding="utf-8")
    (tree / ".git").write_text(f"gitdir: {gitdir}\n", encoding="utf-8")
    return tree


def test_subfolders_and_worktrees_share_one_project(store: Store, project_dir: Path) -> None:
    main = projects.resolve(store, str(project_dir))
    sub = projects.resolve(store, str(project_dir / "src"))
    tree = add_worktree(project_dir, "feature")
    other = projects.resolve(store, str(tree))
    assert main.project.id == sub.project.id == other.project.id
    assert main.project.remote == "github.com/acme/app" and main.project.name == "app"
    assert main.worktree == str(project_dir.resolve())
    assert other.worktree == str(tree.resolve()) != main.worktree


def test_two_repos_with_the_same_folder_name_do_not_mix(store: Store, tmp_path: Path) -> None:
    a, b = tmp_path / "one" / "api", tmp_path / "two" / "api"
    a.mkdir(parents=True)
    b.mkdir(parents=True)
    assert projects.resolve(store, str(a)).project.id != projects.resolve(store, str(b)).project.id


def test_pause_and_list(store: Store, project_dir: Path) -> None:
    pid = projects.resolve(store, str(project_dir)).project.id
    records.add(store, Draft(type="decision", title="x"), project_id=pid)
    assert projects.set_paused(store, "app", True).paused
    assert projects.resolve(store, str(project_dir)).project.paused
    [listed] = projects.list_all(store)
    assert listed.project.id == pid and listed.project.paused and listed.records == 1


def test_merge_rehomes_everything(store: Store, tmp_path: Path, project_dir: Path) -> None:
    old_dir = tmp_path / "old-location"
    old_dir.mkdir()
    old = projects.resolve(store, str(old_dir)).project
    new = projects.resolve(store, str(project_dir)).project
    a = records.add(store, Draft(type="decision", title="Use gRPC"), project_id=old.id)
    records.add(store, Draft(type="profile", title="Test: pytest", key="command.test"),
                project_id=old.id)
    newer = records.add(store, Draft(type="profile", title="Test: make test",
                                     key="command.test"), project_id=new.id)
    for pid in (old.id, new.id):
        node = graph.ensure_node(store, pid, "file", "src/main.py")
        graph.link_record(store, a.id, node)
    sessions.ensure(store, "s1", old.id)
    moved = projects.merge(store, old.id, new.id)
    assert moved == 2
    assert records.get(store, a.id).project_id == new.id
    assert sessions.get(store, "s1").project_id == new.id  # type: ignore[union-attr]
    assert records.find_current_by_key(store, new.id, "profile", "command.test") == newer
    assert store.scalar("SELECT count(*) FROM nodes WHERE name = 'src/main.py'") == 1
    assert [item.project.id for item in projects.list_all(store)] == [new.id]
    assert projects.resolve(store, str(old_dir)).project.id == new.id


def test_listing_says_what_each_project_holds_and_cost_a_page_at_a_time(
        store: Store, tmp_path: Path) -> None:
    folders = [tmp_path / name for name in ("alpha", "beta", "gamma")]
    ids = []
    for folder in folders:
        folder.mkdir()
        ids.append(projects.resolve(store, str(folder)).project.id)
    store.execute("UPDATE projects SET last_seen = ? WHERE id = ?", ("2026-01-01", ids[0]))
    alpha = ids[0]
    records.add(store, Draft(type="decision", title="Use gRPC"), project_id=alpha)
    records.add(store, Draft(type="decision", title="Use REST"), project_id=alpha)
    old = records.add(store, Draft(type="convention", title="tabs"), project_id=alpha)
    records.supersede(store, old.id, Draft(type="", title="spaces"), "style guide", actor="cli")
    sessions.ensure(store, "s-1", alpha, started_at="2026-02-01T10:00:00.000Z")
    sessions.ensure(store, "s-2", alpha, started_at="2026-02-03T10:00:00.000Z")
    sessions.add_receipt(store, session_id="s-1", project_id=alpha, event="SessionStart",
                         record_ids=[], scores=[], tokens=300, chars=900)
    sessions.add_receipt(store, session_id="s-2", project_id=alpha, event="UserPromptSubmit",
                         record_ids=[], scores=[], tokens=45, chars=150)

    listed = projects.list_all(store)
    assert projects.count(store) == 3 == len(listed)
    assert listed[-1].project.id == alpha  # seen longest ago: last
    summary = listed[-1]
    assert summary.records == 3 and summary.by_type == {"decision": 2, "convention": 1}
    assert summary.sessions == 2 and summary.last_session == "2026-02-03T10:00:00.000Z"
    assert summary.tokens_injected == 345 and summary.last_seen == "2026-01-01"
    assert listed[0].records == 0 and listed[0].by_type == {} and listed[0].tokens_injected == 0
    pages = [projects.list_all(store, limit=2, offset=start) for start in (0, 2)]
    assert [s.project.id for page in pages for s in page] == [s.project.id for s in listed]


def test_of_folder_finds_a_known_project_without_writing(store: Store, project_dir: Path,
                                                        tmp_path: Path) -> None:
    pid = projects.resolve(store, str(project_dir)).project.id
    before = store.data_version(), projects.count(store)
    deep = project_dir / "src" / "pkg"
    deep.mkdir()
    found = projects.of_folder(store, str(deep))
    assert found is not None and found.id == pid
    stranger = tmp_path / "elsewhere"
    stranger.mkdir()
    assert projects.of_folder(store, str(stranger)) is None
    assert projects.count(store) == before[1]  # nothing created
