"""Help a person reads: each value is named by what it is (``--as-of DATE``, ``ID``, ``TITLE``),
never by its Python type (``<str>``, ``<list[str]>``, ``{title}``).

Typer writes a parameter's type beside it unless a metavar is given; :func:`readable` gives every
command of the app a command class that names each value from :data:`VALUE_NAMES` (else the
parameter's own name, in capitals) and writes the usage line the way man pages do: ``ID`` for a
required argument, ``[ID]`` for an optional one.
"""

from __future__ import annotations

from typing import Any

import typer
from typer.core import TyperCommand

# Typer carries its own copy of click; parameters are told apart by their kind's name.
ARGUMENT = "argument"

# What each parameter holds, by its name in the command's function.
VALUE_NAMES = {
    "record_id": "ID", "type_": "TYPE", "types": "TYPE", "title": "TITLE", "body": "TEXT",
    "why": "TEXT", "query": "QUERY", "prompt": "PROMPT", "as_of": "DATE", "valid_from": "DATE",
    "since": "DATE", "limit": "N", "project": "PROJECT", "file": "FILE", "files": "FILE",
    "out": "FILE", "transcript": "FILE", "session": "SESSION", "session_id": "SESSION",
    "with_id": "ID", "port": "PORT", "scope": "SCOPE", "confidence": "CONFIDENCE",
    "key": "KEY", "fmt": "FORMAT", "time_limit": "SECONDS", "batch_size": "N",
    "min_new_tokens": "N", "cwd": "FOLDER",
}


def value_name(param: Any) -> str:
    """How the help names the value of ``param``."""
    name = param.name or "value"
    return VALUE_NAMES.get(name, name.rstrip("_").upper())


class ReadableCommand(TyperCommand):
    """A command whose help names values by what they are."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for param in self.params:
            flag = getattr(param, "is_flag", False) or getattr(param, "count", False)
            if param.metavar is None and not flag:
                param.metavar = value_name(param)

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if param.param_type_name == ARGUMENT:
                name = (param.metavar or value_name(param)) + ("…" if param.nargs != 1 else "")
                pieces.append(name if param.required else f"[{name}]")
        return pieces

    def format_options(self, ctx: Any, formatter: Any) -> None:
        arguments: list[tuple[str, str]] = []
        options: list[tuple[str, str]] = []
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            if param.param_type_name == ARGUMENT:  # its name alone, not its Python type
                arguments.append((param.metavar or value_name(param), record[1]))
            else:
                options.append(record)
        if arguments:
            with formatter.section("Arguments"):
                formatter.write_dl(arguments)
        if options:
            with formatter.section("Options"):
                formatter.write_dl(options)


def readable(app: typer.Typer) -> None:
    """Give every command of ``app`` (and of its sub-apps) the readable help, unless it has a
    command class of its own (Typer's default is none of ours)."""
    for info in app.registered_commands:
        if info.cls in (None, TyperCommand):
            info.cls = ReadableCommand
    for group in app.registered_groups:
        if group.typer_instance is not None:
            readable(group.typer_instance)
