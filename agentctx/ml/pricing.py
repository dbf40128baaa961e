"""Model prices, kept as data (``agentctx/data/prices.json``), and the USD of a call.

The table is effective-dated: for a call on day D the entry of its model with the latest
``effective_from`` on or before D applies, so a price change is one new line of data and old
ledger rows stay explainable. A model the table does not know is priced at the most expensive
entry in force, so the per-session cost cap errs on the safe side.
"""

from __future__ import annotations

import json
import re
from datetime import date
from functools import lru_cache
from importlib import resources
from typing import Any, NamedTuple

from agentctx.core.ids import now as clock_now

_SNAPSHOT = re.compile(r"-\d{8}$")


class Price(NamedTuple):
    """USD per million tokens."""

    effective_from: str
    input: float
    output: float
    cache_write_5m: float
    cache_write_1h: float
    cache_read: float


class CallUsage(NamedTuple):
    """Billed tokens of one call; cache writes split by lifetime."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_write_5m_tokens: int = 0
    cache_write_1h_tokens: int = 0
    cache_read_tokens: int = 0

    @property
    def cache_write_tokens(self) -> int:
        """Cache writes of both lifetimes."""
        return self.cache_write_5m_tokens + self.cache_write_1h_tokens


class PriceTable:
    """The price table; :func:`load` reads the one shipped with agentctx."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.unit = int(data.get("unit_tokens", 1_000_000))
        self.aliases: dict[str, str] = dict(data.get("aliases", {}))
        self.models: dict[str, list[Price]] = {}
        for model, entries in dict(data.get("models", {})).items():
            prices = [Price(str(e["effective_from"]), float(e["input"]), float(e["output"]),
                            float(e["cache_write_5m"]), float(e["cache_write_1h"]),
                            float(e["cache_read"])) for e in entries]
            self.models[model] = sorted(prices, key=lambda p: p.effective_from)
        if not self.models:
            raise ValueError("the price table lists no model")

    def canonical(self, model: str) -> str | None:
        """The table's name for ``model`` (alias or dated snapshot resolved), or ``None``."""
        if model in self.models:
            return model
        if model in self.aliases:
            return self.aliases[model]
        base = _SNAPSHOT.sub("", model)
        return base if base in self.models else None

    def price(self, model: str, on: date | None = None) -> tuple[Price, bool]:
        """The price of ``model`` on day ``on`` (today) and whether the model is known."""
        day = (on or clock_now().date()).isoformat()
        name = self.canonical(model)
        if name is not None:
            return _in_force(self.models[name], day), True
        candidates = [_in_force(prices, day) for prices in self.models.values()]
        return max(candidates, key=lambda p: (p.output, p.input)), False

    def cost(self, model: str, usage: CallUsage, on: date | None = None) -> float:
        """USD of a call with ``usage``."""
        price, _known = self.price(model, on)
        total = (usage.input_tokens * price.input + usage.output_tokens * price.output
                 + usage.cache_write_5m_tokens * price.cache_write_5m
                 + usage.cache_write_1h_tokens * price.cache_write_1h
                 + usage.cache_read_tokens * price.cache_read)
        return total / self.unit


def _in_force(prices: list[Price], day: str) -> Price:
    current = [p for p in prices if p.effective_from <= day]
    return current[-1] if current else prices[0]


@lru_cache(maxsize=1)
def load() -> PriceTable:
    """The price table shipped in ``agentctx/data/prices.json``."""
    text = resources.files("agentctx").joinpath("data/prices.json").read_text(encoding="utf-8")
    return PriceTable(json.loads(text))
