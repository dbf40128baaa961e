"""Administrative commands: status, projects, config, export, demo."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any

import typer

from agentctx import __version__
from agentctx.cli.common import (
    JsonOption,
    ProjectOption,
    YesOption,
    current_project,
    fail,
    open_store,
    print_json,
)
from agentctx.cli.render import plural
from agentctx.context.injection import gone_note
from agentctx.core import config
from agentctx.ops import teamsync
from agentctx.ops.export import render_markdown, write_backup
from agentctx.store import projects as proj
from agentctx.store import records as rec
from agentctx.store import stats
from agentctx.store.db import Store
from agentctx.store.models import Project

projects_app = typer.Typer(help="List projects, or merge one into another.", no_args_is_help=False)
config_app = typer.Typer(help="Read and change configuration (config.json + AGENTCTX_<KEY>).",
                         no_args_is_help=True)


# ----------------------------------------------------------------------------------- status


def _status_data(db: Store, project: Project) -> dict[str, Any]:
    """``agentctx status --json``: the store's overview of the project, as JSON-ready data."""
    cfg = config.Config.load()
    view = stats.overview(db, project, prune_after_days=cfg.get_int("prune_after_days"))
    shorts = rec.short_ids(db, [record.id for record, _ in view.possibly_stale])
    cost = view.extraction
    return {
        "version": __version__,
        "store": view.store._asdict(),
        "project": view.project._asdict(),
        "records": view.records,
        "global_preferences": view.global_preferences,
        "injections": view.injections,
        "extraction": {"calls": cost.calls, "usd": round(cost.usd, 6),
                       "input_tokens": cost.input_tokens, "output_tokens": cost.output_tokens,
                       "cache_write_tokens": cost.cache_write_tokens,
                       "cache_read_tokens": cost.cache_read_tokens,
                       "cap_usd_per_session": cfg.get_float("llm_cost_cap_usd")},
        "sessions": [s._asdict() for s in view.sessions],
        "merge_candidates": view.merge_candidates,
        "prune_candidates": view.prune_candidates,
        "possibly_stale": [{"id": record.id, "short_id": shorts[record.id],
                            "title": record.title, "gone": list(state.gone)}
                           for record, state in view.possibly_stale],
    }


def status(project: str | None = ProjectOption, json_out: bool = JsonOption) -> None:
    """What agentctx holds for this project and what it has cost: records, tokens, USD."""

    with open_store() as db:
        current = current_project(db, project)
        data = _status_data(db, current)
        state = teamsync.status(db, current, os.getcwd())
        data["team"] = asdict(state) if state.enabled else None
        shorts = rec.short_ids(db, [*(i for m in data["merge_candidates"]
                                      for i in (m.older_id, m.newer_id)),
                                    *(p.id for p in data["prune_candidates"])])
    if json_out:
        for key in ("merge_candidates", "prune_candidates"):
            data[key] = [item._asdict() for item in data[key]]
        print_json(data)
        return
    store = data["store"]
    echo = typer.echo
    echo(f"agentctx {__version__} · store {store['path']} ({store['bytes'] / 1e6:.1f} MB, "
         f"schema {store['schema']})")
    p = data["project"]
    echo(f"project  {p['name']} ({p['id'][:12]}) {p['root']}" + ("  [paused]" if p["paused"]
                                                               else ""))
    counts: dict[str, dict[str, int]] = data["records"]
    total = {k: sum(c[k] for c in counts.values()) for k in ("current", "superseded", "archived")}
    echo(f"records  {total['current']} current · {total['superseded']} superseded · "
         f"{total['archived']} archived")
    if counts:
        echo("         " + " · ".join(f"{t} {c['current']}" for t, c in sorted(counts.items())))
    if data["team"]:
        echo(f"team     {data['team']['state']}: {data['team']['path']}")
        if data["team"]["state"] in ("unusable", "malformed"):
            echo(f"         {data['team']['detail']}")
    prefs = data["global_preferences"]
    if prefs:
        echo(f"profile  {prefs.get('current', 0)} global preferences")
    inj = data["injections"]
    echo(f"sessions {inj['sessions']} · tokens injected {inj['tokens']:,} "
         f"(SessionStart {inj.get('tokens.SessionStart', 0):,} · per prompt "
         f"{inj.get('tokens.UserPromptSubmit', 0):,})")
    ext = data["extraction"]
    echo(f"llm      {plural(ext['calls'], 'call')} · ${ext['usd']:.4f} · cap "
         f"${ext['cap_usd_per_session']:.2f} per session")
    if data["sessions"]:
        echo("")
        echo("recent sessions")
        for s in data["sessions"]:
            line = (f"  {s['started_at'][:16].replace('T', ' ')}  {s['session_id'][:8]}  "
                    f"start {s['session_start_injections']}×/{s['session_start_tokens']:,}t · "
                    f"prompts {s['prompt_injections']}×/{s['prompt_tokens']:,}t · "
                    f"extraction ${s['extraction_usd']:.4f}")
            cap_hit = s["meta"].get("extract_cap_reached")
            if cap_hit:
                line += (f"  [cost cap reached: ${float(cap_hit.get('spent_usd', 0)):.4f} of "
                         f"${float(cap_hit.get('cap_usd', 0)):.2f}]")
            last = s["meta"].get("extract_last")
            if isinstance(last, dict) and last.get("status") == "failed":
                line += f"  [extraction {last.get('status')}: {last.get('reason', '')}]"
            echo(line)
    lines = {"merge candidates": [m.line(shorts[m.older_id], shorts[m.newer_id])
                                  for m in data["merge_candidates"]],
             "pruning candidates": [p.line(shorts[p.id]) for p in data["prune_candidates"]]}
    for label, found in lines.items():
        if found:
            echo("")
            echo(f"{label} ({len(found)})")
            for line in found[:10]:
                echo(f"  {line}")
    stale = data["possibly_stale"]
    if stale:
        echo("")
        echo(f"possibly stale ({len(stale)}): every path they name is gone — 'agentctx verify' "
             "resolves them")
        for item in stale[:10]:
            echo(f"  {item['short_id']:<10}  {item['title']}{gone_note(item['gone'])}")


# ----------------------------------------------------------------------------------- projects


@projects_app.callback(invoke_without_command=True)
def projects_list(ctx: typer.Context, json_out: bool = JsonOption) -> None:
    """List every project with its current record count and last activity."""
    if ctx.invoked_subcommand is not None:
        return
    with open_store() as db:
        rows = proj.list_all(db)
    if json_out:
        print_json([{**item.project._asdict(), "records": item.records,
                     "records_by_type": item.by_type, "last_seen": item.last_seen,
                     "last_session": item.last_session, "sessions": item.sessions,
                     "tokens_injected": item.tokens_injected} for item in rows])
        return
    if not rows:
        typer.echo("no projects yet")
    for item in rows:
        project = item.project
        typer.echo(f"{project.id[:12]}  {project.name:<20} {plural(item.records, 'record'):>13}  "
                   f"last {str(item.last_seen)[:10]}  {project.remote or project.root}"
                   + ("  [paused]" if project.paused else ""))


@projects_app.command("merge")
def projects_merge(old: str = typer.Argument(..., help="Project to re-home (id, prefix, name)."),
                   new: str = typer.Argument(..., help="Project that receives everything."),
                   yes: bool = YesOption) -> None:
    """Re-home every record of OLD into NEW (after a move or a new remote)."""
    with open_store() as db:
        source, target = proj.get(db, old), proj.get(db, new)
        if not yes and not typer.confirm(f"Move everything from {source.name} ({source.id}) "
                                         f"into {target.name} ({target.id})?", default=False):
            fail("nothing merged")
        moved = proj.merge(db, source.id, target.id)
    typer.echo(f"moved {plural(moved, 'record')} from {source.name} into {target.name}")


# ----------------------------------------------------------------------------------- config


@config_app.command("list")
def config_list(json_out: bool = JsonOption) -> None:
    """Every knob with its value, where the value comes from, and what it does."""
    cfg = config.Config.load()
    rows = [{"key": k.key, "value": cfg.get(k.key), "source": cfg.source(k.key),
             "default": k.default, "doc": k.doc, "invalid": cfg.invalid(k.key)}
            for k in config.KNOBS.values()]
    if json_out:
        print_json(rows)
        return
    for row in rows:
        marker = "" if row["source"] == "default" else f"  ({row['source']})"
        if row["invalid"]:
            marker = f"  ({row['source']}: invalid: using default; {row['invalid']})"
        typer.echo(f"{row['key']:<26} {_show(row['value']):<26}{marker}")
        typer.echo(f"{'':<26} {row['doc']}")
    for key in cfg.unknown_keys():
        typer.echo(f"note: {key!r} in config.json is no knob and changes nothing", err=True)


def _show(value: object) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


@config_app.command("get")
def config_get(key: str = typer.Argument(..., help="Knob name (see 'config list').")) -> None:
    """Print one knob's value."""
    cfg = config.Config.load()
    typer.echo(_show(cfg.get(key)))
    problem = cfg.invalid(key)
    if problem:
        typer.echo(f"note: invalid: using default ({problem})", err=True)


@config_app.command("set")
def config_set(key: str = typer.Argument(..., help="Knob name."),
               value: str = typer.Argument(..., help="New value (on/off for switches).")) -> None:
    """Change a knob in config.json (the AGENTCTX_<KEY> variable still wins)."""
    stored = config.set_value(key, value)
    name = key.strip().lower().replace("-", "_")
    typer.echo(f"{name} = {_show(stored)}")
    if f"AGENTCTX_{name.upper()}" in os.environ:
        typer.echo(f"note: AGENTCTX_{name.upper()} is set and overrides this", err=True)


@config_app.command("unset")
def config_unset(key: str = typer.Argument(..., help="Knob name.")) -> None:
    """Remove a knob from config.json (back to its default)."""
    removed = config.unset_value(key)
    typer.echo(f"{key} reset to default" if removed else f"{key} was not set")


# ----------------------------------------------------------------------------------- export


def export(project: str | None = ProjectOption,
           out: Path | None = typer.Option(None, "--out", "-o", help="Write to this file."),
           superseded: bool = typer.Option(False, "--superseded",
                                           help="Also list superseded records (md)."),
           fmt: str = typer.Option("md", "--format",
                                   help="md: the project as Markdown; json or jsonl: a backup of "
                                        "the whole store (or of --project)."),
           ) -> None:
    """Export the project's context as Markdown, or back up the store as JSON / JSON Lines."""
    if fmt not in ("md", "json", "jsonl"):
        fail(f"--format takes md, json or jsonl, not {fmt!r}")
    if fmt != "md":
        _export_backup(project, out, fmt)
        return

    with open_store() as db:
        text = render_markdown(db, current_project(db, project), include_superseded=superseded)
    if out is None:
        typer.echo(text, nl=False)
        return
    out.write_text(text, encoding="utf-8")
    typer.echo(f"wrote {out}")


def _export_backup(project: str | None, out: Path | None, fmt: str) -> None:
    """``export --format json|jsonl``: every table but the derived ones (atomically to --out)."""
    with open_store() as db:
        project_id = proj.get(db, project).id if project else None
        if out is None:
            write_backup(db, sys.stdout, fmt, project_id)
            return
        temp = out.with_name(f".{out.name}.tmp")
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            with open(fd, "w", encoding="utf-8") as handle:
                count = write_backup(db, handle, fmt, project_id)
            os.replace(temp, out)
        except BaseException:
            temp.unlink(missing_ok=True)
            raise
    typer.echo(f"wrote {out} ({count} rows)")


# ----------------------------------------------------------------------------------- demo


def demo(no_tui: bool = typer.Option(False, "--no-tui", help="Print status and export instead."),
         keep: Path | None = typer.Option(None, "--keep",
                                          help="Build the demo home here and keep it."),
         ) -> None:
    """Build a realistic demo store in a temporary home and open it in the TUI (in a terminal;
    otherwise, or with --no-tui, print its status and export). A temporary home opened in the
    TUI is deleted when you quit it (and says so); --keep PATH keeps it."""
    from agentctx import demo as demo_data  # late: 4 ms at every CLI start

    base = keep or Path(tempfile.mkdtemp(prefix="agentctx-demo-"))
    if keep and keep.exists() and any(keep.iterdir()):
        fail(f"{keep} is not empty; choose an empty or new folder")
    home = base / "home"
    os.environ[config.HOME_ENV] = str(home)
    deleted = False
    try:
        config.ensure_home(home)
        with Store.open(home / config.DB_NAME) as db:
            project_id = demo_data.build(db, base / "harbor")
        typer.echo(f"demo store: {home / config.DB_NAME} (project harbor, {project_id[:12]})",
                   err=True)
        if not no_tui and sys.stdout.isatty() and sys.stdin.isatty():
            from agentctx.tui.app import run_tui  # late: textual costs 0.17 s at every CLI start

            if keep is None:
                typer.echo("(a temporary home, deleted when you quit; agentctx demo --keep PATH "
                           "keeps one)", err=True)
            os.chdir(base / "harbor")
            run_tui(project=project_id, home=home)
            deleted = keep is None
            return
        with Store.open(home / config.DB_NAME) as db:
            data = _status_data(db, proj.get(db, project_id))
        os.chdir(base / "harbor")
        status(project=project_id, json_out=False)
        typer.echo("")
        export(project=project_id, out=None, superseded=False, fmt="md")
        if data["records"]:
            typer.echo(f"\nTry: AGENTCTX_HOME={home} agentctx tui   (or agentctx search "
                       "'how do we run tests')", err=True)
        if keep is None:
            typer.echo(f"(the demo home is kept at {base} until you delete it)", err=True)
            keep = base
    finally:
        if keep is None:
            os.chdir(os.path.expanduser("~"))
            shutil.rmtree(base, ignore_errors=True)
            if deleted:
                typer.echo(f"the demo home {base} is deleted", err=True)


# ----------------------------------------------------------------------------------- tui


def tui(project: str | None = ProjectOption) -> None:
    """Open the full-screen context browser (projects, records, chains, profile, sessions, live
    injections, CLAUDE.md drift, prompt preview) over the store in AGENTCTX_HOME."""
    if not (sys.stdout.isatty() and sys.stdin.isatty()):
        fail("agentctx tui needs a terminal (stdin and stdout); try 'agentctx status'")
    from agentctx.tui.app import run_tui  # late: textual costs 0.17 s at every CLI start

    run_tui(project=project)


def register(app: typer.Typer) -> None:
    """Add the administrative commands to the CLI."""
    app.command()(status)
    app.add_typer(projects_app, name="projects")
    app.add_typer(config_app, name="config")
    app.command()(export)
    app.command()(demo)
    app.command()(tui)
