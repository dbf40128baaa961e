"""The models: the embedding model (:mod:`agentctx.ml.embedder`) and the model client — the one
Anthropic client factory, one structured call with its single retry (:mod:`agentctx.ml.llm`), and
the price table that costs every call (:mod:`agentctx.ml.pricing`). Extraction and
consolidation's merge check call the client; it never touches the store (callers record the
attempts in the cost ledger)."""
