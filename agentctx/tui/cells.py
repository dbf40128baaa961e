"""How the panes write values into cells: short dates, relative times, paths, numbers, titles."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from datetime import UTC, datetime

from agentctx.core.ids import parse_time
from agentctx.store import records as rec
from agentctx.store.db import Store


def ellipsize(text: str, width: int) -> str:
    """``text`` on one line, cut to ``width`` characters with a final "…" when longer."""
    line = " ".join(text.split())
    if width <= 0:
        return ""
    return line if len(line) <= width else line[:max(0, width - 1)].rstrip() + "…"


def tail(text: str, width: int) -> str:
    """``text`` on one line, cut from the left to ``width`` characters with a first "…" when
    longer (a path keeps its last folders)."""
    line = " ".join(text.split())
    if width <= 0:
        return ""
    return line if len(line) <= width else "…" + line[len(line) - width + 1:].lstrip()


def plural(count: int, word: str, many: str | None = None) -> str:
    """``1 session``, ``2 sessions``, ``1,204 records`` (``many``: an irregular plural)."""
    return f"{count:,} {word if count == 1 else (many or word + 's')}"


def day(stamp: str | None) -> str:
    """The date part of a stored time (``2026-03-01``), or ``-``."""
    return stamp[:10] if stamp else "-"


def minute(stamp: str | None) -> str:
    """A stored time to the minute (``2026-03-01 09:30``), or ``-``."""
    return f"{stamp[:10]} {stamp[11:16]}" if stamp and len(stamp) >= 16 else day(stamp)


def ago(stamp: str | None, now: datetime) -> str:
    """How long before ``now`` a stored time was: ``5m ago``, ``3h ago``, ``12d ago`` …"""
    if not stamp:
        return "never"
    try:
        moment = parse_time(stamp)
    except ValueError:
        return stamp
    seconds = (now - moment).total_seconds()
    if seconds < 0:
        return day(stamp)
    for size, unit in ((86400 * 365, "y"), (86400, "d"), (3600, "h"), (60, "m")):
        if seconds >= size:
            return f"{int(seconds // size)}{unit} ago"
    return "just now"


def tokens(count: int) -> str:
    """A token count, short: ``950``, ``12.3K``, ``1.2M``."""
    if count >= 1_000_000:
        return f"{count / 1_000_000:.1f}M"
    if count >= 10_000:
        return f"{count / 1000:.1f}K"
    return f"{count:,}"


def usd(amount: float) -> str:
    """An amount of dollars with the precision small costs need."""
    return f"${amount:.4f}" if amount < 1 else f"${amount:.2f}"


def home_path(path: str | os.PathLike[str]) -> str:
    """A path with the user's home folder written as ``~``."""
    text = os.fspath(path)
    home = os.path.expanduser("~")
    if home and home != "/" and (text == home or text.startswith(home + os.sep)):
        return "~" + text[len(home):]
    return text


def parse_now(text: str | None) -> datetime | None:
    """``AGENTCTX_NOW`` (an ISO date or time) as an aware datetime; ``None`` when unset.

    Raises ``ValueError`` with a readable message when the value is not a date.
    """
    if not text:
        return None
    moment = parse_time(text)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def record_names(db: Store, ids: Iterable[str]) -> dict[str, str]:
    """Each record's title, and for one forgotten since (a receipt may name it) its short id
    (as every surface shows ids: :func:`agentctx.store.records.short_ids`)."""
    wanted = sorted(set(ids))
    found, _missing = rec.get_many(db, wanted)
    names = {r.id: r.title for r in found}
    gone = [rid for rid in wanted if rid not in names]
    if gone:
        names.update({rid: f"(forgotten {short})" for rid, short in
                      rec.short_ids(db, gone).items()})
    return names


# A word that Markdown would turn into emphasis but that is a name: a path or a dunder
# (``harbor/billing/__init__.py``, ``__main__``); it is shown as code, as written.
_NAME = re.compile(r"(?<![\w`*])((?:[\w.-]*/)+[\w.-]*_[\w./-]*|[\w.-]*__\w+__[\w.-]*)")


def as_written(text: str) -> str:
    """Markdown of a record's text in which file paths and dunders stay as written (not turned
    into bold or italics); code spans and fenced blocks are left alone."""
    out: list[str] = []
    fenced = False
    for line in text.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        if fenced or line.lstrip().startswith(("```", "~~~")):
            out.append(line)
            continue
        parts = line.split("`")
        parts[::2] = [_NAME.sub(r"`\1`", part) for part in parts[::2]]
        out.append("`".join(parts))
    return "\n".join(out)
