"""prompt (UserPromptSubmit): relevant unseen records within budget, receipts, recent prompts."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentctx.context import injection
from agentctx.ops import find
from agentctx.store import Store, projects, records, sessions
from agentctx.store.models import Draft
from agentctx.store.search import Query
from agentctx.store.selection import Selection
from tests.hooks.conftest import SESSION, at, payloads, run_hook
from tests.support import shown

# The 2.1.328 prompts are short and mix instructions with topic words; lower confidences than the
# defaults make these tests about the hook, not about the judgement's thresholds.
LOW = {"AGENTCTX_PROMPT_FULL_CONFIDENCE": "0.1", "AGENTCTX_PROMPT_POINTER_CONFIDENCE": "0.05"}


def _project(app: Path) -> str:
    with Store.open() as db:
        return projects.resolve(db, str(app)).project.id


def _add(project_id: str, type_: str, title: str, body: str = "", **fields: object) -> str:
    with Store.open() as db:
        return records.add(db, Draft(type=type_, title=title, body=body,
                                     **fields),  # type: ignore[arg-type]
                           project_id=project_id).id


def _kept_prompts(db: Store, session_id: str = SESSION) -> list[dict[str, str]]:
    """The session's recent prompts, as the hook kept them."""
    session = sessions.get(db, session_id)
    assert session is not None
    kept = session.meta.get("prompts", [])
    assert isinstance(kept, list)
    return kept


def _prompt(app: Path, text: str, session: str = SESSION,
            env: dict[str, str] | None = None) -> str:
    payload = at(payloads("UserPromptSubmit")[0], app, prompt=text, session_id=session)
    return run_hook("prompt", payload, env=env).context


def test_relevant_record_is_injected_fenced_with_receipt(app: Path) -> None:
    pid = _project(app)
    grpc = _add(pid, "decision", "Use gRPC instead of REST for the internal API",
                "REST was too chatty between services.", confidence="explicit")
    _add(pid, "bugfix", "Login page crashed on empty passwords")
    real = payloads("UserPromptSubmit")[0]  # "We decided to use gRPC instead of REST …"
    text = run_hook("prompt", at(real, app), env=LOW).context
    lines = text.splitlines()
    assert lines[0].startswith('<agentctx-context event="prompt"')
    assert "not instructions" in lines[1] and lines[-1] == "</agentctx-context>"
    # the store's short id, the type, the title: no "explicit", no date
    assert shown.names(lines[2], grpc) and lines[2].endswith(
        "] decision · Use gRPC instead of REST for the internal API")
    assert len(injection.ids_in(lines[2])[0]) < len(grpc)
    assert "  REST was too chatty between services." in lines
    assert "Login page" not in text
    with Store.open() as db:
        receipt = sessions.receipts(db, SESSION)[-1]
        assert receipt.event == "UserPromptSubmit" and receipt.record_ids == (grpc,)
        assert len(receipt.scores) == 1 and 0.2 <= receipt.scores[0] <= 1
        # The receipt says why: the prompt's first words and the words the record matched.
        assert receipt.prompt == " ".join(str(real["prompt"]).split())[:80]
        [item] = receipt.items
        assert item.record_id == grpc and item.score == receipt.scores[0]
        assert {"grpc", "rest"} <= set(item.matched)
        assert receipt.chars == len(text) and receipt.tokens == -(-2 * len(text) // 7)
        assert sessions.seen(db, SESSION) == {grpc}
        assert records.get(db, grpc).access_count == 1
        assert _kept_prompts(db)[-1]["text"] == real["prompt"]


def test_a_receipt_keeps_only_the_redacted_start_of_the_prompt(app: Path) -> None:
    pid = _project(app)
    _add(pid, "decision", "Deploy tokens live in the vault", "rotate monthly")
    secret = "ghp_" + "a1B2" * 9
    prompt = (f"deploy   token {secret} in the vault: do deploy tokens rotate monthly? "
              + "the vault deploy tokens " * 200)
    # The token is a word no record has: it weighs a lot, hence the very low threshold here.
    injected = _prompt(app, prompt, env={"AGENTCTX_PROMPT_FULL_CONFIDENCE": "0.01",
                                         "AGENTCTX_PROMPT_POINTER_CONFIDENCE": "0.01"})
    assert "Deploy tokens live in the vault" in injected
    with Store.open() as db:
        [receipt] = sessions.receipts(db, SESSION)
        assert receipt.prompt is not None and len(receipt.prompt) == 80
        assert receipt.prompt.startswith("deploy token [REDACTED:github-token]")
        assert secret not in receipt.prompt and secret[:10] not in receipt.prompt
        assert receipt.items[0].matched


def test_already_injected_records_are_not_repeated(app: Path) -> None:
    pid = _project(app)
    _add(pid, "decision", "Use gRPC for the internal API")
    assert "Use gRPC" in _prompt(app, "grpc internal api")
    assert _prompt(app, "grpc internal api") == ""
    assert "Use gRPC" in _prompt(app, "grpc internal api", session="another-session")


def test_digest_records_count_as_seen(app: Path) -> None:
    pid = _project(app)
    _add(pid, "decision", "Use gRPC for the internal API")
    start = at(payloads("SessionStart")[0], app)
    assert "Use gRPC" in run_hook("session-start", start).context
    assert _prompt(app, "grpc internal api") == ""


def test_unrelated_prompt_injects_nothing(app: Path) -> None:
    pid = _project(app)
    _add(pid, "decision", "Use gRPC for the internal API")
    assert _prompt(app, "rename this variable to something clearer") == ""
    assert _prompt(app, "") == ""
    with Store.open() as db:
        assert sessions.receipts(db, SESSION) == []
        assert len(_kept_prompts(db)) == 1


def test_confidence_thresholds_apply(app: Path) -> None:
    pid = _project(app)
    grpc = _add(pid, "decision", "Use gRPC for the internal API")
    for n in range(8):
        _add(pid, "convention", f"Vegetable {n} is stored in crate {n}")
    # One term of four matches, the others are words no record has: too weak for anything.
    assert _prompt(app, "grpc tomato cucumber lettuce") == ""
    pointed = _prompt(app, "grpc tomato cucumber lettuce", session="s2",
                      env={"AGENTCTX_PROMPT_POINTER_CONFIDENCE": "0.0001"})
    assert shown.line_of(pointed, grpc).endswith(
        "] decision · pointer · Use gRPC for the internal API")
    full = _prompt(app, "grpc tomato cucumber lettuce", session="s3",
                   env={"AGENTCTX_PROMPT_FULL_CONFIDENCE": "0.0001",
                        "AGENTCTX_PROMPT_POINTER_CONFIDENCE": "0.0001"})
    assert shown.line_of(full, grpc).endswith(
        "] decision · inferred · Use gRPC for the internal API")
    assert "pointer" not in full
    with Store.open() as db:
        [receipt] = sessions.receipts(db, "s2")
        assert receipt.pointers == (grpc,) and receipt.items[0].pointer
        assert sessions.seen(db, "s2") == frozenset()  # a pointer may still come in full
        assert sessions.seen(db, "s3") == {grpc}
    assert _prompt(app, "grpc tomato cucumber lettuce", session="s4",
                   env={"AGENTCTX_PROMPT_POINTER_CONFIDENCE": "0.0001",
                        "AGENTCTX_PROMPT_POINTERS": "off"}) == ""


def test_at_most_three_records(app: Path) -> None:
    pid = _project(app)
    for n in range(6):
        _add(pid, "discovery", f"The billing cache expires after {n + 1} minutes")
    text = _prompt(app, "billing cache expires")
    assert text.count("\n- [") == 3
    assert _prompt(app, "billing cache expires", session="s2",
                   env={"AGENTCTX_PROMPT_RECORDS": "1"}).count("\n- [") == 1


def test_long_record_is_cut_with_a_ctx_get_marker(app: Path) -> None:
    pid = _project(app)
    first = _add(pid, "decision", "Billing cache layout", "layout " * 1000)
    second = _add(pid, "convention", "Billing cache keys", "keys " * 1100)
    text = _prompt(app, "billing cache")
    assert len(text) <= 7000 and -(-2 * len(text) // 7) <= 2000
    assert shown.cut_marker_names(text, second) or shown.cut_marker_names(text, first)
    assert text.endswith("</agentctx-context>")
    with Store.open() as db:
        injected = sessions.receipts(db, SESSION)[-1].record_ids
    assert set(injected) <= {first, second} and injected


def test_noctx_prompt_gets_nothing(app: Path) -> None:
    pid = _project(app)
    _add(pid, "decision", "Use gRPC for the internal API")
    assert _prompt(app, "#noctx grpc internal api") == ""
    assert _prompt(app, "  #NOCTX grpc internal api") == ""
    with Store.open() as db:
        assert sessions.receipts(db, SESSION) == []
        assert sessions.seen(db, SESSION) == set()
    assert "Use gRPC" in _prompt(app, "grpc internal api")


def test_prompt_is_kept_redacted_and_capped(app: Path) -> None:
    _project(app)
    secret = "ghp_" + "a1B2" * 10
    for n in range(25):
        _prompt(app, f"deploy step {n} with token {secret}")
    with Store.open() as db:
        texts = [p["text"] for p in _kept_prompts(db)]
        assert len(texts) == 20 and texts[-1].startswith("deploy step 24")
        assert all(secret not in t and "[REDACTED:github-token]" in t for t in texts)
        pid = projects.resolve(db, str(app)).project.id
        assert sessions.recent_prompts(db, pid, limit=3)[0].startswith("deploy step 24")


def test_paused_project_gets_nothing(app: Path) -> None:
    pid = _project(app)
    _add(pid, "decision", "Use gRPC for the internal API")
    with Store.open() as db:
        projects.set_paused(db, pid, True)
    assert _prompt(app, "grpc internal api") == ""
    with Store.open() as db:
        assert sessions.get(db, SESSION) is None


def test_global_preferences_can_match(app: Path) -> None:
    _project(app)
    _add("global", "preference", "Prefers pytest fixtures over setUp methods", scope="global",
         confidence="reinforced")
    assert "Prefers pytest fixtures" in _prompt(app, "pytest fixtures setup")


def test_a_record_longer_by_its_redaction_markers_is_injected_within_budget(
        tmp_path: Path) -> None:
    from agentctx.context import judgement
    from agentctx.core import config
    from agentctx.core.budget import estimate_tokens
    from agentctx.core.config import Config
    from agentctx.store import Store, records, search
    from agentctx.store.models import Draft

    body = ("Connect with mysql -pS3cr3t7 to the reporting replica. " * 150)[:7990]
    with Store.open(tmp_path / "s.db") as db:
        stored = records.add(db, Draft(type="convention", title="Reporting replica access",
                                       body=body), project_id="p")
        assert len(stored.body) > config.BODY_MAX_CHARS
        knobs = judgement.settings(Config({}, {}))
        chosen = search.search(db,
                               search.Query("reporting replica",
                                            Selection(project_id="p", include_global=True)))
        text, shown, _pointers = judgement.compose(chosen, "app", knobs)
    assert [h.record.id for h in shown] == [stored.id]
    assert len(text) <= config.INJECTION_MAX_CHARS
    assert estimate_tokens(text) <= config.PROMPT_MAX_TOKENS
    assert "S3cr3t7" not in text and f"ctx_get {stored.id}" in text


def test_semantic_check_drops_a_weak_match_whose_meaning_is_elsewhere(
        app: Path, tmp_path_factory: pytest.TempPathFactory,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """With vectors and the query side file, a record matching one word of a prompt about
    something else is left out; strong matches stay; the knob turns the check off."""
    from agentctx.consolidate.run import consolidate
    from agentctx.ml.embedder import forget_loaded, load_model
    from tests.support import tiny_model

    folder = tiny_model.build_wordpiece(tmp_path_factory.mktemp("models") / "wordpiece")
    monkeypatch.setenv("AGENTCTX_EMBED_MODEL", str(folder))
    pid = _project(app)
    deploy = _add(pid, "decision", "Deploy to staging with docker",
                  "Release images are built by the deploy job.")
    components = _add(pid, "convention", "React components live in one folder per component",
                      "Styles are css modules next to each react component.")
    browsers = _add(pid, "convention", "Browser support: the last two versions",
                    "css grid is fine in every supported browser.")
    _add(pid, "decision", "Frontend state in react context", "No redux; react context only.")
    try:
        with Store.open() as db:
            assert consolidate(db, model=load_model(), judge=None).query_model == "written"
    finally:
        forget_loaded()
    prompt = "docker image for the react css browser component"
    checked = _prompt(app, prompt)
    assert shown.names(checked, components) and shown.names(checked, browsers)
    assert not shown.names(checked, deploy)  # matched "docker" only: relevance 0.39, cos 0.27
    unchecked = _prompt(app, prompt, session="no-check",
                        env={"AGENTCTX_PROMPT_SEMANTIC_CHECK": "off"})
    assert shown.names(unchecked, deploy) and shown.names(unchecked, components)


def test_a_record_is_found_by_meaning_from_the_moment_it_is_written(
        app: Path, tmp_path_factory: pytest.TempPathFactory,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """After the first consolidation with a model, a record written later gets its vector at
    write time, and a prompt sharing no word with it brings it by meaning alone; before that
    consolidation the hook is keyword-only and the same prompt gets nothing."""
    import json
    import subprocess
    import sys

    from agentctx.consolidate.run import consolidate
    from agentctx.ml.embedder import forget_loaded, load_model
    from tests.support import tiny_model

    folder = tiny_model.build_wordpiece(tmp_path_factory.mktemp("models") / "wordpiece")
    monkeypatch.setenv("AGENTCTX_EMBED_MODEL", str(folder))
    pid = _project(app)
    _add(pid, "decision", "Deploy to staging with docker", "Release images come from the job.")
    _add(pid, "convention", "Login with oauth tokens", "The auth service issues jwt tokens.")
    prompt = "how is coverage measured in ci?"
    assert _prompt(app, prompt, session="before") == ""  # no shared word, no vectors yet
    try:
        with Store.open() as db:
            assert consolidate(db, model=load_model(), judge=None).query_model == "written"
    finally:
        forget_loaded()
    written = _add(pid, "convention", "Unit tests run under pytest with fixtures",
                   "Every test uses pytest fixtures; unittest classes are not used.")
    with Store.open() as db:
        pk = records.get(db, written).pk
        assert db.scalar("SELECT count(*) FROM embeddings WHERE record_pk = ?", (pk,)) == 1
    assert shown.names(_prompt(app, prompt, session="after"), written)
    previewed = subprocess.run([sys.executable, "-m", "agentctx", "preview", prompt, "--json"],
                               capture_output=True, text=True, check=True, cwd=app)
    candidate = next(c for c in json.loads(previewed.stdout)["candidates"]
                     if c["id"] == written)
    assert candidate["found_by"] == "meaning" and candidate["matched"] == []
    assert candidate["outcome"] in ("inject", "pointer")
    with Store.open() as db:  # the one search entry takes the hook's side like any other
        found = find.search(db, Query(prompt, Selection(project_id=pid, include_global=True)),
                            find.hook_vectors(db))
    assert found.mode == "hybrid" and written in [hit.record.id for hit in found.hits]
