"""The hot-path core: configuration, the laws, budgets, redaction, identity, safe reads and
background work. Standard library only; everything above may import it, it imports nothing
above it."""
