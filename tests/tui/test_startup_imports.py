"""What opening the TUI imports: only the records pane (the first on screen) and what it needs;
every other pane, the drift machinery, the detail panel and the search load when first used."""

from __future__ import annotations

import json
import subprocess
import sys

LATER = ("agentctx.tui.drift_pane", "agentctx.tui.preview_pane", "agentctx.tui.sessions_pane",
         "agentctx.tui.chains_pane", "agentctx.tui.detail", "agentctx.tui.help",
         "agentctx.tui.commands", "agentctx.drift", "agentctx.context.judgement",
         "agentctx.store.hybrid",
         "numpy", "markdown_it")


def test_opening_imports_only_the_first_pane() -> None:
    code = ("import sys, json; import agentctx.tui.app, agentctx.tui.records_pane; "
            "print(json.dumps(sorted(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=True)
    loaded = set(json.loads(done.stdout))
    assert "agentctx.tui.records_pane" in loaded
    assert not loaded & set(LATER), sorted(loaded & set(LATER))


def test_the_cli_does_not_import_textual() -> None:
    code = ("import sys; sys.argv = ['agentctx', '--help']\n"
            "from agentctx.cli import app, _register\n_register()\n"
            "print('textual' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=True)
    assert done.stdout.strip() == "False"
