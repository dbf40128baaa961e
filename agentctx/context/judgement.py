"""The per-prompt judgement: which records a prompt gets, in what form, and why the others not.

One home for the decision the UserPromptSubmit hook makes, so that the hook, ``agentctx preview``,
the retrieval benchmarks and the TUI all see the same one (:func:`decide`):

1. the candidates (:func:`candidates`): the store's one search on the prompt
   (:func:`agentctx.store.search.search`), its first :data:`CANDIDATES` hits not yet injected
   into this session (``seen``), and — once consolidation wrote the query side file and the
   vector lists — the prompt's :data:`VECTOR_CANDIDATES` nearest records by meaning
   (:func:`agentctx.store.vecside.nearest`) that the keywords missed: a fixed pool, so what is
   decided never depends on how many a caller wants listed;
2. each candidate's probability of answering the prompt, from the evidence model
   (:mod:`agentctx.context.evidence`): its matched words' weight and share, its meaning against the
   prompt's when consolidation wrote the model's query side file (``prompt_semantic_check``),
   how it stands against the other candidates, whether it is the record now in force for a
   changed fact the prompt names, whether it is dated where the prompt points, and the kind of
   prompt (:mod:`agentctx.context.prompt_kind`: an edit on screen and generic questions need far
   more evidence, and talk about the conversation itself — "thanks", "go ahead", "undo that" — gets
   nothing);
3. **tiers**: nothing at all unless the best candidate reaches ``prompt_pointer_confidence``;
   then, best first and at most ``prompt_records`` (≤ 3) in all, a record is injected **in
   full** when it reaches ``prompt_full_confidence`` and as a one-line **pointer** (id, type,
   title: ``ctx_get <id>`` opens it) when it reaches :data:`POINTER_FLOOR` — so a plausible
   answer costs about 25 tokens, and a wrong guess little;
4. :func:`compose` fences them within ``prompt_tokens`` (≤ 2,000) tokens and
   ``injection_chars`` (≤ 8,000) characters, full records first; a record too long for what is
   left is cut with a ``… ctx_get <id>`` marker, and what does not fit at all is marked
   :data:`CUT`.

A prompt starting with ``#noctx`` (:func:`opted_out`) gets nothing. Nothing here writes:
receipts, the injected set and access counts are the hook's. The knobs come in as
:class:`Settings` (:func:`settings` reads them from a configuration, clamped to the laws), so a
caller that judges many prompts reads its configuration once. Standard library and the store
only: this module is on the hook path.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from agentctx.context import evidence, injection, pathcheck, prompt_kind
from agentctx.core import config
from agentctx.core.budget import char_limit, pack, truncate
from agentctx.core.lean import NamedTuple
from agentctx.store import records as store_records
from agentctx.store.db import Store
from agentctx.store.models import Hit, Project
from agentctx.store.records import by_pks
from agentctx.store.search import MAX_LIMIT, Query, search
from agentctx.store.selection import Selection
from agentctx.store.textproc import query_terms

OPT_OUT = "#noctx"
# Candidates the judgement weighs: the search's first hits not yet injected this session.
CANDIDATES = 10
# The least probability of a pointer beside the best candidate (which opened the gate).
POINTER_FLOOR = 0.05
# The prompt's nearest records by meaning that join the keyword candidates (once consolidation
# wrote the query side file and the vector lists), and the least cosine that counts as meaning.
VECTOR_CANDIDATES = 5
VECTOR_MIN_COSINE = 0.2
# One matched word under this relevance, without the record among the prompt's nearest by
# meaning, is an accidental shared word: never a record in full.
ACCIDENTAL_RELEVANCE = 0.2
ACCIDENTAL_VECTOR_RANK = 3
# The record both sides put first is shown (at least as a pointer) when it is this close in
# meaning and this relevant by keywords: on the tuning prompts 88% of such records answered.
AGREED_COSINE = 0.5
AGREED_RELEVANCE = 0.3
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


def not_judged(prompt: str, project: Project) -> str:
    """Why the hook gives ``prompt`` nothing before any search (``#noctx``, one of agentctx's
    own commands, a paused project), or ``""`` when it is judged."""
    if opted_out(prompt):
        return "the prompt starts with #noctx"
    if own_command(prompt):
        return "the prompt is one of agentctx's own slash commands"
    if project.paused:
        return f"{project.name} is paused ('agentctx resume')"
    return ""


class Settings(NamedTuple):
    """The knobs of the per-prompt judgement, as :func:`settings` resolves them."""

    full_confidence: float
    pointer_confidence: float
    max_records: int
    max_tokens: int
    max_chars: int
    semantic_check: bool = True
    search: str = "fts"  # the search backend (the ``search`` knob)
    pointers: bool = True

    def describe(self) -> str:
        """One line naming every knob and its value (for reports)."""
        return (f"prompt_full_confidence={self.full_confidence:g}, "
                f"prompt_pointer_confidence={self.pointer_confidence:g}, "
                f"prompt_pointers={'on' if self.pointers else 'off'}, "
                f"prompt_records={self.max_records}, prompt_tokens={self.max_tokens}, "
                f"injection_chars={self.max_chars}, "
                f"prompt_semantic_check={'on' if self.semantic_check else 'off'}, "
                f"search={self.search}")


def settings(cfg: config.Config) -> Settings:
    """The judgement's knobs from ``cfg``, the budgets clamped to the laws."""
    return Settings(
        full_confidence=cfg.get_float("prompt_full_confidence"),
        pointer_confidence=cfg.get_float("prompt_pointer_confidence"),
        max_records=min(cfg.get_int("prompt_records"), config.PROMPT_MAX_RECORDS),
        max_tokens=min(cfg.get_int("prompt_tokens"), config.PROMPT_MAX_TOKENS),
        max_chars=min(cfg.get_int("injection_chars"), config.INJECTION_MAX_CHARS),
        semantic_check=cfg.get_bool("prompt_semantic_check"),
        search=cfg.get_str("search"), pointers=cfg.get_bool("prompt_pointers"))


class Verdict(NamedTuple):
    """One candidate of the per-prompt judgement and what became of it (an ``OUTCOMES`` key)."""

    hit: Hit
    outcome: str
    # The prompt-record cosine, when the store has the model's query side file.
    cosine: float | None = None
    # The evidence model's probability that it answers the prompt (None: not weighed).
    probability: float | None = None
    # Which side found it: "keyword", "meaning" (the prompt's nearest records by vector) or
    # "both".
    found_by: str = "keyword"


INJECT, POINTER, SEEN, WEAK, CAPPED, CUT = "inject", "pointer", "seen", "weak", "capped", "cut"
CHAT, STATED = "chat", "stated"
OUTCOMES = {
    INJECT: "injected in full",
    POINTER: "injected as a pointer (ctx_get opens it)",
    SEEN: "already injected into this session",
    WEAK: "too unlikely to answer the prompt",
    CHAT: "the prompt is talk about the conversation (thanks, go ahead, undo that)",
    CAPPED: "beyond prompt_records",
    CUT: "no room left in the prompt budget",
    STATED: "left out: a memory file Claude Code loads already states it",
}


class Decision(NamedTuple):
    """What the hook injects for a prompt and why: every candidate's verdict (picked records the
    budget leaves no room for marked :data:`CUT`), the exact text, and the hits it shows in full
    and as pointers."""

    verdicts: list[Verdict]
    text: str
    injected: list[Hit]
    pointers: list[Hit]
    # Why nothing was weighed at all (the prompt's kind), "" when the candidates were.
    skipped: str = ""
    # Records shown whose named paths are all gone (marked in the text, ranked down), by id.
    gone: dict[str, list[str]] = {}  # noqa: RUF012 - a NamedTuple default, never mutated

    @property
    def shown(self) -> list[Hit]:
        """Every record the text names: full records first, then pointers."""
        return [*self.injected, *self.pointers]


def decide(db: Store, project_id: str, project_name: str, prompt: str, knobs: Settings, *,
           seen: Collection[str] = (), root: str | None = None) -> Decision:
    """The per-prompt decision: :func:`judge`, then :func:`compose` of what it picked.

    With ``root`` (the project folder the session works in), the paths the picked records name
    are checked there (:mod:`agentctx.context.pathcheck`): a record whose paths are all gone comes
    after the others, marked.
    """
    if prompt.strip() and prompt_kind.kind(prompt) == prompt_kind.CHAT:
        return Decision([], "", [], [], OUTCOMES[CHAT])
    verdicts = judge(db, project_id, prompt, knobs, seen)
    picked = [v.hit for v in verdicts if v.outcome in (INJECT, POINTER)]
    gone: dict[str, list[str]] = {}
    if root is not None and picked:
        gone = pathcheck.check(db, root, [h.record for h in picked])
    full_hits = [v.hit for v in verdicts if v.outcome == INJECT]
    full_hits.sort(key=lambda h: h.record.id in gone)  # stable: the others keep their order
    text, full, pointers = compose(
        full_hits, project_name, knobs,
        pointers=[v.hit for v in verdicts if v.outcome == POINTER],
        shorts=short_ids(db, picked), gone=gone)
    shown = {hit.record.id for hit in (*full, *pointers)}
    return Decision([v._replace(outcome=CUT) if v.outcome in (INJECT, POINTER) and
                     v.hit.record.id not in shown else v for v in verdicts], text, full,
                    pointers, gone={k: v for k, v in gone.items() if k in shown})


def select(db: Store, project_id: str, prompt: str, knobs: Settings,
           seen: Collection[str] = ()) -> list[Hit]:
    """The records :func:`judge` picks for ``prompt`` in full (before the budget), best first."""
    return [v.hit for v in judge(db, project_id, prompt, knobs, seen) if v.outcome == INJECT]


def judge(db: Store, project_id: str, prompt: str, knobs: Settings,
          seen: Collection[str] = ()) -> list[Verdict]:
    """Every candidate the hook weighs for ``prompt`` and its outcome, most likely first; the
    records of ``seen`` that the search found come last, marked :data:`SEEN`."""
    max_records = min(knobs.max_records, config.PROMPT_MAX_RECORDS)
    if max_records <= 0 or not prompt.strip():
        return []
    if prompt_kind.kind(prompt) == prompt_kind.CHAT:
        return []  # talk about the conversation: nothing to search for
    found = candidates(db, project_id, prompt, knobs, seen)
    already = [Verdict(hit, SEEN) for hit in found.seen]
    if not found.hits:
        return already
    cosines = found.cosines
    model = evidence.SEMANTIC if cosines is not None else evidence.KEYWORD
    weighed = [Verdict(hit, WEAK, cosines[i] if cosines else None, evidence.probability(f, model),
                       found.side(i))
               for i, (hit, f) in enumerate(zip(found.hits, evidence.features(
                   prompt, found.hits, cosines, found.terms, found.vector_ranks), strict=True))]
    agreed = found.agreed()
    weighed.sort(key=lambda v: -(v.probability or 0.0))
    best = weighed[0].probability or 0.0
    if best < knobs.pointer_confidence and agreed is None:
        return weighed + already
    verdicts = []
    kept = 0
    for verdict in weighed:
        chance = verdict.probability or 0.0
        if chance >= knobs.full_confidence and not accidental(verdict, found):
            outcome = INJECT
        elif knobs.pointers and (chance >= POINTER_FLOOR or kept == 0 or
                                 verdict.hit.record.pk == agreed):
            outcome = POINTER
        else:
            outcome = WEAK
        if outcome != WEAK:
            if kept >= max_records:
                outcome = CAPPED
            else:
                kept += 1
        verdicts.append(verdict._replace(outcome=outcome))
    return verdicts + already


class Candidates(NamedTuple):
    """What the judgement weighs for one prompt: the keyword search's first hits not yet
    injected, then the prompt's nearest records by meaning that the keyword side did not find
    (``rank`` 0, no matched words); each one's cosine (``None`` overall: no vectors) and rank
    among the nearest by meaning (0: not among them); the hits already injected."""

    hits: list[Hit]
    cosines: list[float | None] | None
    vector_ranks: list[int] | None
    terms: int
    seen: list[Hit]

    def side(self, index: int) -> str:
        """Which side found candidate ``index``: ``keyword``, ``meaning`` or ``both``."""
        by_meaning = bool(self.vector_ranks and self.vector_ranks[index])
        if self.hits[index].rank <= 0:
            return "meaning"
        return "both" if by_meaning else "keyword"

    def agreed(self) -> int | None:
        """The pk of the record both sides put first, confidently (:data:`AGREED_COSINE`,
        :data:`AGREED_RELEVANCE`); ``None`` when they differ, the agreement is weak, or there
        are no vectors."""
        if not self.hits or self.vector_ranks is None or self.hits[0].rank <= 0:
            return None
        first = self.hits[0]
        cosine = self.cosines[0] if self.cosines else None
        if self.vector_ranks[0] != 1 or first.relevance < AGREED_RELEVANCE or \
                cosine is None or cosine < AGREED_COSINE:
            return None
        return first.record.pk


def candidates(db: Store, project_id: str, prompt: str, knobs: Settings,
               seen: Collection[str] = ()) -> Candidates:
    """The fixed pool the judgement weighs: :data:`CANDIDATES` keyword hits and up to
    :data:`VECTOR_CANDIDATES` more by meaning (a cosine of at least :data:`VECTOR_MIN_COSINE`),
    so nothing decided depends on how many a caller lists."""
    hits = search(db, Query(prompt, Selection(project_id=project_id, include_global=True),
                            limit=min(MAX_LIMIT, CANDIDATES + len(seen)), backend=knobs.search))
    fresh = [hit for hit in hits if hit.record.id not in seen][:CANDIDATES]
    already = [hit for hit in hits if hit.record.id in seen]
    terms = query_terms(prompt)
    if not knobs.semantic_check:
        return Candidates(fresh, None, None, len(terms), already)
    from agentctx.store import querymodel, vecside

    side = vecside.LeanVectors(db)
    near = [(pk, cos) for pk, cos in side.nearest(
        prompt, Selection(project_id=project_id, include_global=True),
        VECTOR_CANDIDATES + min(len(seen), MAX_LIMIT)) if cos >= VECTOR_MIN_COSINE]
    query, model = side.vector, side.model
    if query is None or model is None:
        return Candidates(fresh, None, None, len(terms), already)
    records = by_pks(db, [pk for pk, _cos in near])
    near = [(pk, cos) for pk, cos in near if pk in records and records[pk].id not in seen]
    near = near[:VECTOR_CANDIDATES]
    rank = {pk: i for i, (pk, _cos) in enumerate(near, start=1)}
    cosine_of = dict(near)
    keyword_pks = {hit.record.pk for hit in fresh}
    extra = [Hit(records[pk], 0.0, 0.0, ()) for pk, _cos in near if pk not in keyword_pks]
    pool = fresh + extra
    cosines = querymodel.similarities_to(db, model, query,
                                         [(hit.record.pk, hit.via) for hit in fresh])
    cosines += [cosine_of[hit.record.pk] for hit in extra]
    return Candidates(pool, cosines, [rank.get(hit.record.pk, 0) for hit in pool], len(terms),
                      already)


def accidental(verdict: Verdict, found: Candidates) -> bool:
    """Whether a candidate rests on one accidental shared word: a single matched word of low
    relevance (:data:`ACCIDENTAL_RELEVANCE`) and no support by meaning (not among the
    :data:`ACCIDENTAL_VECTOR_RANK` nearest). Such a candidate is never shown in full."""
    hit = verdict.hit
    if len(hit.matched) > 1 or hit.relevance >= ACCIDENTAL_RELEVANCE or hit.rank <= 0:
        return False
    if found.vector_ranks is None:
        return False
    index = next((i for i, h in enumerate(found.hits) if h.record.pk == hit.record.pk), -1)
    rank = found.vector_ranks[index] if index >= 0 else 0
    return not (0 < rank <= ACCIDENTAL_VECTOR_RANK)


def semantic_check_state(db: Store, knobs: Settings) -> str:
    """Whether the judgement weighs meaning on this store: ``off``, ``not ready (…)`` or ``on``."""
    from agentctx.store import querymodel

    if not knobs.semantic_check:
        return "off"
    side = querymodel.open_registered(db)
    if side is None:
        return "not ready (run 'agentctx consolidate')"
    side.close()
    from agentctx.store import vecside

    ready, why = vecside.ready(db)
    return f"on, with candidates by meaning ({why})" if ready else \
        f"on, without candidates by meaning ({why})"


def short_ids(db: Store, hits: Sequence[Hit]) -> dict[str, str]:
    """The store's short ids of the records ``hits`` show and of the records they replace."""
    if not hits:
        return {}
    return store_records.short_ids(db, list(dict.fromkeys(
        [h.record.id for h in hits] + [h.via for h in hits if h.via])))


def compose(hits: Sequence[Hit], project_name: str, knobs: Settings, *,
            pointers: Sequence[Hit] = (), shorts: dict[str, str] | None = None,
            gone: dict[str, list[str]] | None = None) -> tuple[str, list[Hit], list[Hit]]:
    """The fenced injection of ``hits`` in full and ``pointers`` as one-line pointers, within the
    per-prompt budget; returns the text and the hits it shows in full and as pointers.

    Full entries are added in order while they fit; the first that does not fit whole is cut with
    a ``… ctx_get <id>`` marker (when at least its first line fits) and no full entry follows it.
    Pointers follow, each whole or not at all. The laws cap the budget and the number of records
    (pointers count) whatever ``knobs`` say. Records are named by ``shorts`` (the store's short
    ids; the whole id for one it lacks); a record dated where the prompt points, or a handover,
    shows its date, and one whose named paths are all gone (``gone``) says so.
    """
    shorts = shorts or {}
    gone = gone or {}
    room_records = min(knobs.max_records, config.PROMPT_MAX_RECORDS)
    hits = list(hits)[:room_records]
    pointers = list(pointers)[:room_records - len(hits)]
    if not hits and not pointers:
        return "", [], []
    max_tokens = min(knobs.max_tokens, config.PROMPT_MAX_TOKENS)
    max_chars = min(knobs.max_chars, config.INJECTION_MAX_CHARS)
    head = injection.header("prompt", project_name,
                            None if hits else "prompt-pointers")
    foot = injection.FENCE_CLOSE
    used = len(head) + 1 + len(foot)
    limit = char_limit(max_tokens, max_chars)
    entries: list[str] = []
    full: list[Hit] = []
    for hit in hits:
        short = shorts.get(hit.record.id)
        since = hit.dated or hit.record.type == "handover"
        entry = injection.item_block(hit.record, replaces=shorts.get(hit.via, hit.via)
                                     if hit.via else None, short=short, since=since,
                                     gone=gone.get(hit.record.id, ()))
        room = limit - used - 1
        if len(entry) > room:
            marker = f" … ctx_get {short or hit.record.id}"
            if room < len(injection.item_head(hit.record, short)) + len(marker):
                break
            entry = truncate(entry, room, marker)
            entries.append(entry)
            full.append(hit)
            used += len(entry) + 1
            break
        entries.append(entry)
        full.append(hit)
        used += len(entry) + 1
    shown_pointers: list[Hit] = []
    for hit in pointers:
        line = injection.pointer_line(hit.record, shorts.get(hit.record.id))
        if len(line) > limit - used - 1:
            break
        entries.append(line)
        shown_pointers.append(hit)
        used += len(line) + 1
    packed = pack(entries, max_tokens=max_tokens, max_chars=max_chars, header=head, footer=foot)
    if packed.kept == 0:
        return "", [], []
    kept_full = full[:packed.kept]
    kept_pointers = shown_pointers[:max(0, packed.kept - len(full))]
    return packed.text, kept_full, kept_pointers
