"""The per-prompt judgement: which records a prompt gets, and why the others do not.

One home for the decision the UserPromptSubmit hook makes, so that the hook, ``agentctx preview``,
the retrieval benchmarks and the TUI all see the same one (:func:`decide`):

1. the store's one search on the prompt (:func:`agentctx.store.search.search`);
2. records already injected into this session (``seen``) are left out;
3. at most ``prompt_records`` (≤ 3) hits whose relevance reaches ``prompt_min_relevance``;
4. the semantic check (``prompt_semantic_check``): when the store has vectors and the model's
   query side file, a picked hit under ``SEMANTIC_SURE_RELEVANCE`` whose cosine with the prompt
   is under ``SEMANTIC_MIN_COSINE`` is dropped;
5. :func:`compose` fences what is left within ``prompt_tokens`` (≤ 2,000) tokens and
   ``injection_chars`` (≤ 8,000) characters; a record too long for what is left is cut with a
   ``… ctx_get <id>`` marker, and what does not fit at all is marked :data:`CUT`.

A prompt starting with ``#noctx`` (:func:`opted_out`) gets nothing. Nothing here writes:
receipts, the injected set and access counts are the hook's. The knobs come in as
:class:`Settings` (:func:`settings` reads them from a configuration, clamped to the laws), so a
caller that judges many prompts reads its configuration once. Standard library and the store
only: this module is on the hook path.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from agentctx import config, injection
from agentctx.budget import char_limit, pack, truncate
from agentctx.lean import NamedTuple
from agentctx.store.db import Store
from agentctx.store.models import Hit
from agentctx.store.scoring import SEMANTIC_MIN_COSINE, SEMANTIC_SURE_RELEVANCE
from agentctx.store.search import MAX_LIMIT, Query, search
from agentctx.store.textproc import query_terms

OPT_OUT = "#noctx"
# agentctx's own slash commands (the plugin's /agentctx:why, /agentctx:status, …) are about
# agentctx, not the task: they get no injection and leave no receipt, so /agentctx:why explains
# the prompt before it.
OWN_COMMAND = "/agentctx:"


def opted_out(prompt: str) -> bool:
    """Whether the prompt asks for no injection this turn (it starts with ``#noctx``)."""
    return prompt.lstrip().lower().startswith(OPT_OUT)


def own_command(prompt: str) -> bool:
    """Whether the prompt is one of agentctx's own slash commands (``/agentctx:…``)."""
    return prompt.lstrip().lower().startswith(OWN_COMMAND)


class Settings(NamedTuple):
    """The knobs of the per-prompt judgement, as :func:`settings` resolves them."""

    min_relevance: float
    max_records: int
    max_tokens: int
    max_chars: int
    semantic_check: bool = True
    search: str = "fts"  # the search backend (the ``search`` knob)

    def describe(self) -> str:
        """One line naming every knob and its value (for reports)."""
        return (f"prompt_min_relevance={self.min_relevance:g}, prompt_records={self.max_records}, "
                f"prompt_tokens={self.max_tokens}, injection_chars={self.max_chars}, "
                f"prompt_semantic_check={'on' if self.semantic_check else 'off'}, "
                f"search={self.search}")


def settings(cfg: config.Config) -> Settings:
    """The judgement's knobs from ``cfg``, the budgets clamped to the laws."""
    return Settings(
        min_relevance=cfg.get_float("prompt_min_relevance"),
        max_records=min(cfg.get_int("prompt_records"), config.PROMPT_MAX_RECORDS),
        max_tokens=min(cfg.get_int("prompt_tokens"), config.PROMPT_MAX_TOKENS),
        max_chars=min(cfg.get_int("injection_chars"), config.INJECTION_MAX_CHARS),
        semantic_check=cfg.get_bool("prompt_semantic_check"),
        search=cfg.get_str("search"))


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


class Decision(NamedTuple):
    """What the hook injects for a prompt and why: every candidate's verdict (picked records the
    budget leaves no room for marked :data:`CUT`), the exact text, and the hits it shows."""

    verdicts: list[Verdict]
    text: str
    injected: list[Hit]


def decide(db: Store, project_id: str, project_name: str, prompt: str, knobs: Settings, *,
           seen: Collection[str] = (), candidates: int = 0) -> Decision:
    """The per-prompt decision: :func:`judge`, then :func:`compose` of what it picked.

    The hook calls it with ``candidates=0``; a preview passes how many candidates to list.
    """
    verdicts = judge(db, project_id, prompt, knobs, seen, candidates)
    text, shown = compose([v.hit for v in verdicts if v.outcome == INJECT], project_name, knobs)
    injected = {hit.record.id for hit in shown}
    return Decision([v._replace(outcome=CUT) if v.outcome == INJECT and
                     v.hit.record.id not in injected else v for v in verdicts], text, shown)


def select(db: Store, project_id: str, prompt: str, knobs: Settings,
           seen: Collection[str] = ()) -> list[Hit]:
    """The records :func:`judge` picks for ``prompt`` (before the budget), best first."""
    return [v.hit for v in judge(db, project_id, prompt, knobs, seen) if v.outcome == INJECT]


def judge(db: Store, project_id: str, prompt: str, knobs: Settings,
          seen: Collection[str] = (), candidates: int = 0) -> list[Verdict]:
    """Every candidate the hook weighs for ``prompt`` and its outcome, best first.

    With ``candidates`` (for a preview), at least that many are searched for, however weak, and
    the cosine of each is computed; otherwise only what the hook needs is looked at.
    """
    max_records = min(knobs.max_records, config.PROMPT_MAX_RECORDS)
    if max_records <= 0 or not prompt.strip():
        return []
    threshold = knobs.min_relevance
    hits = search(db, Query(text=prompt, project_id=project_id,
                            limit=min(MAX_LIMIT, max(candidates, max_records + len(seen))),
                            min_relevance=0.0 if candidates else threshold,
                            backend=knobs.search))
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
    if (weak_pick or (candidates and verdicts)) and knobs.semantic_check:
        verdicts = _semantic_check(db, prompt, verdicts, every=bool(candidates))
    return verdicts


def semantic_check_state(db: Store, knobs: Settings) -> str:
    """Whether the semantic check would run on this store: ``off``, ``not ready (…)`` or ``on``."""
    from agentctx.store import querymodel

    if not knobs.semantic_check:
        return "off"
    side = querymodel.open_registered(db)
    if side is None:
        return "not ready (run 'agentctx consolidate')"
    side.close()
    return "on"


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


def compose(hits: Sequence[Hit], project_name: str, knobs: Settings) -> tuple[str, list[Hit]]:
    """The fenced injection for ``hits`` within the per-prompt budget, and the hits it shows.

    Entries are added in order while they fit; the first that does not fit whole is cut with a
    ``… ctx_get <id>`` marker (when at least its first line fits) and nothing follows it. The
    laws cap the budget whatever ``knobs`` say.
    """
    if not hits:
        return "", []
    max_tokens = min(knobs.max_tokens, config.PROMPT_MAX_TOKENS)
    max_chars = min(knobs.max_chars, config.INJECTION_MAX_CHARS)
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
