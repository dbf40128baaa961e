"""The full-screen terminal UI (``agentctx tui``), built on Textual.

One module per pane (``projects_pane``, ``records_pane``, ``chains_pane``, ``profile_pane``,
``sessions_pane``, ``live_pane``, ``drift_pane``, ``preview_pane``), each with its ``.tcss``
beside it, over the same store API the CLI uses; ``app.py`` holds the thin App (global keys,
status line, command palette) and :func:`agentctx.tui.app.make_app` builds it for tests.
Importing this package imports nothing: Textual loads only when ``agentctx tui`` runs.
"""
