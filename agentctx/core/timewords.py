"""Time in a prompt: "yesterday", "last week", "in March", "ten days ago", "at the start".

:func:`read` finds the first time phrase of a prompt and turns it into a window of ``valid_from``
dates; search ranks the records dated inside it higher (it never hides the others: time words
also name events of the world, "refunds from last week showed up today", rather than when a fact
was recorded). An as-of search stays explicit (``--as-of``); a prompt's words never move it.

Windows are computed from :func:`agentctx.core.ids.now` (``AGENTCTX_NOW`` fixes it), in UTC:

* ``today`` / ``this morning``; ``yesterday``; ``the day before yesterday``;
* ``N days|weeks|months|years ago`` (``back``, ``earlier``; N in digits or words, "a", "a
  couple of", "a few"), centred on that moment with a tolerance growing with N;
* ``this|last week|month|year`` (calendar weeks from Monday, a day of slack either side);
* ``in March`` (``back in``, ``early``/``late``, an optional year): the latest such month not
  after today;
* ``recently``, ``lately``, ``the other day``, ``the last few days``;
* ``at the start of the project``, ``early on``, ``in the first week|month``: a window from the
  project's first record (:data:`PROJECT_START`, resolved by the search, which knows the project);
* ``since <something>``: from the date that follows ("since March", "since last week"); an event
  ("since the migration") is resolved by the search only when exactly one current record names
  it (:attr:`TimeWindow.since_event`), and ignored otherwise.

The words these phrases are made of are :data:`agentctx.core.words.TIME_WORDS`. Standard library
only: the per-prompt hook calls it.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from agentctx.core.lean import NamedTuple
from agentctx.core.words import MONTHS as _MONTHS
from agentctx.core.words import SHORT_MONTHS as _SHORT_MONTHS
from agentctx.core.words import TIME_WORDS, tokens

PROJECT_START = "project-start"

_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
            "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
            "fifteen": 15, "twenty": 20, "thirty": 30, "couple": 2, "a couple of": 2,
            "couple of": 2, "a few": 3, "few": 3, "several": 4}
_UNIT_DAYS = {"day": 1.0, "week": 7.0, "month": 30.4, "year": 365.0}

_NUMBER = r"(\d{1,3}|a couple of|couple of|a few|an?|one|two|three|four|five|six|seven|eight" \
          r"|nine|ten|eleven|twelve|fifteen|twenty|thirty|couple|few|several)"
# Each phrase's pattern, compiled only for a prompt holding one of the words it needs (compiling
# all of them costs a prompt hook ~2 ms, and most prompts name no time).
_SOURCES: dict[str, tuple[frozenset[str], str]] = {
    "ago": (frozenset({"ago", "back", "earlier", "before"}),
            rf"\b(?:about |around |roughly |some |like )?{_NUMBER}\s+(day|week|month|year)s?"
            r"\s+(?:ago|back|earlier|before)\b"),
    "relative": (frozenset({"week", "month", "year"}),
                 r"\b(this|last|past|previous)\s+(week|month|year)\b"),
    "days": (frozenset({"yesterday", "today", "morning", "tonight", "afternoon"}),
             r"\b(the day before yesterday|yesterday|today|this morning|earlier today|"
             r"tonight|this afternoon)\b"),
    "month": (frozenset(_MONTHS) | frozenset(_SHORT_MONTHS),
              r"\b(?:(?:back |early |late |mid |middle of |end of |beginning of )?in |"
              r"during |since |from )(?:early |late |mid[- ]?)?(" +
              "|".join(list(_MONTHS) + sorted(_SHORT_MONTHS, key=len, reverse=True)) +
              r")\b(?:\s+(\d{4}))?"),
    "recent": (frozenset({"recently", "lately", "day", "days", "week"}),
               r"\b(recently|lately|the other day|(?:the )?(?:last|past) (?:few|couple "
               r"of|couple) days|in the last few days|this past week)\b"),
    "start": (frozenset({"start", "beginning", "outset", "early", "started", "first", "kickoff",
                         "kick"}),
              r"\b(?:(?:at|from|near) the (?:very )?(?:start|beginning|outset)(?: of the "
              r"project)?|in the (?:very )?beginning|early on|when we (?:first )?started|"
              r"(?:in|during) the (?:very )?first (day|week|month|few weeks|couple of "
              r"weeks|two weeks|months?)(?: of the project)?|right at the start|"
              r"kick-?off)\b"),
    "since": (frozenset({"since"}),
              r"\bsince (?:the |our |we )?([a-z0-9][\w.\-]*(?: [a-z0-9][\w.\-]*){0,2})"),
}
_COMPILED: dict[str, re.Pattern[str]] = {}


def _search(name: str, words: set[str], text: str) -> re.Match[str] | None:
    """The first match of phrase ``name`` in ``text`` (``None`` without one of its words)."""
    needs, source = _SOURCES[name]
    if needs.isdisjoint(words):
        return None
    pattern = _COMPILED.get(name)
    if pattern is None:
        pattern = _COMPILED[name] = re.compile(source)
    return pattern.search(text)

class TimeWindow(NamedTuple):
    """A span of ``valid_from`` dates a prompt points at (ISO bounds, end exclusive)."""

    start: str
    end: str
    phrase: str
    # Days from the project's first record (start/end are then empty until resolved).
    project_days: float = 0.0
    # "since <event>": the event's words, for the search to resolve (then start/end are empty).
    since_event: str = ""

    def contains(self, valid_from: str) -> bool:
        """Whether a record dated ``valid_from`` falls inside the window."""
        return bool(self.start) and self.start <= valid_from < self.end


def _iso(moment: datetime) -> str:
    moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _span(start: datetime, end: datetime, phrase: str) -> TimeWindow:
    return TimeWindow(_iso(start), _iso(end), phrase)


def _midnight(moment: datetime) -> datetime:
    return moment.replace(hour=0, minute=0, second=0, microsecond=0)


def _month_start(year: int, month: int) -> datetime:
    return datetime(year, month, 1, tzinfo=UTC)


def _next_month(moment: datetime) -> datetime:
    return _month_start(moment.year + (moment.month == 12), moment.month % 12 + 1)


def read(text: str, now: datetime) -> TimeWindow | None:
    """The window of the first time phrase in ``text`` (``None`` when it names no time)."""
    lowered = " ".join(text.lower().replace("\u2019", "'").split())
    words = set(tokens(lowered))
    if words.isdisjoint(TIME_WORDS):
        return None
    now = now.astimezone(UTC)
    today = _midnight(now)
    found: list[tuple[int, TimeWindow]] = []
    day = _search("days", words, lowered)
    if day:
        word = day.group(1)
        if word == "yesterday":
            window = _span(today - timedelta(days=1), today, word)
        elif word == "the day before yesterday":
            window = _span(today - timedelta(days=2), today - timedelta(days=1), word)
        else:
            window = _span(today, now + timedelta(seconds=1), word)
        found.append((day.start(), window))
    ago = _search("ago", words, lowered)
    if ago:
        word = ago.group(1)
        count = int(word) if word.isdigit() else _NUMBERS[word]
        days = count * _UNIT_DAYS[ago.group(2)]
        slack = max(1.5, 0.3 * days)
        centre = now - timedelta(days=days)
        found.append((ago.start(), _span(centre - timedelta(days=slack),
                                         centre + timedelta(days=slack), ago.group(0))))
    match = _search("relative", words, lowered)
    if match:
        found.append((match.start(), _relative(match.group(1), match.group(2), now, today,
                                               match.group(0))))
    match = _search("month", words, lowered)
    if match and not (match.group(1) == "may" and not match.group(2)
                      and not re.search(r"\b(?:in|during|since) (?:early |late )?may\b"
                                        r"(?! (?:be|have|not|want|need))", lowered)):
        found.append((match.start(), _named_month(match.group(1), match.group(2), now,
                                                  match.group(0))))
    match = _search("recent", words, lowered)
    if match:
        back = 7 if "other day" in match.group(1) or "days" in match.group(1) else 14
        found.append((match.start(), _span(today - timedelta(days=back),
                                           now + timedelta(seconds=1), match.group(1))))
    match = _search("start", words, lowered)
    if match:
        found.append((match.start(), TimeWindow("", "", match.group(0),
                                                project_days=_start_days(match.group(1)))))
    match = _search("since", words, lowered)
    if match:
        after = [(start, w) for start, w in found if match.start() <= start <= match.end()]
        if after:  # "since last week", "since March": from that time until now
            start, window = after[0]
            found.remove((start, window))
            if window.start:
                found.append((match.start(), window._replace(
                    end=_iso(now + timedelta(seconds=1)),
                    phrase="since " + window.phrase.removeprefix("since "))))
        else:
            found.append((match.start(), TimeWindow("", "", match.group(0),
                                                    since_event=match.group(1))))
    if not found:
        return None
    found.sort(key=lambda item: item[0])
    return found[0][1]


def _relative(which: str, unit: str, now: datetime, today: datetime, phrase: str) -> TimeWindow:
    slack = timedelta(days=1)
    if unit == "week":
        monday = today - timedelta(days=today.weekday())
        if which == "this":
            return _span(monday - slack, now + timedelta(seconds=1), phrase)
        if which == "past":
            return _span(today - timedelta(days=7), now + timedelta(seconds=1), phrase)
        return _span(monday - timedelta(days=7) - slack, monday + slack, phrase)
    if unit == "month":
        first = _month_start(now.year, now.month)
        if which == "this":
            return _span(first - slack, now + timedelta(seconds=1), phrase)
        if which == "past":
            return _span(today - timedelta(days=31), now + timedelta(seconds=1), phrase)
        previous = _month_start(now.year - (now.month == 1), (now.month - 2) % 12 + 1)
        return _span(previous - slack, first + slack, phrase)
    first = datetime(now.year, 1, 1, tzinfo=UTC)
    if which == "this":
        return _span(first, now + timedelta(seconds=1), phrase)
    if which == "past":
        return _span(today - timedelta(days=366), now + timedelta(seconds=1), phrase)
    return _span(datetime(now.year - 1, 1, 1, tzinfo=UTC), first, phrase)


def _named_month(name: str, year: str | None, now: datetime, phrase: str) -> TimeWindow:
    month = _MONTHS.index(name) + 1 if name in _MONTHS else _SHORT_MONTHS[name]
    if year:
        start = _month_start(int(year), month)
    else:
        start = _month_start(now.year, month)
        if start > now:
            start = _month_start(now.year - 1, month)
    if phrase.startswith(("since ", "from ")):
        return _span(start, now + timedelta(seconds=1), phrase)
    return _span(start, _next_month(start), phrase)


def _start_days(span: str | None) -> float:
    if not span:
        return 30.0
    if span == "day":
        return 2.0
    if span == "week":
        return 7.0
    if "few weeks" in span or "couple of weeks" in span or "two weeks" in span:
        return 21.0
    return 31.0 if span == "month" else 92.0


def phrase_words(window: TimeWindow) -> frozenset[str]:
    """The words of the window's phrase that are time words (left out of search terms)."""
    return frozenset(t for t in tokens(window.phrase) if t in TIME_WORDS or t.isdigit()
                     or t in _NUMBERS) - frozenset(tokens(window.since_event))


def resolve_start(window: TimeWindow, first_valid_from: str | None) -> TimeWindow | None:
    """A project-start window made concrete from the project's first record's date."""
    if not window.project_days or not first_valid_from:
        return window if window.start else None
    try:
        first = datetime.fromisoformat(first_valid_from.replace("Z", "+00:00"))
    except ValueError:
        return None
    return window._replace(start=_iso(first - timedelta(hours=1)),
                           end=_iso(first + timedelta(days=window.project_days)))
