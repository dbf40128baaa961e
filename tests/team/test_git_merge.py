"""Two teammates, two real branches, one ``git merge``: the union merge keeps both records."""

from __future__ import annotations

from pathlib import Path

from agentctx import team
from agentctx.store import Store, records, teamstate
from agentctx.store import projects as proj
from agentctx.store.models import Draft
from agentctx.team.teamfile import parse
from tests.support.gitrepo import git


def _commit_record(db: Store, repo: Path, type_: str, title: str, message: str) -> str:
    shop = proj.resolve(db, str(repo)).project
    rid = records.add(db, Draft(type=type_, title=title, body=f"{title}, in detail."),
                      project_id=shop.id).id
    result = team.after_write(db, shop, repo)
    assert result is not None and result.written
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return rid


def test_two_branches_adding_records_merge_cleanly_and_import(repo: Path,
                                                              tmp_path: Path) -> None:
    alice = Store.open(tmp_path / "alice.db")
    bob = Store.open(tmp_path / "bob.db")
    shop = proj.resolve(alice, str(repo)).project
    shared = records.add(alice, Draft(type="decision", title="Monorepo",
                                      body="One repository."), project_id=shop.id).id
    team.turn_on(alice, shop, repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "team file")
    bob_shop = proj.resolve(bob, str(repo)).project
    team.import_file(bob, bob_shop, repo / team.TEAM_FILE)
    teamstate.enable(bob, bob_shop.id)

    git(repo, "checkout", "-q", "-b", "alice")
    a1 = _commit_record(alice, repo, "decision", "Use gRPC", "alice: gRPC")
    a2 = _commit_record(alice, repo, "convention", "Tabs for indentation", "alice: tabs")
    git(repo, "checkout", "-q", "main")
    git(repo, "checkout", "-q", "-b", "bob")
    team.sync(bob, bob_shop, repo)  # bob's checkout: the file as main has it
    b1 = _commit_record(bob, repo, "decision", "Use Kafka", "bob: kafka")  # same section
    b2 = _commit_record(bob, repo, "convention", "Tests mirror src", "bob: tests")
    b3 = _commit_record(bob, repo, "discovery", "CI is slow on Mondays", "bob: ci")

    merged = git(repo, "merge", "--no-edit", "-q", "alice", check=False)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert "CONFLICT" not in merged.stdout
    text = (repo / team.TEAM_FILE).read_text(encoding="utf-8")
    parsed = parse(text)
    assert {b.id for b in parsed.blocks} == {shared, a1, a2, b1, b2, b3}

    report = team.import_file(bob, bob_shop, repo / team.TEAM_FILE)
    assert set(report.added) == {a1, a2} and report.conflicts == ()
    assert team.sync(bob, bob_shop, repo).written  # re-sorted into the canonical order
    assert team.status(bob, bob_shop, repo).in_step
    alice.close()
    bob.close()


def test_both_editing_one_record_converges_on_the_higher_revision(repo: Path,
                                                                 tmp_path: Path) -> None:
    alice = Store.open(tmp_path / "alice.db")
    bob = Store.open(tmp_path / "bob.db")
    shop = proj.resolve(alice, str(repo)).project
    rid = records.add(alice, Draft(type="decision", title="Cache for 60 s"),
                      project_id=shop.id).id
    team.turn_on(alice, shop, repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "team file")
    bob_shop = proj.resolve(bob, str(repo)).project
    team.import_file(bob, bob_shop, repo / team.TEAM_FILE)
    teamstate.enable(bob, bob_shop.id)

    git(repo, "checkout", "-q", "-b", "alice")
    records.update(alice, rid, body="Alice: 60 s is enough.", actor="cli")
    team.sync(alice, shop, repo)
    git(repo, "commit", "-q", "-am", "alice edits")
    git(repo, "checkout", "-q", "main")
    git(repo, "checkout", "-q", "-b", "bob")
    records.update(bob, rid, body="Bob: make it 30 s.", actor="cli")
    records.update(bob, rid, body="Bob: make it 30 s, really.", actor="cli")
    team.sync(bob, bob_shop, repo)
    git(repo, "commit", "-q", "-am", "bob edits")
    git(repo, "merge", "--no-edit", "-q", "alice", check=False)
    parsed = parse((repo / team.TEAM_FILE).read_text(encoding="utf-8"))
    assert parsed.duplicates and not parsed.duplicates[0].identical
    # Bob's edit has the higher revision (3 against Alice's 2): both stores converge on it.
    report = team.import_file(bob, bob_shop, repo / team.TEAM_FILE)
    assert report.duplicates and report.conflicts == () and report.changes == 0
    assert records.get(bob, rid).body == "Bob: make it 30 s, really."
    taken = team.import_file(alice, shop, repo / team.TEAM_FILE)
    assert taken.updated == (rid,) and records.get(alice, rid).body == "Bob: make it 30 s, really."
    assert team.sync(bob, bob_shop, repo).written  # the duplicate is gone once rewritten
    assert len(parse((repo / team.TEAM_FILE).read_text(encoding="utf-8")).duplicates) == 0
    alice.close()
    bob.close()
