"""Identifiers: ULIDs for records, nodes and edges, and timestamps.

A ULID is 26 Crockford base-32 characters: 48 bits of milliseconds then 80 random bits, so ids
sort by creation time. Ids are shown shortened in listings and accepted by any unambiguous prefix.
"""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
ULID_LENGTH = 26
MIN_PREFIX = 4


def new_ulid(at_ms: int | None = None) -> str:
    """A new ULID for the current time (or ``at_ms`` milliseconds since the epoch)."""
    millis = int(time.time() * 1000) if at_ms is None else at_ms
    value = (millis << 80) | int.from_bytes(os.urandom(10), "big")
    chars = []
    for _ in range(ULID_LENGTH):
        chars.append(_CROCKFORD[value & 31])
        value >>= 5
    return "".join(reversed(chars))


def normalize_prefix(text: str) -> str:
    """Upper-case an id prefix and map Crockford's look-alikes (I, L -> 1; O -> 0)."""
    return text.strip().upper().replace("I", "1").replace("L", "1").replace("O", "0")


NOW_ENV = "AGENTCTX_NOW"


def now() -> datetime:
    """The current UTC time: agentctx's one clock.

    ``AGENTCTX_NOW=<ISO 8601>`` fixes it for a process (hooks, preview, search, consolidation and
    the TUI all read it here), so benchmarks and snapshots see the same "now" on every run; a
    value that does not parse is ignored (``agentctx doctor`` says so).
    """
    fixed = os.environ.get(NOW_ENV)
    if fixed:
        try:
            return parse_time(fixed).astimezone(UTC)
        except ValueError:
            pass
    return datetime.now(UTC)


class clock_at:  # a lower-case name: it reads as a function, ``with clock_at(moment):``
    """Within the block the one clock reads ``moment`` (``AGENTCTX_NOW``; nothing changes for
    ``None``): what is written and asked then sees that day. The clock is as it was afterwards.
    (A class, not ``contextlib``: this module is on the hook path, which skips contextlib.)"""

    def __init__(self, moment: datetime | None) -> None:
        self.moment = moment
        self.before: str | None = None

    def __enter__(self) -> None:
        if self.moment is not None:
            self.before = os.environ.get(NOW_ENV)
            os.environ[NOW_ENV] = to_iso(self.moment)

    def __exit__(self, *_exc: object) -> None:
        if self.moment is None:
            return
        if self.before is None:
            os.environ.pop(NOW_ENV, None)
        else:
            os.environ[NOW_ENV] = self.before


def now_iso() -> str:
    """The current UTC time (:func:`now`) as ISO 8601 with milliseconds and a ``Z`` suffix."""
    return to_iso(now())


def to_iso(moment: datetime) -> str:
    """Format an aware (or naive, taken as UTC) datetime the way the store keeps times."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def parse_time(text: str) -> datetime:
    """Parse a date or datetime the user or a transcript gave (ISO 8601, ``Z`` allowed).

    Naive values are taken as UTC. Raises ``ValueError`` with a readable message.
    """
    raw = text.strip()
    if not raw:
        raise ValueError("empty date")
    candidate = raw[:-1] + "+00:00" if raw.endswith(("Z", "z")) else raw
    try:
        moment = datetime.fromisoformat(candidate)
    except ValueError:
        raise ValueError(f"not an ISO date or time: {text!r} (try 2026-04-01 or "
                         "2026-04-01T09:30:00Z)") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment


def normalize_time(text: str) -> str:
    """Parse ``text`` and return it in the store's canonical ISO form."""
    return to_iso(parse_time(text))
