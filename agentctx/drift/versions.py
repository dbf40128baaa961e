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
    """Whether ``said`` holds one of ``member``'s own title terms, or a longer word from it; a
    number ("15" of "PostgreSQL 15") only beside another word of the title ("15 minutes" is
    not PostgreSQL 15)."""
    title = corpus.title_terms[member]
    found = [t for t in own if t in title and "." not in t and (
        t in said or (len(t) >= 4 and any(w.startswith(t) for w in said)))]
    return any(not t[0].isdigit() for t in found) or (
        bool(found) and any(t in said for t in title if t not in found))


PHRASE = 1.0  # the evidence of a phrase only an older version says: the strongest


def _kin(words: Sequence[str], terms: Sequence[str]) -> bool:
    """Whether one of ``words`` is one of ``terms``, or begins or extends one (both at least
    four letters where they differ)."""
    return any(w == t or (min(len(w), len(t)) >= 4 and (w.startswith(t) or t.startswith(w)))
               for w in words for t in terms)


def _about(topic: frozenset[str] | set[str], said: frozenset[str]) -> bool:
    """Whether ``said`` holds a word of ``topic``, or a word ending or starting with one ("lint"
    in "tslint")."""
    if topic & said:
        return True
    long = [t for t in topic if len(t) >= 4]
    return bool(long) and any(len(w) > 4 and (w.endswith(t) or w.startswith(t))
                              for w in said for t in long)


def contest(corpus: Corpus, facts: Sequence[Fact], members: list[int],
             weights: Sequence[Mapping[str, float]], claims: list[set[int]],
             params: Params, evidence: dict[int, dict[int, float]]
             ) -> tuple[dict[int, dict[str, float]], dict[int, frozenset[str]]]:
    """Give each unit claimed by several members of one chain to one of them; returns each
    member's own terms with their weights and each older version's own paths, and puts in
    ``evidence`` the share of its own terms each older version that won a unit has there.

    A member's own terms (those no other member has) decide, in the narrowest window where any
    member's own terms appear: the member whose own terms are there in the largest share wins,
    and the current record keeps the unit when its share is at least ``params.current_keeps``
    times that. Text with no member's own terms stays with the current record; a superseded
    member never wins negated text ("we no longer use nose") unless it is negated itself.
    """
    terms = {m: set(weights[m]) for m in members}
    own: dict[int, dict[str, float]] = {}
    own_total: dict[int, float] = {}
    # Weights that rank older versions against each other: a word another older version has
    # too tells those two apart less well ("extracts" in both the CSV and the Parquet version).
    rank: dict[int, dict[str, float]] = {}
    rank_total: dict[int, float] = {}
    current = max(members, key=lambda m: (facts[m].current, m))
    older = set().union(*(terms[o] for o in members if o != current))
    # What the current record names only as history ("renamed from billing/", "no ts-jest")
    # is not its statement: those words still tell an older version apart.
    asserted = terms[current] - (corpus.fact_history[current] & older)
    # Paths an older version names that the current record names only as history, or not at
    # all ("harbor/billing/" of "renamed from harbor/billing/"): they say which version it is.
    current_paths = corpus.fact_paths[current] - corpus.fact_history[current]
    own_paths = {m: corpus.fact_paths[m] - current_paths for m in members if m != current}
    for m in members:
        # An older version's own terms are set against the current record and the other
        # versions' titles only: a replacement's body often names what it replaced ("REST
        # round trips were 40% of latency"), which must not take those words from the old one.
        if m == current:
            others = older
        else:
            others = asserted.union(*(corpus.title_terms[o] for o in members
                                      if o not in (m, current)))
        own[m] = {t: w for t, w in weights[m].items() if t not in others}
        own_total[m] = sum(own[m].values())
        shared = set().union(*(terms[o] for o in members if o not in (m, current))) \
            if m != current else set()
        rank[m] = {t: w * (params.shared_own if t in shared else 1.0) for t, w in own[m].items()}
        rank_total[m] = sum(rank[m].values())
    # What the versions' titles share is what they are about ("save" of "Save games as .tres"
    # and "Saves are versioned JSON"): an older version takes only text about that ("stats as
    # .tres files" is not about saves).
    topic = {m: corpus.title_terms[m] & corpus.title_terms[current] & asserted
             for m in members}
    # Two words in a row only an older version says ("make flash" against "west flash").
    said_pairs = set().union(*(corpus.fact_pairs[m] for m in members))
    # One of its words must be (or begin, or extend) a word of its title only it has ("make"
    # of "Makefile"): "main go" or "backend s3" name no version.
    own_pairs = {m: frozenset(
        pair for pair in corpus.fact_pairs[m] - corpus.fact_pairs[current]
        - set().union(*(corpus.fact_pairs[o] for o in members if o not in (m, current)))
        if _kin(pair.split(" "), [t for t in own[m] if t in corpus.title_terms[m]]))
        for m in members if m != current}
    preference = {m: (facts[m].current, position) for position, m in enumerate(members)}
    contested: set[int] = set().union(*(claims[m] for m in members))
    on_topic: dict[tuple[int, int], bool] = {}  # (member, block key): about the topic
    for unit in contested:
        # Only the unit's own words can give it to an older version (not its headings, which
        # repeat a project name or a topic over many units), and not under a negation.
        said = corpus.unit_terms[unit]
        unsaid = said - corpus.negated_terms[unit]
        negated = said - unsaid
        # A word said under a negation counts only for a version that negates it too ("no
        # RTOS" in the text and in "Bare-metal superloop, no RTOS").
        seen = {m: unsaid | (negated & corpus.fact_history[m]) for m in members} if negated \
            else dict.fromkeys(members, unsaid)
        shares = {m: share(own[m], own_total[m], seen[m]) for m in members}
        key = corpus.block_of[unit]

        def about(m: int, unit: int = unit, key: int = key) -> bool:
            if m == current or not topic[m]:
                return True
            found = on_topic.get((m, key))
            if found is None:
                found = on_topic[(m, key)] = _about(topic[m], corpus.window_b[unit])
            return found

        for m in members:
            if shares[m] > 0 and not about(m):
                shares[m], seen[m] = 0.0, frozenset()
        top = max(shares.values())
        winner = current
        if top >= params.min_own_share and shares[current] < params.current_keeps * top:
            winner = max(members, key=lambda m: (round(share(rank[m], rank_total[m], seen[m]),
                                                       6), preference[m]))
        paths: frozenset[str] = frozenset()
        pairs: frozenset[str] = frozenset()
        if winner != current or shares[current] == 0:
            paths = corpus.unit_paths[unit] - corpus.negated_terms[unit]
            pairs = corpus.unit_pairs[unit] & said_pairs if not negated else frozenset()
        if winner == current and shares[current] == 0:
            # Nothing of the current record's own terms, but a word only an older version's
            # title has ("REST", "nose" — or "nosetests"), its path or its command: it states
            # that version.
            by_title = [m for m in members if m != current and seen[m] and (
                titled(corpus, own[m], m, unsaid) or own_paths[m] & paths
                or own_pairs[m] & pairs) and about(m)]
            if by_title:
                winner = max(by_title, key=lambda m: (round(shares[m], 6), preference[m]))
        if winner != current:
            if own_pairs[winner] & pairs:
                evidence.setdefault(winner, {})[unit] = PHRASE
            elif own_paths[winner] & paths:
                evidence.setdefault(winner, {})[unit] = max(shares[winner],
                                                            params.min_own_share)
            elif titled(corpus, own[winner], winner, seen[winner]):
                # The share of its own title words counts too: "with nose" says all of what
                # "Tests run with nose" has that pytest's title has not.
                title = {t: w for t, w in own[winner].items()
                         if t in corpus.title_terms[winner]}
                evidence.setdefault(winner, {})[unit] = max(
                    shares[winner], share(title, sum(title.values()), seen[winner]))
        for m in members:
            if m != winner:
                claims[m].discard(unit)
    return own, own_paths


