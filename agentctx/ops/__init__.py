"""The use cases every face calls: one write path, session finishing, export, the
`$EDITOR` round trip and the health check."""
