"""Entry point of the ``agentctx`` command.

``agentctx hook <event>`` is routed to the lean hook dispatcher before anything heavy is imported
(no typer, pydantic, sqlite-utils or numpy on the hook hot path); every other command goes to the
typer CLI.
"""

from __future__ import annotations

import sys


def main() -> None:
    """Run the ``agentctx`` command line."""
    if sys.argv[1:2] == ["hook"]:
        from agentctx.hooks.dispatch import main as hook_main

        hook_main(sys.argv[2:])
    from agentctx.cli import run_cli

    run_cli()


if __name__ == "__main__":
    main()
