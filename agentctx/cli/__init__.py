"""The typer CLI: thin commands over the core (parse, call, print).

Each area registers its commands from its own module; errors surface as one line on stderr and a
non-zero exit, never a traceback (details go to ``<home>/logs/cli.log``).
"""

from __future__ import annotations

import sys
import traceback

import typer

from agentctx import __version__
from agentctx.cli import (
    admin,
    bench,
    consolidate,
    extract,
    hooks,
    install,
    mcp,
    profile,
    records,
    sync,
    team,
    verify,
    web,
    why,
)
from agentctx.cli.common import CliError
from agentctx.cli.helptext import readable
from agentctx.core import logfile
from agentctx.core.config import ConfigError
from agentctx.core.redact import redact
from agentctx.store.errors import StoreError

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


_registered: list[bool] = []


def _register() -> None:
    """Add every area's commands to :data:`app`, once per process."""
    if _registered:
        return
    _registered.append(True)
    for area in (records, admin, mcp, install, hooks, consolidate, profile, extract, bench, sync,
                 team, web, why, verify):
        area.register(app)
    readable(app)


def run_cli(argv: list[str] | None = None) -> None:
    """Run the CLI; turn every expected error into one line and an exit code."""
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
    logfile.append("cli.log", traceback.format_exc())
