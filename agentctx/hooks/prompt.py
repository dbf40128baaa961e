"""UserPromptSubmit (Tier 2): the few records relevant to this prompt, not yet injected.

The store's one search runs on the prompt; records already injected into this session (by the
digest or earlier turns) are left out; at most ``prompt_records`` (≤ 3) records whose relevance
reaches ``prompt_min_relevance`` are injected, so an unrelated prompt injects nothing; when the
store has vectors and the model's query side file, a weak match whose meaning is far from the
prompt is dropped too (the semantic check, ``prompt_semantic_check``). The text
stays within ``prompt_tokens`` (≤ 2,000) tokens and ``injection_chars`` (≤ 8,000) characters: a
record too long for what is left is cut with a ``… ctx_get <id>`` marker. Each injection leaves a
receipt (the prompt's first 80 characters, redacted, and each record's relevance and matched
words), counts one access per record, and the prompt — redacted — joins the session's recent
prompts (consolidation ranks against them). A prompt starting with ``#noctx`` gets nothing that
turn: no injection, no receipt, and the prompt is not kept.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from agentctx import config, injection
from agentctx.budget import char_limit, estimate_tokens, pack, truncate
from agentctx.hooks.common import HookContext
from agentctx.lean import NamedTuple
from agentctx.store import records, sessions
from agentctx.store.db import Store
from agentctx.store.ids import now_iso
from agentctx.store.models import Hit, Project
from agentctx.store.scoring import SEMANTIC_MIN_COSINE, SEMANTIC_SURE_RELEVANCE
from agentctx.store.search import MAX_LIMIT, Query, search
from agentctx.store.textproc import query_terms

EVENT = "UserPromptSubmit"
OPT_OUT = "#noctx"
# Characters of a prompt kept in the session's recent prompts.
PROMPT_KEEP_CHARS = 2000


def opted_out(prompt: str) -> bool:
    """Whether the prompt asks for no injection this turn (it starts with ``#noctx``)."""
    return prompt.lstrip().lower().startswith(OPT_OUT)


def handle(ctx: HookContext) -> str | None:
    """Search, inject and account; returns the text to inject (``None`` for nothing)."""
    prompt = ctx.text("prompt")
    if opted_out(prompt):
        return None
    db = ctx.store()
    project = ctx.resolved().project
    if project.paused:
        return None
    session_id = ctx.session_id
    cfg = ctx.cfg
    chosen = select(db, project.id, prompt, cfg, seen=sessions.seen(db, session_id))
    text, shown = compose(chosen, project.name, cfg)
    keep = cfg.get_int("recent_prompts") if prompt.strip() else 0
    redacted = ""
    if keep > 0 or text:
        from agentctx.redact import redact

        redacted = redact(prompt)
    with db.write():
        sessions.ensure(db, session_id, project.id, cwd=ctx.cwd,
                        transcript_path=ctx.transcript_path)
        if keep > 0:
            sessions.append_meta(db, session_id, "prompts",
                                 {"at": now_iso(), "text": redacted[:PROMPT_KEEP_CHARS]}, keep)
        if text:
            ids = [h.record.id for h in shown]
            sessions.add_receipt(db, session_id=session_id, project_id=project.id, event=EVENT,
                                 record_ids=ids, scores=[h.relevance for h in shown],
                                 tokens=estimate_tokens(text), chars=len(text),
                                 prompt=redacted, matched=[h.matched for h in shown])
            sessions.mark_seen(db, session_id, ids)
            records.touch(db, ids)
    return text or None


class Verdict(NamedTuple):
    """One candidate of the per-prompt selection and what became of it (an ``OUTCOMES`` key)."""

    hit: Hit
    outcome: str
    # The prompt-record cosine, when the semantic check computed it.
    cosine: float | None = None


INJECT, SEEN, WEAK, CAPPED, FAR, CUT = "inject", "seen", "weak", "capped", "far", "cut"
OUTCOMES = {
    INJECT: "injected",
    SEEN: "already injected into this session",
    WEAK: "relevance under prompt_min_relevance",
    CAPPED: "beyond prompt_records",
    FAR: "dropped by the semantic check (meaning far from the prompt)",
    CUT: "no room left in the prompt budget",
}


def select(db: Store, project_id: str, prompt: str, cfg: config.Config,
           seen: Collection[str] = ()) -> list[Hit]:
    """The records to inject for ``prompt``: no side effects, so benchmarks measure exactly this.

    The store's one search; records in ``seen`` left out; at most ``prompt_records`` hits whose
    relevance reaches ``prompt_min_relevance``; then the semantic check (``prompt_semantic_check``)
    drops a hit under ``SEMANTIC_SURE_RELEVANCE`` whose cosine with the prompt is under
    ``SEMANTIC_MIN_COSINE`` — when the store has vectors and the model's query side file.
    """
    return [v.hit for v in judge(db, project_id, prompt, cfg, seen) if v.outcome == INJECT]


def judge(db: Store, project_id: str, prompt: str, cfg: config.Config,
          seen: Collection[str] = (), candidates: int = 0) -> list[Verdict]:
    """Every candidate :func:`select` weighs and its outcome, best first.

    With ``candidates`` (for a preview), at least that many are searched for, however weak, and
    the cosine of each is computed; otherwise only what the hook needs is looked at.
    """
    max_records = min(cfg.get_int("prompt_records"), config.PROMPT_MAX_RECORDS)
    if max_records <= 0 or not prompt.strip():
        return []
    threshold = cfg.get_float("prompt_min_relevance")
    hits = search(db, Query(text=prompt, project_id=project_id,
                            limit=min(MAX_LIMIT, max(candidates, max_records + len(seen))),
                            min_relevance=0.0 if candidates else threshold,
                            backend=cfg.get_str("search")))
    verdicts: list[Verdict] = []
    kept = 0
    for hit in hits:
        if hit.record.id in seen:
            outcome = SEEN
        elif hit.relevance < threshold:
            outcome = WEAK
        elif kept >= max_records:
            outcome = CAPPED
        else:
            outcome, kept = INJECT, kept + 1
        verdicts.append(Verdict(hit, outcome))
    weak_pick = any(v.outcome == INJECT and v.hit.relevance < SEMANTIC_SURE_RELEVANCE
                    for v in verdicts)
    if (weak_pick or (candidates and verdicts)) and cfg.get_bool("prompt_semantic_check"):
        verdicts = _semantic_check(db, prompt, verdicts, every=bool(candidates))
    return verdicts


def preview(db: Store, project: Project, prompt: str, cfg: config.Config, *,
            seen: Collection[str] = (), candidates: int = 5) -> tuple[list[Verdict], str]:
    """What the hook would inject for ``prompt`` in ``project`` and why: every candidate's
    verdict (picked records the budget leaves no room for marked ``CUT``) and the exact text."""
    verdicts = judge(db, project.id, prompt, cfg, seen, candidates)
    text, shown = compose([v.hit for v in verdicts if v.outcome == INJECT], project.name, cfg)
    injected = {hit.record.id for hit in shown}
    return [v._replace(outcome=CUT) if v.outcome == INJECT and v.hit.record.id not in injected
            else v for v in verdicts], text


def _semantic_check(db: Store, prompt: str, verdicts: list[Verdict],
                    every: bool) -> list[Verdict]:
    """Drop picked hits too weak to be sure of whose meaning is far from the prompt; the
    cosines of the picked hits (of ``every`` candidate, for a preview) are kept."""
    from agentctx.store.querymodel import similarities

    targets = [i for i, v in enumerate(verdicts) if every or v.outcome == INJECT]
    cosines = similarities(db, query_terms(prompt),
                           [(verdicts[i].hit.record.pk, verdicts[i].hit.via) for i in targets])
    if cosines is None:
        return verdicts
    checked = list(verdicts)
    for i, cos in zip(targets, cosines, strict=True):
        verdict = verdicts[i]._replace(cosine=cos)
        if verdict.outcome == INJECT and verdict.hit.relevance < SEMANTIC_SURE_RELEVANCE and \
                cos is not None and cos < SEMANTIC_MIN_COSINE:
            verdict = verdict._replace(outcome=FAR)
        checked[i] = verdict
    return checked


def compose(hits: Sequence[Hit], project_name: str,
            cfg: config.Config | None = None) -> tuple[str, list[Hit]]:
    """The fenced injection for ``hits`` within the per-prompt budget, and the hits it shows.

    Entries are added in order while they fit; the first that does not fit whole is cut with a
    ``… ctx_get <id>`` marker (when at least its first line fits) and nothing follows it.
    """
    if not hits:
        return "", []
    cfg = cfg or config.Config.load()
    max_tokens = min(cfg.get_int("prompt_tokens"), config.PROMPT_MAX_TOKENS)
    max_chars = min(cfg.get_int("injection_chars"), config.INJECTION_MAX_CHARS)
    head = injection.header("prompt", project_name)
    foot = injection.FENCE_CLOSE
    used = len(head) + 1 + len(foot)
    limit = char_limit(max_tokens, max_chars)
    entries: list[str] = []
    shown: list[Hit] = []
    for hit in hits:
        entry = injection.item_block(hit.record, replaces=hit.via)
        room = limit - used - 1
        if len(entry) > room:
            marker = f" … ctx_get {hit.record.id}"
            if room < len(injection.item_head(hit.record)) + len(marker):
                break
            entry = truncate(entry, room, marker)
            entries.append(entry)
            shown.append(hit)
            break
        entries.append(entry)
        shown.append(hit)
        used += len(entry) + 1
    packed = pack(entries, max_tokens=max_tokens, max_chars=max_chars, header=head, footer=foot)
    if packed.kept == 0:
        return "", []
    return packed.text, shown[:packed.kept]
