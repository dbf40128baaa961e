"""The drift scan on realistic memory files, against a real store."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentctx import drift
from agentctx.context import digest
from agentctx.drift import coverage
from agentctx.drift.scanner import drift_score
from agentctx.store import Store, digests, records
from agentctx.store import drift_state as store_drift
from agentctx.store import projects as proj
from agentctx.store.errors import InvalidRecord, NotFound
from agentctx.store.models import Draft, Project
from tests.drift.conftest import Loaded
from tests.support.tiny_model import TinyModel


def classes(loaded: Loaded, scan: drift.Scan) -> dict[str, str]:
    return {loaded.name_of(c.id): c.kind for c in scan.candidates}


def test_drifted_fixture_is_classified_as_labelled(orders: Loaded) -> None:
    scan = drift.scan_project(orders.db, orders.project, orders.root)
    assert classes(orders, scan) == {
        "ids-uuid": "missing", "auth-jwt": "missing", "pr-size": "missing",
        "tests-pytest": "contradicted", "queue-dramatiq": "contradicted", "db-postgres": "stale"}
    assert scan.flagged == 5 and len(scan.checked) == 12
    by_id = {c.id: c for c in scan.candidates}
    queue = by_id[orders.ids["queue-dramatiq"]]
    assert queue.old is not None and queue.old.id == orders.ids["queue-celery"]
    assert (queue.file, queue.line) == ("CLAUDE.md", 32)
    stale = by_id[orders.ids["db-postgres"]]
    assert stale.replacement is not None and stale.replacement.id == orders.ids["db-postgres-16"]
    assert (stale.file, stale.line) == ("docs/architecture.md", 8)
    # The import cycle (architecture <-> testing) is read once, the missing import reported.
    assert [f.name for f in scan.memory.files] == [
        "CLAUDE.md", "docs/architecture.md", "docs/style.md", "docs/testing.md"]
    assert [m.target for m in scan.memory.missing] == ["missing.md"]


def test_all_present_fixture_flags_nothing(tilekit: Loaded) -> None:
    scan = drift.scan_project(tilekit.db, tilekit.project, tilekit.root)
    assert scan.candidates == ()
    assert len(scan.present) == len(scan.checked) == 11
    assert all(score <= store_drift.FLAGGED for score in scan.scores.values())


def test_scores_are_stored_and_the_digest_goes_stale(orders: Loaded) -> None:
    db = orders.db
    digest.refresh(db, orders.project)
    assert digests.load_fresh(db, orders.project.id) is not None
    before = db.change_counter()
    drift.scan_project(db, orders.project, orders.root)
    assert digests.load_fresh(db, orders.project.id) is None
    assert db.change_counter() == before  # scores are not a "meaningful" change
    flagged = {r.id for r in records.list_records(db, project_id=orders.project.id,
                                                  types=("decision", "convention"))
               if r.claudemd_drift_score > store_drift.FLAGGED}
    assert flagged == {orders.ids[i] for i in ("ids-uuid", "auth-jwt", "pr-size",
                                               "tests-pytest", "queue-dramatiq")}
    served = digest.serve(db, orders.project, str(orders.root))
    assert digest.DRIFT_NOTE.format(count=5, file="CLAUDE.md") in served.text
    assert "--yes" not in served.text


def test_record_false_stores_nothing(orders: Loaded) -> None:
    drift.scan_project(orders.db, orders.project, orders.root, record=False)
    assert all(r.claudemd_drift_score == 0 for r in records.list_records(
        orders.db, project_id=orders.project.id, include_superseded=True))


def test_dismissed_records_are_not_flagged_until_undismissed(orders: Loaded) -> None:
    db, project = orders.db, orders.project
    record, changed = drift.dismiss(db, project, orders.ids["auth-jwt"][:12])
    assert changed and record.id == orders.ids["auth-jwt"]
    assert drift.dismiss(db, project, record.id) == (record, False)
    scan = drift.scan_project(db, project, orders.root)
    assert "auth-jwt" not in classes(orders, scan) and scan.scores[record.id] == 0.0
    drift.undismiss(db, project, record.id)
    assert classes(orders, drift.scan_project(db, project, orders.root))["auth-jwt"] == "missing"


def test_dismissing_a_record_of_another_project_or_type_is_refused(orders: Loaded,
                                                                   tmp_path: Path) -> None:
    db = orders.db
    other = proj.resolve(db, str(tmp_path)).project
    with pytest.raises(InvalidRecord, match="another project"):
        drift.dismiss(db, other, orders.ids["auth-jwt"])
    with pytest.raises(InvalidRecord, match="bugfix"):
        drift.dismiss(db, orders.project, orders.ids["bug-vat-rounding"])
    with pytest.raises(NotFound):
        drift.dismiss(db, orders.project, "01ZZZZZZZZZZ")


# ----------------------------------------------------------------------------- small cases


def project_with(db: Store, root: Path, text: str) -> Project:
    root.mkdir(parents=True, exist_ok=True)
    (root / "CLAUDE.md").write_text(text, encoding="utf-8")
    return proj.resolve(db, str(root)).project


def add(db: Store, project: Project, title: str, body: str = "",
        confidence: str = "explicit") -> str:
    draft = Draft(type="decision", title=title, body=body, confidence=confidence)
    return records.add(db, draft, project_id=project.id).id


def test_a_negated_old_version_is_not_stated(store: Store, tmp_path: Path) -> None:
    project = project_with(store, tmp_path / "p", "# Tests\n\nWe don't run nose any more.\n")
    old = add(store, project, "Run the tests with nose", "nosetests -v")
    new = records.supersede(store, old, Draft(type="", title="Run the tests with pytest",
                                              body="pytest -q", confidence="explicit"),
                            "nose is unmaintained").id
    scan = drift.scan_project(store, project, tmp_path / "p")
    assert [(c.id, c.kind) for c in scan.candidates] == [(new, "missing")]


def test_the_old_version_beside_the_new_one_is_stale(store: Store, tmp_path: Path) -> None:
    project = project_with(store, tmp_path / "p",
                           "# DB\n\n- We run Postgres 16 in every environment.\n\n"
                           "## History\n\nThe database is Postgres 15 on RDS.\n")
    old = add(store, project, "Postgres 15 on RDS")
    new = records.supersede(store, old, Draft(type="", title="Postgres 16 in every environment",
                                              confidence="explicit"), "upgrade").id
    scan = drift.scan_project(store, project, tmp_path / "p")
    assert new in scan.present
    [stale] = scan.candidates
    assert (stale.id, stale.kind, stale.line) == (old, "stale", 7)
    assert stale.replacement is not None and stale.replacement.id == new


def chain(db: Store, project: Project, *versions: tuple[str, str]) -> list[str]:
    """Records superseding each other in order; returns their ids, oldest first."""
    ids = [add(db, project, *versions[0])]
    for title, body in versions[1:]:
        ids.append(records.supersede(db, ids[-1], Draft(type="", title=title, body=body,
                                                        confidence="explicit"), "changed").id)
    return ids


BILLING = ("Billing code lives in harbor/billing/",
           "Invoices, refunds and payouts go in harbor/billing/.")
PAYMENTS = ("Payment code lives in harbor/payments/ (renamed from billing/)",
            "harbor/billing/ was renamed to harbor/payments/; refunds are in "
            "harbor/payments/refunds.py.")


@pytest.mark.parametrize("line", [
    "- Billing code lives in `harbor/billing/`.",
    "- Put invoices in `harbor/billing/`.",
    "| Billing | `harbor/billing/` |",
])
def test_an_old_path_the_replacement_names_as_history_is_contradicted(
        store: Store, tmp_path: Path, line: str) -> None:
    """The replacement's title repeats "billing/" only to say it was renamed."""
    header = "| Code | Where |\n|---|---|\n" if line.startswith("|") else ""
    project = project_with(store, tmp_path / "p", f"# harbor\n\n{header}{line}\n")
    old, new = chain(store, project, BILLING, PAYMENTS)
    [found] = drift.scan_project(store, project, tmp_path / "p").candidates
    assert (found.id, found.kind, found.stated, found.line) == (
        new, "contradicted", old, 5 if header else 3)


def test_a_rename_told_as_history_states_the_new_version(store: Store, tmp_path: Path) -> None:
    project = project_with(store, tmp_path / "p", "# harbor\n\nharbor/billing/ was renamed to "
                           "harbor/payments/ in 2024; payment code lives there.\n")
    _old, new = chain(store, project, BILLING, PAYMENTS)
    scan = drift.scan_project(store, project, tmp_path / "p")
    assert scan.candidates == () and new in scan.present


@pytest.mark.parametrize("text", [
    "- Run the tests with nose.", "- Run the tests with `nosetests`.",
    "- Run the tests with nosetests -v.", "Tests: `nosetests` from the root."])
def test_an_old_tool_in_backticks_or_inflected_is_contradicted(store: Store, tmp_path: Path,
                                                                text: str) -> None:
    project = project_with(store, tmp_path / "p", f"# Testing\n\n{text}\n")
    old, new = chain(store, project, ("Tests run with nose", "Run `nosetests` from the root."),
                     ("Tests run with pytest", "Run `pytest`; fixtures live in conftest.py."))
    [found] = drift.scan_project(store, project, tmp_path / "p").candidates
    assert (found.id, found.kind, found.stated) == (new, "contradicted", old)


def test_a_command_only_the_old_version_has_in_backticks_is_stale(store: Store,
                                                                   tmp_path: Path) -> None:
    project = project_with(store, tmp_path / "p", (
        "# Firmware\n\n## Build, flash, debug\n\n```bash\nwest build -b thermo_v2 app\n"
        "west flash\n```\n\nAfter a clean checkout you can also just run `make flash`.\n"))
    old, new = chain(store, project, ("Build with a Makefile",
                                      "Build with the GNU Makefile and arm-none-eabi-gcc: make "
                                      "all, make flash."),
                     ("Build and flash with west",
                      "Build with `west build -b thermo_v2 app` and flash with `west flash`."))
    scan = drift.scan_project(store, project, tmp_path / "p")
    assert new in scan.present
    assert [(c.kind, c.stated, c.line) for c in scan.candidates] == [("stale", old, 10)]


def test_both_older_versions_stated_give_one_candidate_each(store: Store, tmp_path: Path) -> None:
    project = project_with(store, tmp_path / "p", "# Tooling\n\n- Task runner: Nx, cached in Nx "
                           "Cloud.\n\n## Packages\n\nBuilds are orchestrated by Lerna.\n")
    lerna, nx, turbo = chain(
        store, project, ("Builds orchestrated by Lerna", "Builds are orchestrated by Lerna."),
        ("Task running with Nx", "CI runs nx affected, cached in Nx Cloud."),
        ("Task running with Turborepo", "turbo.json defines the pipelines; CI runs turbo run."))
    scan = drift.scan_project(store, project, tmp_path / "p")
    assert sorted((c.id, c.kind, c.stated, c.line) for c in scan.candidates) == sorted([
        (turbo, "contradicted", nx, 3), (turbo, "contradicted", lerna, 7)])
    assert scan.flagged == 1


def test_a_title_stated_in_other_words_is_present(store: Store, tmp_path: Path) -> None:
    project = project_with(store, tmp_path / "p", "# harbor\n\n- Store money as integer "
                           "cents.\n")
    rid = add(store, project, "Money is stored as integer cents, never floats",
              "Amounts are `int` cents in Python and BIGINT in Postgres; formatting happens at "
              "the edges only.")
    scan = drift.scan_project(store, project, tmp_path / "p")
    assert rid in scan.present and scan.candidates == ()


@pytest.mark.parametrize("text", [
    "Keep code TSLint-clean as well: no `tslint:disable` without a comment.",
    "Airflow was retired in Q1 2024; there is no dags/ folder any more.",
])
def test_history_and_stale_text_are_told_apart(store: Store, tmp_path: Path, text: str) -> None:
    project = project_with(store, tmp_path / "p", f"# Notes\n\n- Lint with ESLint flat config "
                           f"and run pipelines as Dagster assets.\n- {text}\n")
    old_lint, _ = chain(store, project, ("Lint with TSLint", "tslint.json at the root."),
                        ("Lint with ESLint flat config", "eslint.config.js; no TSLint."))
    chain(store, project, ("Pipelines orchestrated with Airflow",
                          "Each pipeline is an Airflow DAG in dags/."),
          ("Pipelines are Dagster assets", "Dagster assets in assets/."))
    scan = drift.scan_project(store, project, tmp_path / "p")
    stale = [c.stated for c in scan.candidates]
    assert stale == ([old_lint] if "tslint" in text else [])


def test_a_retired_record_still_stated_is_stale_without_replacement(store: Store,
                                                                    tmp_path: Path) -> None:
    project = project_with(store, tmp_path / "p", "# Ops\n\nDeploy on Fridays at 16:00 sharp.\n")
    retired = add(store, project, "Deploy on Fridays at 16:00")
    store.execute("UPDATE records SET superseded_at = valid_from WHERE id = ?", (retired,))
    [stale] = drift.scan_project(store, project, tmp_path / "p").candidates
    assert (stale.id, stale.kind, stale.replacement) == (retired, "stale", None)


def test_an_id_comment_states_its_record_whatever_the_words(store: Store, tmp_path: Path) -> None:
    project = project_with(store, tmp_path / "p", "# Notes\n")
    rid = add(store, project, "Feature flags come from Unleash", "flags named orders.<x>")
    text = f"# Notes\n\n- Something else <!-- agentctx:{rid} -->\n"
    (tmp_path / "p" / "CLAUDE.md").write_text(text, encoding="utf-8")
    scan = drift.scan_project(store, project, tmp_path / "p")
    assert rid in scan.present and scan.candidates == ()


def test_inferred_records_and_other_types_are_not_checked(store: Store, tmp_path: Path) -> None:
    project = project_with(store, tmp_path / "p", "# Notes\n")
    add(store, project, "Maybe use Unleash", confidence="inferred")
    records.add(store, Draft(type="bugfix", title="VAT off by a cent", confidence="explicit"),
                project_id=project.id)
    scan = drift.scan_project(store, project, tmp_path / "p")
    assert scan.checked == () and scan.candidates == ()


def test_no_memory_files_at_all_flags_every_checked_record(store: Store, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    project = proj.resolve(store, str(tmp_path / "empty")).project
    ids = {add(store, project, "Use gRPC for the internal API"),
           add(store, project, "Deploy with Helm charts")}
    scan = drift.scan_project(store, project, tmp_path / "empty")
    assert {c.id for c in scan.candidates if c.kind == "missing"} == ids
    assert scan.memory.files == ()


def test_the_vector_side_finds_a_paraphrase_keywords_miss(store: Store, tmp_path: Path) -> None:
    model = TinyModel()
    project = project_with(store, tmp_path / "p", "# Stack\n\nPersistence: sqlite schema wal.\n")
    rid = add(store, project, "Postgres database storage")
    keyword_only = drift.scan_project(store, project, tmp_path / "p")
    assert [c.id for c in keyword_only.candidates] == [rid]
    with_vectors = drift.scan_project(store, project, tmp_path / "p",
                                      encoder=drift.Embedder(model.name, model.encode))
    assert with_vectors.vectors and rid in with_vectors.present
    match = coverage.measure(with_vectors.memory.units,
                             [coverage.Fact(rid, "Postgres database storage", "")],
                             encoder=model.encode).matches[rid]
    assert match.keyword == 0.0 and match.vector == 1.0


def test_encoder_for_needs_vectors_made_with_the_model(store: Store) -> None:
    from agentctx.store import vectors

    model = TinyModel()
    assert drift.encoder_for(store, model) is None and drift.encoder_for(store, None) is None
    project = proj.resolve(store, "/tmp").project
    add(store, project, "Use gRPC")
    waiting = vectors.pending(store)
    vectors.save(store, model.name, list(zip(waiting, model.encode(["grpc"]), strict=True)))
    assert drift.encoder_for(store, model) is not None


@pytest.mark.parametrize(("cov", "flagged"), [(0.0, True), (0.2, True), (0.449, True),
                                              (0.45, False), (0.7, False), (1.0, False)])
def test_drift_score_is_above_the_flag_line_exactly_when_flagged(cov: float,
                                                                 flagged: bool) -> None:
    score = drift_score(cov, 0.45)
    assert 0.0 <= score <= 1.0
    assert (score > store_drift.FLAGGED) is flagged


def test_the_vector_side_copes_with_nothing_to_compare(store: Store, tmp_path: Path) -> None:
    model = TinyModel()
    embedder = drift.Embedder(model.name, model.encode)
    (tmp_path / "bare").mkdir()
    project = proj.resolve(store, str(tmp_path / "bare")).project
    assert drift.scan_project(store, project, tmp_path / "bare", encoder=embedder).checked == ()
    rid = add(store, project, "Postgres database storage")
    scan = drift.scan_project(store, project, tmp_path / "bare", encoder=embedder)
    assert [c.id for c in scan.candidates] == [rid]
    only_records = project_with(store, tmp_path / "words", "# Notes\n")
    add(store, only_records, "Docker deployment")
    assert len(drift.scan_project(store, only_records, tmp_path / "words",
                                  encoder=embedder).candidates) == 1
