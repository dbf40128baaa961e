"""Retrieval benchmarks shipped with agentctx, so ``agentctx bench …`` runs anywhere.

* :mod:`agentctx.benchmarks.coding` — the coding-memory benchmark (data in ``data/``);
* :mod:`agentctx.benchmarks.longmemeval` — LongMemEval_S retrieval, with a plain-FTS5 baseline;
* :mod:`agentctx.benchmarks.metrics` — the scorers; :mod:`agentctx.benchmarks.retrieval` — the
  configurations under test, each calling the product's own search paths.

Nothing here is imported by the hooks or the MCP server.
"""
