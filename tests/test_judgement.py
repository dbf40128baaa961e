"""The per-prompt judgement (agentctx.context.judgement): one decision for the hook, preview and the
benchmarks — every candidate's outcome, the composed text, and the settings it runs on."""

from __future__ import annotations

from pathlib import Path

from agentctx.benchmarks import retrieval
from agentctx.context import injection, judgement
from agentctx.context.judgement import CAPPED, CUT, INJECT, POINTER, SEEN, WEAK
from agentctx.core import config
from agentctx.store import Store, projects, records, sessions
from agentctx.store.models import Draft, Hit
from tests.hooks.conftest import at, payloads, run_hook

DEFAULTS = judgement.settings(config.Config({}, environ={}))


def _add(db: Store, project_id: str, type_: str, title: str, body: str = "") -> str:
    return records.add(db, Draft(type=type_, title=title, body=body),
                       project_id=project_id).id


def test_settings_come_from_the_configuration_clamped_to_the_laws() -> None:
    knobs = judgement.settings(config.Config(
        {"prompt_records": 3, "prompt_tokens": 2000, "injection_chars": 8000,
         "prompt_full_confidence": 0.5, "prompt_pointer_confidence": 0.25,
         "prompt_semantic_check": False, "search": "like", "prompt_pointers": False},
        environ={"AGENTCTX_PROMPT_RECORDS": "2"}))
    assert knobs == judgement.Settings(0.5, 0.25, 2, 2000, 8000, False, "like", False)
    assert "prompt_records=2" in knobs.describe() and "search=like" in knobs.describe()
    oversized = DEFAULTS._replace(max_records=50, max_tokens=10**6, max_chars=10**6,
                                  full_confidence=0.0, pointer_confidence=0.0)
    with Store.open(Path(config.home()) / "s.db") as db:
        for n in range(6):
            _add(db, "p", "decision", f"Billing cache rule {n}", "x" * 3000)
        decision = judgement.decide(db, "p", "app", "billing cache rule", oversized)
    # Whatever a caller passes, the laws hold: 3 records, 2,000 tokens, 8,000 characters.
    assert 0 < len(decision.shown) <= config.PROMPT_MAX_RECORDS
    assert len(decision.text) <= config.INJECTION_MAX_CHARS


def test_a_changed_fact_is_injected_with_what_it_replaces(tmp_path: Path) -> None:
    with Store.open(tmp_path / "s.db") as db:
        old = records.add(db, Draft(type="decision", title="Errors go to Rollbar",
                                    body="ROLLBAR_TOKEN in the env."), project_id="p")
        new = records.supersede(db, old.id, Draft(type="", title="Errors go to Sentry",
                                                  body="SENTRY_DSN in the env."), "cost",
                                actor="cli")
        chosen = judgement.select(db, "p", "where do I put the rollbar token?", DEFAULTS)
        assert [h.record.id for h in chosen] == [new.id]
        text, _, _ = judgement.compose(chosen, "app", DEFAULTS)
        assert f"[{new.id}]" in text and f"replaces [{old.id}]" in text
        assert "SENTRY_DSN" in text and "ROLLBAR_TOKEN" not in text


def test_every_candidate_gets_its_outcome(tmp_path: Path) -> None:
    """Each reason a candidate is left out is reported; the candidates are a fixed pool, most
    likely first; what is injected is exactly what the hook selects."""
    knobs = judgement.settings(config.Config({"prompt_tokens": 350}, environ={}))._replace(
        full_confidence=0.01, pointer_confidence=0.01)
    with Store.open(tmp_path / "s.db") as db:
        seen = _add(db, "p", "decision", "Billing cache expires hourly")
        strong = [_add(db, "p", "discovery", f"Billing cache expires after {n} minutes",
                       "x" * 600 * n) for n in (1, 2, 3, 4)]
        weak = _add(db, "p", "convention", "Cache keys carry the tenant id")
        decision = judgement.decide(db, "p", "app", "billing cache expires", knobs,
                                    seen={seen})
        selected = judgement.select(db, "p", "billing cache expires", knobs, seen={seen})
        hook_view = judgement.judge(db, "p", "billing cache expires", knobs, seen={seen})
        in_text = set(records.resolve_many(db, injection.ids_in(decision.text)))
    verdicts = decision.verdicts
    outcome = {v.hit.record.id: v.outcome for v in verdicts}
    assert outcome[seen] == SEEN and verdicts[-1].hit.record.id == seen
    chances = [v.probability or 0.0 for v in verdicts if v.outcome != SEEN]
    assert chances == sorted(chances, reverse=True)
    picked = [v.hit.record.id for v in verdicts if v.outcome in (INJECT, CUT)]
    assert [h.record.id for h in selected] == picked and len(picked) == 3
    assert [outcome[r] for r in picked] in ([INJECT, INJECT, CUT], [INJECT, CUT, CUT])
    assert outcome[weak] in (WEAK, CAPPED) and [r for r in strong if outcome[r] == CAPPED] == \
        [r for r in strong if r not in picked]
    assert all(r in in_text for r in picked if outcome[r] == INJECT)
    assert not any(r in in_text for r in picked if outcome[r] == CUT)
    assert [h.record.id for h in decision.injected] == [r for r in picked
                                                        if outcome[r] == INJECT]
    # CUT is the budget's word: the judgement itself picked those in full.
    assert [v.outcome for v in hook_view] == [INJECT if v.outcome == CUT else v.outcome
                                              for v in verdicts]


def test_tiers_full_pointer_and_nothing(tmp_path: Path) -> None:
    """In full from the full confidence, a pointer from the gate, nothing under it."""
    with Store.open(tmp_path / "s.db") as db:
        grpc = _add(db, "p", "decision", "Use gRPC for the internal API", "protobuf in proto/")
        for n in range(12):
            _add(db, "p", "convention", f"Module {n} keeps its fixtures in tests/{n}")
        prompt = "is the internal api grpc?"
        [top] = [v for v in judgement.judge(db, "p", prompt, DEFAULTS) if v.outcome != WEAK]
        chance = top.probability
        assert top.hit.record.id == grpc and chance is not None
        full = judgement.decide(db, "p", "app", prompt, DEFAULTS._replace(
            full_confidence=chance - 1e-6, pointer_confidence=chance - 1e-6))
        pointer = judgement.decide(db, "p", "app", prompt, DEFAULTS._replace(
            full_confidence=chance + 1e-6, pointer_confidence=chance - 1e-6))
        nothing = judgement.decide(db, "p", "app", prompt, DEFAULTS._replace(
            full_confidence=chance + 1e-6, pointer_confidence=chance + 1e-6))
        short = records.short_ids(db, [grpc])[grpc]
    assert [h.record.id for h in full.injected] == [grpc] and "protobuf in proto/" in full.text
    assert [h.record.id for h in pointer.pointers] == [grpc] and not pointer.injected
    assert f"- [{short}] decision · pointer · Use gRPC for the internal API" in pointer.text
    assert "protobuf" not in pointer.text and "may relate" in pointer.text
    assert pointer.verdicts[0].outcome == POINTER
    assert nothing.text == "" and all(v.outcome == WEAK for v in nothing.verdicts)


def test_chat_gets_nothing_and_edits_of_the_code_on_screen_need_more_evidence(
        tmp_path: Path) -> None:
    with Store.open(tmp_path / "s.db") as db:
        _add(db, "p", "decision", "The importer worked after pinning lxml", "lxml 5.2")
        _add(db, "p", "decision", "Retry failed payment webhooks with backoff", "3 tries")
        for n in range(10):
            _add(db, "p", "discovery", f"Service {n} answers on port {8000 + n}")
        chat = judgement.decide(db, "p", "app", "thanks, that worked", DEFAULTS)
        assert chat.text == "" and chat.verdicts == [] and chat.skipped == \
            judgement.OUTCOMES[judgement.CHAT]
        assert judgement.judge(db, "p", "ok, go ahead", DEFAULTS) == []
        edit = judgement.judge(db, "p", "add a retry to this payment webhook", DEFAULTS)
        asked = judgement.judge(db, "p", "how do we retry the payment webhook?", DEFAULTS)
    assert edit[0].hit.record.id == asked[0].hit.record.id
    assert (edit[0].probability or 0) < (asked[0].probability or 0)


def test_the_hook_and_the_benchmarks_inject_what_decide_decides(project_dir: Path) -> None:
    with Store.open() as db:
        project = projects.resolve(db, str(project_dir)).project
        grpc = _add(db, project.id, "decision", "Use gRPC instead of REST for the internal API",
                    "REST was too chatty between services.")
        _add(db, project.id, "convention", "Internal API errors carry a request id")
        _add(db, project.id, "bugfix", "Login page crashed on empty passwords")
    prompt = "why is the internal API gRPC and not REST?"
    with Store.open() as db:
        decision = judgement.decide(db, project.id, project.name, prompt, DEFAULTS)
        benchmark = retrieval.hook_injection(db, prompt, project.id, project.name,
                                             config.Config({}, environ={}))
    assert grpc in [h.record.id for h in decision.injected]
    assert benchmark.text == decision.text
    payload = at(payloads("UserPromptSubmit")[0], project_dir, prompt=prompt)
    assert run_hook("prompt", payload).context == decision.text
    with Store.open() as db:
        [receipt] = sessions.receipts(db, str(payload["session_id"]))
    assert list(receipt.record_ids) == [h.record.id for h in decision.shown]
    assert receipt.scores == tuple(h.relevance for h in decision.shown)
    assert list(receipt.pointers) == [h.record.id for h in decision.pointers]


def test_an_opted_out_or_empty_prompt_gets_nothing(tmp_path: Path) -> None:
    assert judgement.opted_out("  #NOCTX why is the api grpc?")
    assert not judgement.opted_out("why is the api grpc? #noctx")
    with Store.open(tmp_path / "s.db") as db:
        _add(db, "p", "decision", "Use gRPC")
        assert judgement.decide(db, "p", "app", "   ", DEFAULTS) == \
            judgement.Decision([], "", [], [])
        assert judgement.semantic_check_state(db, DEFAULTS) == (
            "not ready (run 'agentctx consolidate')")
        assert judgement.semantic_check_state(db, DEFAULTS._replace(semantic_check=False)) == \
            "off"


def test_one_accidental_shared_word_never_brings_a_record_in_full(tmp_path: Path) -> None:
    """A single matched word of low relevance, unsupported by meaning, is capped at a pointer
    whatever its probability; the same hit among the nearest by meaning is not accidental."""
    with Store.open(tmp_path / "s.db") as db:
        record = records.get(db, _add(db, "p", "convention", "API errors are problem+json"))
        weak = judgement.Verdict(Hit(record, 3.0, 0.09, ("base",)), WEAK, 0.1, 0.34)
        found = judgement.Candidates([weak.hit], [0.1], [0], 8, [])
        assert judgement.accidental(weak, found)
        assert not judgement.accidental(weak, found._replace(vector_ranks=[2]))
        assert not judgement.accidental(weak, found._replace(vector_ranks=None))  # no vectors
        two_words = weak._replace(hit=weak.hit._replace(matched=("base", "api")))
        assert not judgement.accidental(two_words, found._replace(hits=[two_words.hit]))
        relevant = weak._replace(hit=weak.hit._replace(relevance=0.5))
        assert not judgement.accidental(relevant, found._replace(hits=[relevant.hit]))


def test_a_confident_first_hit_of_both_sides_is_the_agreed_one(tmp_path: Path) -> None:
    with Store.open(tmp_path / "s.db") as db:
        first = records.get(db, _add(db, "p", "decision", "Payments go through Stripe"))
        other = records.get(db, _add(db, "p", "decision", "Invoices are PDFs"))
        hits = [Hit(first, 5.0, 0.4, ("stripe",)), Hit(other, 0.0, 0.0, ())]
        found = judgement.Candidates(hits, [0.6, 0.5], [1, 2], 3, [])
        assert found.agreed() == first.pk
        assert [found.side(0), found.side(1)] == ["both", "meaning"]
        assert found._replace(vector_ranks=[2, 1]).agreed() is None  # the sides differ
        assert found._replace(cosines=[0.3, 0.5]).agreed() is None  # not close in meaning
        assert found._replace(hits=[hits[0]._replace(relevance=0.1), hits[1]]).agreed() is None
        assert found._replace(vector_ranks=None, cosines=None).agreed() is None
