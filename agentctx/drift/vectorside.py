"""The drift scan's vector side: how close each record is to each unit of the memory files."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from agentctx.drift.memfiles import Unit
from agentctx.drift.params import Encoder, Fact, Params

VECTOR_POOL = 8  # units a record may be read in for its vector alone (the closest ones)


class Vectors:
    """The vector side: how close each fact is to each unit (and its block), mapped to 0-1,
    worked out for a fact only when its keywords fall short."""

    def __init__(self, units: Sequence[Unit], facts: Sequence[Fact], encoder: Encoder,
                 params: Params, known: Mapping[str, Any]) -> None:
        import numpy as np  # late: numpy costs 80 ms at every CLI start

        unit_texts = [" ".join((*u.headings[-1:], u.text)) for u in units]
        blocks: dict[int, list[str]] = defaultdict(list)
        for u in units:
            blocks[u.block].append(u.text)
        # Blocks of one unit read as that unit: only longer ones are embedded again.
        block_ids = sorted(b for b, texts in blocks.items() if len(texts) > 1)
        block_texts = [" ".join(blocks[b]) for b in block_ids]
        missing = [f for f in facts if f.id not in known]
        texts = [*unit_texts, *block_texts, *(f.embedding_text for f in missing)]
        encoded = np.asarray(encoder(texts), dtype=np.float32) if texts else \
            np.zeros((0, 1), dtype=np.float32)
        dim = encoded.shape[1] if encoded.ndim == 2 and len(encoded) else \
            len(next(iter(known.values()), [0.0]))
        encoded = encoded.reshape(len(texts), dim)
        made = dict(zip((f.id for f in missing), encoded[len(units) + len(block_texts):],
                        strict=True))
        self._np = np
        self._params = params
        self._facts = [known[f.id] if f.id in known else made[f.id] for f in facts]
        self._units = encoded[:len(units)]
        self._blocks = encoded[len(units):len(units) + len(block_texts)]
        block_row = {b: n for n, b in enumerate(block_ids)}
        self._columns = [i for i, u in enumerate(units) if u.block in block_row]
        self._column_blocks = [block_row[units[i].block] for i in self._columns]
        self._row: tuple[int, Any] | None = None

    def _mapped(self, fact_index: int) -> Any:
        if self._row is None or self._row[0] != fact_index:
            np, params = self._np, self._params
            vector = np.asarray(self._facts[fact_index], dtype=np.float32)
            cosine = self._units @ vector
            if self._columns:
                wide = params.block_discount * (self._blocks @ vector)
                cosine[self._columns] = np.maximum(cosine[self._columns],
                                                   wide[self._column_blocks])
            span = max(1e-6, params.vector_high - params.vector_low)
            self._row = (fact_index, np.clip((cosine - params.vector_low) / span, 0.0, 1.0))
        return self._row[1]

    def scores(self, fact_index: int, unit_indexes: Iterable[int]) -> dict[int, float]:
        """The fact's vector coverage (0-1) of each of the units."""
        wanted = list(unit_indexes)
        values = self._mapped(fact_index)[self._np.asarray(wanted, dtype=self._np.int64)]
        return dict(zip(wanted, values.tolist(), strict=True))

    def candidates(self, fact_index: int) -> list[int]:
        """The units closest to the fact (at most :data:`VECTOR_POOL`) above ``vector_low``."""
        row = self._mapped(fact_index)
        if not len(row):
            return []
        k = min(VECTOR_POOL, len(row))
        top = self._np.argpartition(-row, k - 1)[:k]
        return [int(i) for i in top if row[i] > 0]
