"""Versions in the drift scan: a current record and the versions it superseded compete for text.

What decides is each member's *own* terms (those no other member has: "pytest" against "nose",
"16" against "15") in the unit's own words, leaving out words under a negation ("we don't use
nose any more"): an older version takes the unit only when its own terms are there in a fair
share and the current record's are not nearly as much; otherwise the unit stays with the current
record.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from agentctx.drift.params import Fact, Params
from agentctx.drift.terms import Corpus, share


def titled(corpus: Corpus, own: Mapping[str, float], member: int, said: frozenset[str]) -> bool:
    """Whether ``said`` holds one of ``member``'s own title terms, or a longer word from it."""
    title = [t for t in own if t in corpus.title_terms[member] and "." not in t]
    return any(t in said or (len(t) >= 4 and any(w.startswith(t) for w in said))
               for t in title)


def contest(corpus: Corpus, facts: Sequence[Fact], members: list[int],
             weights: Sequence[Mapping[str, float]], claims: list[set[int]],
             params: Params) -> dict[int, dict[str, float]]:
    """Give each unit claimed by several members of one chain to one of them; returns each
    member's own terms with their weights.

    A member's own terms (those no other member has) decide, in the narrowest window where any
    member's own terms appear: the member whose own terms are there in the largest share wins,
    and the current record keeps the unit when its share is at least ``params.current_keeps``
    times that. Text with no member's own terms stays with the current record; a superseded
    member never wins negated text ("we no longer use nose") unless it is negated itself.
    """
    terms = {m: set(weights[m]) for m in members}
    own: dict[int, dict[str, float]] = {}
    own_total: dict[int, float] = {}
    current = max(members, key=lambda m: (facts[m].current, m))
    for m in members:
        # An older version's own terms are set against the current record and the other
        # versions' titles only: a replacement's body often names what it replaced ("REST
        # round trips were 40% of latency"), which must not take those words from the old one.
        if m == current:
            others = set().union(*(terms[o] for o in members if o != m))
        else:
            others = terms[current].union(*(corpus.title_terms[o] for o in members
                                             if o not in (m, current)))
        own[m] = {t: w for t, w in weights[m].items() if t not in others}
        own_total[m] = sum(own[m].values())
    preference = {m: (facts[m].current, position) for position, m in enumerate(members)}
    contested: set[int] = set().union(*(claims[m] for m in members))
    for unit in contested:
        # Only the unit's own words can give it to an older version (not its headings, which
        # repeat a project name or a topic over many units), and not under a negation.
        said = corpus.unit_terms[unit]
        unsaid = said - corpus.negated_terms[unit]
        shares = {m: share(own[m], own_total[m], said if corpus.fact_negated[m] else unsaid)
                  for m in members}
        top = max(shares.values())
        winner = current
        if top >= params.min_own_share and shares[current] < params.current_keeps * top:
            winner = max(members, key=lambda m: (round(shares[m], 6), preference[m]))
        elif shares[current] == 0:
            # Nothing of the current record's own terms, but a word only an older version's
            # title has ("REST", "nose" — or "nosetests"): the unit states that version.
            by_title = [m for m in members
                        if m != current and titled(corpus, own[m], m, unsaid)]
            if by_title:
                winner = max(by_title, key=lambda m: (round(shares[m], 6), preference[m]))
        for m in members:
            if m != winner:
                claims[m].discard(unit)
    return own


