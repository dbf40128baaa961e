"""``agentctx web``: the optional local web view, in the foreground until Ctrl-C."""

from __future__ import annotations

import os
import socket
import sys
import webbrowser

import typer

from agentctx.cli.common import ProjectOption, current_project, fail, open_store


def over_ssh(environ: dict[str, str] | None = None) -> bool:
    """Whether this is an SSH session (the browser would open on the wrong machine)."""
    env = os.environ if environ is None else environ
    return any(env.get(key) for key in ("SSH_CONNECTION", "SSH_CLIENT", "SSH_TTY"))


def has_display(environ: dict[str, str] | None = None) -> bool:
    """Whether a browser could open here: macOS always, elsewhere an X11 or Wayland display."""
    env = os.environ if environ is None else environ
    return sys.platform == "darwin" or bool(env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"))


def web(
    port: int | None = typer.Option(
        None, "--port", min=0, max=65535,
        help="Port on 127.0.0.1 (default: the web_port knob, 7327, or the next free one)."),
    no_open: bool = typer.Option(False, "--no-open", help="Do not open a browser."),
    project: str | None = ProjectOption,
) -> None:
    """Serve the local web view on 127.0.0.1 until Ctrl-C: search, chains and file graph,
    profile, sessions and token cost, drift; pin, edit and supersede records."""
    from agentctx.web import server as web_server  # late: 13 ms at every CLI start (http, ssl)

    with open_store() as db:
        project_id = current_project(db, project).id
    try:
        running, note = web_server.configured(None, project_id, port)
    except web_server.WebError as exc:
        fail(str(exc))
    if note:
        typer.echo(f"agentctx web: {note}")
    typer.echo(f"agentctx web: serving {running.url} (Ctrl-C stops it)")
    remote = over_ssh()
    if remote:
        typer.echo("agentctx web: over SSH; on your own machine run "
                   f"`ssh -L {running.port}:127.0.0.1:{running.port} {socket.gethostname()}` "
                   f"and open {running.url}")
    if not (no_open or remote or not has_display()):
        webbrowser.open(running.url)
    web_server.serve(running)
    typer.echo("agentctx web: stopped")


def register(app: typer.Typer) -> None:
    app.command("web")(web)
