"""The use cases every face calls: the one write path (``write_path``, for a ``caller``), the
team file's use cases and imports (``teamsync``), the one search entry with the caller's vector
side (``find``), a consolidation run with the write path's merges (``consolidation``), session
finishing, export and backups, the `$EDITOR` round trip and the health check."""
