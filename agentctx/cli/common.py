"""Shared plumbing of the CLI: the store, the current project, output and errors."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NoReturn

import typer

from agentctx import team
from agentctx.core import config
from agentctx.core.ids import parse_time
from agentctx.store import Store
from agentctx.store import projects as proj
from agentctx.store.models import Project


class CliError(Exception):
    """An error to print as one line (``agentctx: <message>``) with a non-zero exit."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


def fail(message: str, code: int = 1) -> NoReturn:
    """Stop the command with one clear line on stderr."""
    raise CliError(message, code)


@contextmanager
def open_store() -> Iterator[Store]:
    """The store in the agentctx home, closed afterwards."""
    cfg = config.Config.load()
    db = Store.open(busy_timeout_ms=cfg.get_int("busy_timeout_ms"))
    try:
        yield db
    finally:
        db.close()


def check_date(option: str, value: str | None) -> str | None:
    """``value`` when it is a date or time the store understands (or ``None``); otherwise the
    command stops with one line naming ``option`` (before anything is read or written)."""
    if value is None:
        return None

    try:
        parse_time(value)
    except ValueError as exc:
        fail(f"{option}: {exc}")
    return value


def current_project(db: Store, ref: str | None) -> Project:
    """The project named by ``--project``, else the one of the working folder."""
    if ref:
        return proj.get(db, ref)
    return proj.resolve(db, os.getcwd()).project


def keep_team_file(db: Store, project: Project) -> None:
    """After a write: bring the working folder's team file in step (projects that keep one);
    a problem is one note on stderr, never a failed command."""
    result = team.after_write(db, project, os.getcwd())
    if result is not None and result.problem:
        typer.echo(f"note: {result.problem}", err=True)


def print_json(value: Any) -> None:
    """Print a JSON document (for ``--json``)."""
    typer.echo(json.dumps(value, indent=2, ensure_ascii=False, default=str))


def is_tty() -> bool:
    """Whether stdout is a terminal."""
    return sys.stdout.isatty()


ProjectOption = typer.Option(None, "--project", "-p",
                             help="Project id, id prefix or name (default: the current folder's).")
JsonOption = typer.Option(False, "--json", help="Print JSON instead of text.")
YesOption = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation.")
