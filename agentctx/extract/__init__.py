"""LLM extraction: what a Claude Code session decided, preferred and left in progress.

``transcript`` reads Claude Code's JSONL, ``tiers`` sizes what is sent, ``prompt`` holds the
schema and the cached instructions, ``client`` is the one Anthropic client factory and structured
call, ``pricing`` prices calls from ``agentctx/data/prices.json``, ``apply`` turns a result into
records, ``run`` is one ``agentctx extract`` run and ``backfill`` extracts old transcripts.
Nothing here is imported on the hook path (the SDK alone takes ~0.8 s to import).
"""
