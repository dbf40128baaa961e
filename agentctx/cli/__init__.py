"""The typer CLI: thin commands over the core (parse, call, print).

Each area registers its commands from its own module; errors surface as one line on stderr and a
non-zero exit, never a traceback (details go to ``<home>/logs/cli.log``).
"""

from __future__ import annotations

import os
import sys
import traceback

import typer

from agentctx import __version__
from agentctx.cli.common import CliError

app = typer.Typer(
    name="agentctx",
    help="A context layer for Claude Code: decisions, conventions and preferences, superseded "
         "never silently wrong, injected on a hard token budget.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=True,
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"agentctx {__version__}")
        raise typer.Exit()


@app.callback()
def _main(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                        help="Print the version and exit.")) -> None:
    """agentctx keeps a structured model of what is being built, for Claude Code."""


def _register() -> None:
    from agentctx.cli import admin, hooks, install, mcp, records

    records.register(app)
    admin.register(app)
    mcp.register(app)
    install.register(app)
    hooks.register(app)
    from agentctx.cli import consolidate, profile

    consolidate.register(app)
    profile.register(app)
    from agentctx.cli import extract
    extract.register(app)
    from agentctx.cli import bench
    bench.register(app)
    from agentctx.cli import sync
    sync.register(app)
    from agentctx.cli import team
    team.register(app)
    from agentctx.cli import web
    web.register(app)
    from agentctx.cli import why
    why.register(app)
    from agentctx.cli import verify
    verify.register(app)
    from agentctx.cli.helptext import readable
    readable(app)


def run_cli(argv: list[str] | None = None) -> None:
    """Run the CLI; turn every expected error into one line and an exit code."""
    from agentctx.core.config import ConfigError
    from agentctx.core.redact import redact
    from agentctx.store.errors import StoreError

    _register()
    try:
        app(args=argv, standalone_mode=True)
    except CliError as exc:
        typer.echo(f"agentctx: {redact(str(exc))}", err=True)
        sys.exit(exc.code)
    except (StoreError, ConfigError) as exc:
        typer.echo(f"agentctx: {redact(str(exc))}", err=True)
        sys.exit(1)
    except OSError as exc:  # a path that is not there, not writable, not a file …
        _log_crash()
        where = f"{exc.filename}: " if exc.filename else ""
        typer.echo(f"agentctx: {redact(where + (exc.strerror or str(exc)))}", err=True)
        sys.exit(1)
    except KeyboardInterrupt:
        typer.echo("agentctx: interrupted", err=True)
        sys.exit(130)
    except Exception as exc:  # the last line of defence: log the traceback, print one line
        _log_crash()
        typer.echo(f"agentctx: unexpected error: {redact(str(exc))} (details in the agentctx "
                   "log)", err=True)
        sys.exit(2)


def _log_crash() -> None:
    try:
        from agentctx.core import config
        from agentctx.core.redact import redact

        logs = config.ensure_home() / "logs"
        fd = os.open(logs / "cli.log", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        with open(fd, "a", encoding="utf-8") as handle:
            handle.write(redact(traceback.format_exc()) + "\n")
    except OSError:
        pass
