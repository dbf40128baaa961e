"""``init`` and ``uninstall``: plan the changes, show them, apply them, undo exactly them.

Planning reads and validates every file first, so a malformed file stops the command before
anything is written. Applying records each file in the install state (a one-time backup, the
hash of what was written) before and after changing it, so an interrupted run never loses the
way back.
"""

from __future__ import annotations

import copy
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentctx.core import config
from agentctx.install import claude_cli, entries, jsonfile, paths
from agentctx.install import state as install_state
from agentctx.install.entries import HOOKS, HookSpec
from agentctx.install.jsonfile import InstallError, JsonDoc
from agentctx.install.state import FileState, InstallState


@dataclass
class Step:
    """One file's change: what it is, and (after applying) whether it happened."""

    path: Path
    kind: str  # "settings" or "mcp"
    scope: str
    action: str  # add | update | unchanged | restore | remove | delete | none | error
    detail: str

    def line(self) -> str:
        """One line for the user."""
        return f"{jsonfile.display(self.path)}: {self.detail}"


@dataclass
class InitPlan:
    """What ``init`` will do."""

    scope: str
    launcher: list[str]  # the argv that starts agentctx: <python> -I -m agentctx
    home_env: str | None
    claude: str | None
    targets: paths.Targets
    settings_doc: JsonDoc
    settings_new: dict[str, Any] | None  # None: already in place
    mcp_doc: JsonDoc
    mcp_entry: dict[str, Any]
    mcp_current: Any
    specs: tuple[HookSpec, ...] = HOOKS
    steps: list[Step] = field(default_factory=list)
    # The files as apply_init found them, by path (what a roll back restores).
    found: dict[str, JsonDoc] = field(default_factory=dict)

    @property
    def changes(self) -> bool:
        """Whether applying the plan writes anything."""
        return any(step.action in ("add", "update") for step in self.steps)


def plan_init(scope: str = "user", *, cwd: Path | None = None, launcher: str | None = None,
              claude: str | bool | None = True, specs: tuple[HookSpec, ...] = HOOKS) -> InitPlan:
    """Validate both files of ``scope`` and work out the changes (nothing is written).

    ``launcher``: the interpreter the commands run (default: this one). ``claude``: ``True``
    finds ``claude`` on PATH; a path uses that; ``False``/``None`` edits the MCP config file
    directly. Registrations of an earlier version (the ``agentctx`` script) are replaced.
    """
    paths.check_python()
    targets = paths.targets(scope, cwd)
    exe = paths.launch_argv(launcher)
    home_env = paths.home_env()
    claude_path = paths.find_claude() if claude is True else (claude or None)
    settings_doc = jsonfile.load(targets.settings)
    mcp_doc = jsonfile.load(targets.mcp)
    where_settings = jsonfile.display(targets.settings)
    where_mcp = jsonfile.display(targets.mcp)

    settings_new: dict[str, Any] | None = None
    steps: list[Step] = []
    if entries.hooks_in_place(settings_doc.data, specs, exe, home_env):
        steps.append(Step(targets.settings, "settings", scope, "unchanged",
                          "hooks already registered"))
    else:
        settings_new = entries.add_hooks(settings_doc.data, specs, exe, home_env, where_settings)
        had = entries.has_ours("settings", settings_doc.data)
        events = ", ".join(dict.fromkeys(spec.event for spec in specs))
        steps.append(Step(targets.settings, "settings", scope, "update" if had else "add",
                          f"{'update' if had else 'add'} {len(specs)} hook handlers ({events})"))

    desired = entries.mcp_entry(exe, home_env)
    current = entries.current_server(mcp_doc.data, where_mcp)
    if current == desired:
        steps.append(Step(targets.mcp, "mcp", scope, "unchanged", "MCP server already registered"))
    else:
        how = f"'claude mcp add -s {scope}'" if claude_path else "a direct edit"
        verb = "update" if current is not None else "add"
        steps.append(Step(targets.mcp, "mcp", scope, verb,
                          f"{'re-register' if current is not None else 'register'} MCP server "
                          f"'{entries.SERVER_NAME}' ({' '.join(exe)} mcp) via {how}"))
    return InitPlan(scope, exe, home_env, claude_path, targets, settings_doc, settings_new,
                    mcp_doc, desired, current, specs, steps)


def _missing_parents(path: Path) -> list[Path]:
    missing: list[Path] = []
    parent = path.parent
    while not parent.exists():
        missing.append(parent)
        parent = parent.parent
    return missing


def _track(state: InstallState, path: Path, kind: str, scope: str, doc: JsonDoc,
           home: Path) -> FileState:
    """The state entry of ``path``, created (with the one-time backup) on first sight."""
    key = str(path)
    current_hash = jsonfile.sha256(doc.raw if doc.exists else None)
    entry = state.files.get(key)
    if entry is None:
        backup = install_state.make_backup(path, doc.raw, home) if doc.exists else None
        entry = FileState(kind=kind, scope=scope, existed=doc.exists, mode=doc.mode,
                          backup=backup,
                          # a file that already holds our entries has no clean "before"
                          restorable=not entries.has_ours(kind, doc.data),
                          written_sha256=current_hash)
        state.files[key] = entry
        install_state.save(state, home)
    elif entry.restorable and entry.written_sha256 != current_hash:
        entry.restorable = False  # something else changed it since our last write
        install_state.save(state, home)
    return entry


def _file_mode(doc: JsonDoc, default: int) -> int:
    if doc.mode is not None:
        return doc.mode
    umask = os.umask(0)
    os.umask(umask)
    return default & ~umask


def preflight(plan: InitPlan) -> None:
    """Raise :class:`InstallError` before anything is written when a file ``plan`` changes (or
    the agentctx home) cannot be written: ``init`` is all or nothing."""
    jsonfile.check_writable(config.home() / "install" / "state.json")
    for step in plan.steps:
        if step.action in ("add", "update"):
            jsonfile.check_writable(step.path)


def apply_init(plan: InitPlan) -> list[Step]:
    """Apply ``plan``: MCP registration first, then the hooks; returns the steps taken.

    All or nothing: a file that cannot be written stops it before any change
    (:func:`preflight`), and a failure writing the hooks puts the MCP file and the install
    state back as they were.
    """
    preflight(plan)
    home = config.ensure_home()
    state = install_state.load(home)
    before_state = copy.deepcopy(state)
    try:
        return _apply_init(plan, state, home)
    except InstallError as exc:
        _roll_back(plan, state, before_state, home)
        raise InstallError(f"{exc}; nothing was changed") from None


def _apply_init(plan: InitPlan, state: InstallState, home: Path) -> list[Step]:
    state.launcher, state.home_env = plan.launcher[0], plan.home_env
    state.installed_at = state.installed_at or time.strftime("%Y-%m-%dT%H:%M:%S%z")
    by_kind = {step.kind: step for step in plan.steps}

    # MCP server (re-read: the file may have changed since planning)
    mcp_doc = jsonfile.load(plan.targets.mcp)
    plan.found[str(plan.targets.mcp)] = mcp_doc
    current = entries.current_server(mcp_doc.data, jsonfile.display(plan.targets.mcp))
    entry = _track(state, plan.targets.mcp, "mcp", plan.scope, mcp_doc, home)
    if current != plan.mcp_entry:
        created = _missing_parents(plan.targets.mcp)
        written: bytes | None = None
        if plan.claude:
            try:
                written = _add_with_claude(plan, current)
                entry.via = "claude"
            except InstallError as exc:  # an old or broken `claude`: edit the file instead
                by_kind["mcp"].detail += f" — {exc}; edited the file directly instead"
                mcp_doc = jsonfile.load(plan.targets.mcp)
        if written is None:
            new = entries.add_server(mcp_doc.data, plan.mcp_entry,
                                     jsonfile.display(plan.targets.mcp))
            written = jsonfile.render(mcp_doc, new)
            created = jsonfile.write_atomic(plan.targets.mcp, written,
                                            _file_mode(mcp_doc, _default_mode(plan.targets.mcp)))
            entry.via = "edit"
        entry.written_sha256 = jsonfile.sha256(written)
        entry.created_dirs = sorted({*entry.created_dirs, *(str(p) for p in created)})
        install_state.save(state, home)
    else:
        by_kind["mcp"].action = "unchanged"

    # hooks
    settings_doc = jsonfile.load(plan.targets.settings)
    plan.found[str(plan.targets.settings)] = settings_doc
    where = jsonfile.display(plan.targets.settings)
    entry = _track(state, plan.targets.settings, "settings", plan.scope, settings_doc, home)
    if not entries.hooks_in_place(settings_doc.data, plan.specs, plan.launcher, plan.home_env):
        new = entries.add_hooks(settings_doc.data, plan.specs, plan.launcher, plan.home_env, where)
        written = jsonfile.render(settings_doc, new)
        created = jsonfile.write_atomic(plan.targets.settings, written,
                                        _file_mode(settings_doc, 0o644))
        entry.written_sha256 = jsonfile.sha256(written)
        entry.created_dirs = sorted({*entry.created_dirs, *(str(p) for p in created)})
        install_state.save(state, home)
    else:
        by_kind["settings"].action = "unchanged"
    return plan.steps


def _roll_back(plan: InitPlan, state: InstallState, before: InstallState, home: Path) -> None:
    """Undo what an interrupted :func:`apply_init` wrote: each file's bytes as they were, the
    folders it created, the install state and the backups taken for it. Best effort: the error
    being raised says what failed, and ``uninstall`` can still clean up."""
    for name, doc in plan.found.items():
        path = Path(name)
        try:
            if jsonfile.read_bytes(path) != (doc.raw if doc.exists else None):
                if doc.exists:
                    jsonfile.write_atomic(path, doc.raw, doc.mode if doc.mode is not None
                                          else _default_mode(path))
                else:
                    jsonfile.remove_file(path)
        except InstallError:
            continue
        entry, kept = state.files.get(name), before.files.get(name)
        if entry is not None:
            created = set(entry.created_dirs) - set(kept.created_dirs if kept else ())
            jsonfile.remove_empty_folders([Path(folder) for folder in created])
    for name, entry in state.files.items():
        previous = before.files.get(name)
        if entry.backup and (previous is None or previous.backup != entry.backup):
            try:
                install_state.drop_backup(entry, home)
            except InstallError:
                pass
    try:
        install_state.save(before, home)
    except InstallError:
        pass


def _add_with_claude(plan: InitPlan, current: Any) -> bytes:
    """Register through ``claude mcp add``; returns the file's bytes afterwards."""
    assert plan.claude is not None
    cwd = plan.targets.project_root
    if current is not None:
        claude_cli.remove(plan.claude, plan.scope, cwd)
    claude_cli.add(plan.claude, plan.scope, plan.mcp_entry, cwd)
    after = jsonfile.load(plan.targets.mcp)
    if entries.current_server(after.data, jsonfile.display(plan.targets.mcp)) != plan.mcp_entry:
        raise InstallError(f"'claude mcp add' did not write the expected entry into "
                           f"{jsonfile.display(plan.targets.mcp)}")
    return after.raw


def _default_mode(path: Path) -> int:
    # Claude Code creates ~/.claude.json private (0600); .mcp.json is meant to be shared.
    return 0o600 if path.name == ".claude.json" else 0o644


# ---------------------------------------------------------------------------------------------
# uninstall


@dataclass
class UninstallPlan:
    """What ``uninstall`` will do, file by file."""

    home: Path
    state: InstallState
    claude: str | None
    steps: list[Step] = field(default_factory=list)
    entries_by_path: dict[str, FileState | None] = field(default_factory=dict)

    @property
    def changes(self) -> bool:
        """Whether applying the plan changes anything."""
        return any(step.action in ("restore", "remove", "delete") for step in self.steps)


def _home_from_hooks() -> Path | None:
    """The ``AGENTCTX_HOME`` written into the user's registered hooks, if any."""
    try:
        doc = jsonfile.load(paths.user_settings())
    except InstallError:
        return None
    for handlers in entries.our_handlers(doc.data).values():
        for _, handler in handlers:
            parsed = entries.parse_command(str(handler.get("command", "")))
            if parsed and parsed[0].get("AGENTCTX_HOME"):
                return Path(parsed[0]["AGENTCTX_HOME"])
    return None


def _before_data(entry: FileState | None, home: Path) -> dict[str, Any] | None:
    if entry is None:
        return None
    if not entry.existed:
        return {}
    try:
        raw = entry.before_bytes(home)
    except OSError:
        return None
    if raw is None:
        return None
    try:
        data = jsonfile.parse(Path(entry.backup or "backup"), raw).data
    except InstallError:
        return None
    # a file that already held our entries: what their removal empties did not exist "before"
    data, _ = entries.remove_hooks(data, None)
    data, _ = entries.remove_server(data, None)
    return data


def _backup_readable(entry: FileState, home: Path) -> bool:
    if not entry.existed:
        return True
    try:
        return entry.before_bytes(home) is not None
    except OSError:
        return False


def plan_uninstall(*, cwd: Path | None = None, claude: str | bool | None = True) -> UninstallPlan:
    """Work out how to undo every recorded installation, plus any agentctx entry left in the
    user's files or the current project's (nothing is written)."""
    home = config.home()
    state = install_state.load(home)
    if not state.files:
        other = _home_from_hooks()
        if other is not None and other != home and install_state.state_path(other).exists():
            home, state = other, install_state.load(other)
    claude_path = paths.find_claude() if claude is True else (claude or None)
    plan = UninstallPlan(home, state, claude_path)

    candidates: list[tuple[Path, str, str, FileState | None]] = [
        (Path(name), entry.kind, entry.scope, entry) for name, entry in state.files.items()]
    defaults = [paths.targets("user")]
    try:
        defaults.append(paths.targets("project", cwd))
    except OSError:
        pass
    for target in defaults:
        for path, kind in ((target.settings, "settings"), (target.mcp, "mcp")):
            if str(path) not in {str(candidate[0]) for candidate in candidates}:
                candidates.append((path, kind, target.scope, None))

    for path, kind, scope, entry in candidates:
        raw = jsonfile.read_bytes(path) if not path.is_dir() else None
        plan.entries_by_path[str(path)] = entry
        if entry is not None and entry.restorable and _backup_readable(entry, home) and \
                jsonfile.sha256(raw) == entry.written_sha256:
            detail = "restore the file as it was before init" if entry.existed \
                else "delete the file (init created it)"
            plan.steps.append(Step(path, kind, scope, "restore" if entry.existed else "delete",
                                   detail))
            continue
        if raw is None:
            if entry is not None:
                plan.steps.append(Step(path, kind, scope, "none", "already gone"))
            continue
        try:
            doc = jsonfile.parse(path, raw)
        except InstallError as exc:
            plan.steps.append(Step(path, kind, scope, "error", str(exc)))
            continue
        if not entries.has_ours(kind, doc.data):
            if entry is not None:
                plan.steps.append(Step(path, kind, scope, "none", "no agentctx entries left"))
            continue
        what = "remove agentctx's hook handlers" if kind == "settings" \
            else f"remove MCP server '{entries.SERVER_NAME}'"
        plan.steps.append(Step(path, kind, scope, "remove",
                               f"{what} (the file changed since init; everything else is kept)"
                               if entry is not None else what))
    return plan


def apply_uninstall(plan: UninstallPlan) -> list[Step]:
    """Apply ``plan``; a file that cannot be handled is reported and the others still are."""
    folders: list[Path] = []
    for step in plan.steps:
        entry = plan.entries_by_path.get(str(step.path))
        try:
            if step.action == "restore" and entry is not None:
                before = entry.before_bytes(plan.home) or b""
                jsonfile.write_atomic(step.path, before, entry.mode if entry.mode is not None
                                      else 0o644)
                install_state.drop_backup(entry, plan.home)
            elif step.action == "delete":
                jsonfile.remove_file(step.path)
            elif step.action == "remove":
                _remove_surgically(plan, step, entry)
            if entry is not None and step.action != "error":
                folders += [Path(p) for p in entry.created_dirs]
                plan.state.files.pop(str(step.path), None)
                install_state.save(plan.state, plan.home)
        except InstallError as exc:
            step.action, step.detail = "error", str(exc)
    jsonfile.remove_empty_folders(folders)  # only folders init created, and only when empty
    return plan.steps


def _remove_surgically(plan: UninstallPlan, step: Step, entry: FileState | None) -> None:
    before = _before_data(entry, plan.home)
    doc = jsonfile.load(step.path)
    if step.kind == "mcp" and plan.claude and entries.has_ours("mcp", doc.data):
        cwd = step.path.parent if step.scope == "project" else None
        claude_cli.remove(plan.claude, step.scope, cwd)
        doc = jsonfile.load(step.path)
    if step.kind == "settings":
        new, _ = entries.remove_hooks(doc.data, before)
    else:
        new, _ = entries.remove_server(doc.data, before)
        servers = new.get("mcpServers")
        # `claude mcp remove` leaves an empty mcpServers behind; drop it if init created it
        if servers == {} and before is not None and "mcpServers" not in before:
            del new["mcpServers"]
    if entry is not None and not entry.existed and new == {}:
        jsonfile.remove_file(step.path)  # init created the file and only our entries were in it
    elif new != doc.data:
        mode = doc.mode if doc.mode is not None else _default_mode(step.path)
        jsonfile.write_atomic(step.path, jsonfile.render(doc, new), mode)
