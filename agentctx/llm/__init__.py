"""The model client: the one Anthropic client factory, one structured call with its single
retry (:mod:`agentctx.llm.client`), and the price table that costs every call
(:mod:`agentctx.llm.pricing`). Extraction and consolidation's merge check both call it; it never
touches the store (callers record the attempts in the cost ledger)."""
