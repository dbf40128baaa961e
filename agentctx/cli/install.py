"""``agentctx init``, ``uninstall`` and ``doctor``: set up, take down and check the installation."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import typer

from agentctx.cli.common import JsonOption, YesOption, caller, fail, print_json, say_note
from agentctx.core import config
from agentctx.install import (
    InstallError,
    Step,
    apply_init,
    apply_uninstall,
    entries,
    plan_init,
    plan_uninstall,
    plugin,
    preflight,
)
from agentctx.install import jsonfile as jf
from agentctx.ml import embedder
from agentctx.ops import memory_import, teamsync
from agentctx.store import Store
from agentctx.store import projects as proj

HOME_MARKERS = (config.DB_NAME, config.CONFIG_NAME, "install", "logs", "models")


def _interactive() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty()


def _confirm(question: str, yes: bool, *, default: bool) -> bool:
    """Ask ``question`` on a terminal; ``--yes`` says yes. Without a terminal nothing is asked
    and nothing applied (as ``forget`` and ``sync --apply`` do): one line says to add --yes."""
    if yes:
        return True
    if not _interactive():
        fail("no terminal to confirm these changes on: add --yes to apply them (--dry-run "
             "shows them); nothing was changed")
    return typer.confirm(question, default=default)


def _print_steps(steps: list[Step], prefix: str = "  ") -> None:
    for step in steps:
        typer.echo(f"{prefix}{step.line()}")


def init(
    scope: str = typer.Option("user", "--scope", "-s",
                              help="user: ~/.claude/settings.json and ~/.claude.json; "
                                   "project: .claude/settings.json and .mcp.json here."),
    no_llm: bool = typer.Option(False, "--no-llm", help="Turn LLM extraction off."),
    no_embeddings: bool = typer.Option(False, "--no-embeddings",
                                       help="Turn embeddings off (FTS5 search only)."),
    download_model: bool = typer.Option(False, "--download-model",
                                        help="Download the embedding model now."),
    yes: bool = YesOption,
    dry_run: bool = typer.Option(False, "--dry-run", help="Show the changes, write nothing."),
    team_file: bool = typer.Option(False, "--team",
                                   help="Also keep .agentctx/context.md for this folder's "
                                        "project (a git repository)."),
    claude_memory: bool = typer.Option(False, "--claude-memory",
                                       help="Also import this project's Claude Code auto "
                                            "memory (read only; offered in a terminal)."),
) -> None:
    """Register agentctx's hooks and MCP server with Claude Code (explicit and reversible)."""
    if scope not in ("user", "project"):
        fail(f"--scope takes user or project, not {scope!r}")
    if team_file and not teamsync.in_repository(os.getcwd()):
        fail(f"--team needs a git repository, and {os.getcwd()} is in none; nothing was changed")
    if download_model and no_embeddings:
        fail("--download-model and --no-embeddings contradict each other; pick one")
    if _plugin_registers(scope, dry_run, no_llm, no_embeddings):
        if team_file and not dry_run:
            _team_on()
        if download_model:
            _download_model()
        if not dry_run:
            _offer_memory_import(claude_memory)
        return
    try:
        plan = plan_init(scope)
    except InstallError as exc:
        fail(str(exc))
    typer.echo(f"agentctx init ({scope} scope), started as {' '.join(plan.launcher)}")
    _print_steps(plan.steps)
    if dry_run:
        typer.echo("dry run: nothing was written")
        return
    if plan.changes and not _confirm("Apply these changes?", yes, default=True):
        fail("nothing was changed", code=1)
    try:
        preflight(plan)  # all or nothing: every file init writes must be writable first
    except InstallError as exc:
        fail(str(exc))

    home = _prepare_home(no_llm, no_embeddings)
    try:
        steps = apply_init(plan)
    except InstallError as exc:
        fail(str(exc))  # apply_init put back whatever it had written
    for step in steps:
        if "instead" in step.detail:  # a fallback taken while applying
            typer.echo(f"note: {step.line()}")
    typer.echo(f"home: {jf.display(home)}")
    if not plan.changes:
        typer.echo("already installed: nothing changed")
    else:
        where = "new Claude Code sessions" if scope == "user" else \
            f"Claude Code sessions in {jf.display(plan.targets.project_root or Path.cwd())}"
        typer.echo(f"done: {where} load agentctx; 'agentctx doctor' checks the setup, "
                   "'agentctx uninstall' undoes it")
        if scope == "project":
            typer.echo("note: Claude Code asks once to approve the servers of a project's "
                       ".mcp.json in interactive sessions")
    if team_file:
        _team_on()
    if download_model:
        _download_model()
    _offer_memory_import(claude_memory)


def _offer_memory_import(asked: bool) -> None:
    """Offer to import this folder's project's Claude Code auto memory (``--claude-memory``
    imports it without asking; without a terminal, one line says how)."""
    count = memory_import.memories_here(os.getcwd())
    if not count:
        return
    if not asked:
        question = (f"Claude Code's auto memory for this project holds {count} memories; "
                    "import them into agentctx (read only)?")
        if not _interactive():
            typer.echo(f"note: {question.split(';')[0]}: 'agentctx import --claude-memory' "
                       "imports them (read only)")
            return
        if not typer.confirm(question, default=True):
            return
    with Store.open() as db:
        project = proj.resolve(db, os.getcwd()).project
        done = memory_import.import_memory(db, caller(), project)
    for line in done.lines:
        typer.echo(line)
    say_note(done.note)


def _team_on() -> None:
    with Store.open() as db:
        project = proj.resolve(db, os.getcwd()).project
        try:
            result = teamsync.turn_on(db, project, os.getcwd())
        except teamsync.TeamProblem as exc:
            fail(str(exc))
    typer.echo(f"team file on for {project.name}: {jf.display(Path(result.path))} "
               "(merged with union in git)")
    if result.problem:
        typer.echo(f"note: {result.problem}")
def _prepare_home(no_llm: bool, no_embeddings: bool) -> Path:
    """The home with its config (defaults, ready to edit) and the store, created or upgraded."""
    home = config.ensure_home()
    if not config.config_path().exists():  # defaults, ready to edit (private like the home)
        fd = os.open(config.config_path(), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with open(fd, "w", encoding="utf-8") as handle:
            handle.write("{}\n")
    if no_llm:
        config.set_value("llm", "off")
    if no_embeddings:
        config.set_value("embeddings", "off")

    Store.open().close()  # creates or upgrades the store now, not in the first hook
    return home


def _plugin_registers(scope: str, dry_run: bool, no_llm: bool, no_embeddings: bool) -> bool:
    """When the agentctx plugin is enabled here, say so and only prepare the home: the plugin
    already registers the hooks and the MCP server, and a second copy would run every hook
    twice. Returns whether it was."""
    enabled = plugin.enabled_plugins()
    if not enabled:
        return False
    typer.echo(f"agentctx init ({scope} scope): the Claude Code plugin "
               f"{enabled[0].describe()} registers agentctx's hooks and MCP server; "
               "nothing to register")
    for path in plugin.settings_files():
        try:
            ours = entries.has_ours("settings", jf.load(path).data)
        except InstallError:
            continue
        if ours:
            typer.echo(f"note: {jf.display(path)} also holds hooks of an earlier 'agentctx "
                       "init'; 'agentctx uninstall' removes them so that no hook runs twice")
    if dry_run:
        typer.echo("dry run: nothing was written")
        return True
    home = _prepare_home(no_llm, no_embeddings)
    typer.echo(f"home: {jf.display(home)}")
    typer.echo("done: 'agentctx doctor' (or /agentctx:doctor in Claude Code) checks the setup")
    return True


def _download_model() -> None:
    typer.echo("downloading the embedding model (one time) …")
    try:
        folder = embedder.download_model(config.Config.load())
    except Exception as exc:  # network, disk, hub: one line, and the install itself stands
        fail(f"the model download failed: {exc}; the installation itself is complete — run "
             "'agentctx init --download-model' again, or 'agentctx config set embed_model "
             "<local folder>'")
    typer.echo(f"embedding model ready in {jf.display(Path(folder))}")


def _safe_to_purge(home: Path) -> str | None:
    """Why ``home`` must not be deleted, or ``None``."""
    resolved = home.resolve()
    if resolved in (Path("/").resolve(), Path.home().resolve()) or len(resolved.parts) < 3:
        return f"{home} is not a folder agentctx would delete"
    if not home.exists():
        return None
    names = {child.name for child in home.iterdir()}
    if names and not names & set(HOME_MARKERS):
        return f"{home} does not look like an agentctx home; delete it by hand if you mean it"
    return None


def uninstall(
    purge: bool = typer.Option(False, "--purge",
                               help="Also delete the agentctx home (every record) after asking."),
    yes: bool = YesOption,
    dry_run: bool = typer.Option(False, "--dry-run", help="Show the changes, write nothing."),
) -> None:
    """Remove exactly what 'agentctx init' added; --purge also deletes the home."""
    try:
        plan = plan_uninstall()
    except InstallError as exc:
        fail(str(exc))
    if plan.steps:
        _print_steps(plan.steps)
    else:
        typer.echo("no agentctx hooks or MCP registration found")
    home = config.home()
    if dry_run:
        if purge:
            typer.echo(f"  would delete {jf.display(home)}")
        typer.echo("dry run: nothing was written")
        return
    if purge:
        reason = _safe_to_purge(home)
        if reason:
            fail(reason)
        if not yes and not _interactive():
            fail(f"--purge deletes {jf.display(home)} and every record in it; add --yes to "
                 "confirm")
        if not yes and home.exists() and not typer.confirm(
                f"Delete {jf.display(home)} and every record in it? This cannot be undone.",
                default=False):
            fail("nothing was changed")
    elif plan.changes and not _confirm("Remove these entries?", yes, default=True):
        fail("nothing was changed")
    steps = apply_uninstall(plan)
    errors = [step for step in steps if step.action == "error"]
    for step in errors:
        typer.echo(f"agentctx: left untouched: {step.detail}", err=True)
    if plan.changes and not errors:
        typer.echo("agentctx is no longer registered with Claude Code")
    if purge and home.exists():
        try:
            shutil.rmtree(home)
        except OSError as exc:
            fail(f"cannot delete {jf.display(home)}: {exc.strerror}")
        typer.echo(f"deleted {jf.display(home)}")
    if errors:
        raise typer.Exit(1)


def doctor(
    json_out: bool = JsonOption,
    quick: bool = typer.Option(False, "--quick",
                               help="Skip the MCP handshake and the hook latency measurement."),
) -> None:
    """Check the installation, one line per check (ok / warn / fail) with the fix."""
    from agentctx.ops import doctor as checks  # late: 3 ms at every CLI start

    results = checks.run_checks(probe=not quick, latency_runs=0 if quick else checks.LATENCY_RUNS)
    failed = any(check.status == checks.FAIL for check in results)
    if json_out:
        print_json({"ok": not failed, "checks": [check.as_dict() for check in results]})
    else:
        for check in results:
            line = f"{check.status:<4}  {check.name}: {check.detail}"
            if check.fix and check.status != checks.OK:
                line += f" — fix: {check.fix}"
            typer.echo(line)
    if failed:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add ``init``, ``uninstall`` and ``doctor`` to the CLI."""
    app.command("init")(init)
    app.command("uninstall")(uninstall)
    app.command("doctor")(doctor)
