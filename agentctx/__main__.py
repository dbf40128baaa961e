"""Entry point of the ``agentctx`` command.

``agentctx hook <event>`` is routed to the lean hook dispatcher before anything heavy is imported
(no typer, pydantic, sqlite-utils or numpy on the hook hot path); every other command goes to the
typer CLI.

Hooks and the MCP server run in the user's project, often with the project on ``PYTHONPATH``
(direnv): the folders ``PYTHONPATH`` added are taken off the module path first, so a
``logging.py`` or ``secrets.py`` of the project is never imported by agentctx.
"""

from __future__ import annotations

import os
import sys

# PYTHONPATH entries that stay: where packages are installed, not someone's project.
_PACKAGE_FOLDERS = ("site-packages", "dist-packages")


def _drop_foreign_paths() -> None:
    """Remove the entries ``PYTHONPATH`` put on ``sys.path``, except agentctx's own folder."""
    extra = os.environ.get("PYTHONPATH")
    if not extra:
        return
    own = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    foreign = {os.path.abspath(entry) for entry in extra.split(os.pathsep) if entry}
    foreign = {entry for entry in foreign
               if entry != own and os.path.basename(entry) not in _PACKAGE_FOLDERS}
    if foreign:
        sys.path[:] = [entry for entry in sys.path
                       if os.path.abspath(entry or ".") not in foreign]


def main() -> None:
    """Run the ``agentctx`` command line."""
    _drop_foreign_paths()
    if sys.argv[1:2] == ["hook"]:
        from agentctx.hooks.dispatch import main as hook_main  # late: the hook path alone

        hook_main(sys.argv[2:])
    from agentctx.cli import run_cli  # late: a hook never loads typer and the CLI

    run_cli()


if __name__ == "__main__":
    main()
