"""How likely a search hit answers the prompt: the evidence model of the per-prompt judgement.

Each candidate the store's search returns for a prompt is described by a few numbers the hook
can compute in well under a millisecond (:class:`Features`): how much evidence its matched words
carry (``strength``, absolute, and ``relevance``, the share of the prompt's words), how close its
meaning is to the prompt's (the cosine from the query side file, when consolidation wrote it), how
it stands against the other candidates (its rank and cosine against the best of the rest),
whether it answers through a record it superseded (and the prompt asks about a change: "still",
"anymore"), whether it is dated where the prompt points ("last week"), and what kind of prompt it
is (:mod:`agentctx.context.prompt_kind`: chat, an edit on screen and generic questions need far
more).

A logistic model turns them into a probability (:func:`probability`). Its weights were fitted on
the tuning prompts of the coding benchmark and the five evaluation projects (never on a
held-out file), one set for stores with embeddings (the keyword hits and the prompt's nearest
records by meaning, with the vector side's features) and one for keyword-only stores (the
keyword hits alone); the judgement
injects a record in full when the probability is high and as a one-line pointer when it is
plausible (:mod:`agentctx.context.judgement`). Standard library only: the per-prompt hook calls it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from agentctx.context import prompt_kind
from agentctx.core.lean import NamedTuple
from agentctx.core.words import tokens
from agentctx.store.models import Hit

# Words of a prompt that ask whether something changed ("are we still on nose?").
_CHANGE_CUE = frozenset("still anymore nowadays days currently now again switched switch moved "
                        "move replaced replace instead new current latest today".split())


class Features(NamedTuple):
    """What the evidence model sees of one candidate."""

    strength: float  # log1p of the summed weight of its matched terms
    relevance: float  # their share of the prompt's terms' weight
    cosine: float  # prompt-record cosine (0 when unknown)
    cosine_margin: float  # its cosine minus the best cosine of the other candidates
    rank_ratio: float  # its search rank over the best candidate's
    lifted: float  # 1 when it answers through a superseded record it replaced
    lifted_change: float  # lifted, and the prompt asks about a change
    dated: float  # dated inside the prompt's time window
    chat: float
    edit: float
    generic: float
    terms: float  # log1p of the prompt's search terms
    # The vector side (0 on keyword-only stores): 1 / its rank among the prompt's nearest
    # records by meaning (0 when not among them), found by both sides, found by meaning alone.
    vector_rank: float = 0.0
    both: float = 0.0
    vector_only: float = 0.0
    meaning: float = 0.0  # the cosine of a candidate found by meaning alone (else 0)


class Model(NamedTuple):
    """A fitted logistic model: one weight per feature, and the intercept."""

    weights: Features
    intercept: float


# Fitted on the tuning prompts (see the module docstring and ``bench/fit_evidence.py``).
SEMANTIC = Model(Features(strength=2.61, relevance=3.31, cosine=0.83, cosine_margin=4.17,
                          rank_ratio=3.92, lifted=0.94, lifted_change=1.01, dated=1.59,
                          chat=-1.79, edit=-1.95, generic=-1.93, terms=0.07, vector_rank=0.65,
                          both=0.23, vector_only=3.92, meaning=0.61), -9.10)
KEYWORD = Model(Features(strength=3.83, relevance=3.34, cosine=0.0, cosine_margin=0.0,
                         rank_ratio=5.08, lifted=0.36, lifted_change=1.07, dated=1.59,
                         chat=-1.88, edit=-2.02, generic=-1.76, terms=-0.23), -9.94)


def features(prompt: str, hits: Sequence[Hit], cosines: Sequence[float | None] | None,
             terms: int, vector_ranks: Sequence[int] | None = None) -> list[Features]:
    """The features of each of ``hits`` (the candidates: the search's, best first, then those
    found by meaning alone) for ``prompt``; ``cosines`` is the prompt-record cosine of each hit
    (``None``: no vectors), ``terms`` how many search terms the prompt has, ``vector_ranks``
    each hit's 1-based rank among the prompt's nearest records by meaning (0: not among them;
    ``None``: no vector side). A hit found by meaning alone has no rank and no matched words."""
    if not hits:
        return []
    ranks = list(vector_ranks) if vector_ranks is not None else [0] * len(hits)
    keyword_hits = [hit for hit in hits if hit.rank > 0]
    kind = prompt_kind.kind(prompt)
    change = not _CHANGE_CUE.isdisjoint(tokens(prompt))
    known = [c if c is not None else 0.0 for c in (cosines or [None] * len(hits))]
    top = keyword_hits[0].rank if keyword_hits else 1.0
    out = []
    for index, hit in enumerate(hits):
        others = known[:index] + known[index + 1:]
        lifted = 1.0 if hit.via else 0.0
        keyword = hit.rank > 0
        out.append(Features(
            strength=math.log1p(hit.strength), relevance=hit.relevance, cosine=known[index],
            cosine_margin=known[index] - max(others, default=0.0) if cosines else 0.0,
            rank_ratio=hit.rank / top if top else 0.0, lifted=lifted,
            lifted_change=lifted if change else 0.0, dated=1.0 if hit.dated else 0.0,
            chat=float(kind == prompt_kind.CHAT), edit=float(kind == prompt_kind.EDIT),
            generic=float(kind == prompt_kind.GENERIC), terms=math.log1p(terms),
            vector_rank=1.0 / ranks[index] if ranks[index] else 0.0,
            both=1.0 if keyword and ranks[index] else 0.0,
            vector_only=0.0 if keyword else 1.0,
            meaning=0.0 if keyword else known[index]))
    return out


def probability(found: Features, model: Model) -> float:
    """The model's probability that the candidate answers the prompt."""
    score = model.intercept + sum(w * x for w, x in zip(model.weights, found, strict=True))
    if score < -30:
        return 0.0
    return 1.0 / (1.0 + math.exp(-score))
