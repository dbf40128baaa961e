"""Reading record ids back from injected text, where records are named by their short ids."""

from __future__ import annotations

import re
from collections.abc import Iterable

from agentctx.context import injection

_CTX_GET = re.compile(r"ctx_get ([0-9A-Z]{8,26})\b")


def names(text: str, record_id: str) -> bool:
    """Whether an entry of ``text`` names ``record_id`` (by the whole id or a prefix of it)."""
    return any(record_id.startswith(shown) for shown in injection.ids_in(text))


def entries(text: str, known: Iterable[str]) -> list[str]:
    """The whole ids among ``known`` that the entries of ``text`` name, in order."""
    return injection.resolve(injection.ids_in(text), known)


def cut_marker_names(text: str, record_id: str) -> bool:
    """Whether ``text`` holds a ``… ctx_get <id>`` cut marker naming ``record_id``."""
    return any(record_id.startswith(found) for found in _CTX_GET.findall(text))


def line_of(text: str, record_id: str) -> str:
    """The entry line of ``text`` that names ``record_id``."""
    return next(line for line in text.split("\n") if line.startswith(injection.ITEM_PREFIX)
                and names(line, record_id))
