"""agentctx's own entries in Claude Code's settings and MCP config, added and removed surgically.

Pure functions over parsed JSON documents: they return a changed deep copy and never touch any
key, hook group, handler or server that is not agentctx's. A hook handler is agentctx's when its
command runs ``<python> -I -m agentctx hook <event>`` (optionally preceded by
``AGENTCTX_HOME=…``), or the ``agentctx`` script with ``hook <event>`` as earlier versions
registered it (``init`` replaces those in place); the MCP server is the ``agentctx`` entry of
``mcpServers``.

Claude Code runs these commands in the user's project, often with the project on
``PYTHONPATH``: the interpreter's isolated mode (``-I``: no ``PYTHON*`` variables, no user site
folder, not the working folder) means nothing of the project — a ``re.py``, an ``agentctx/``
folder, a ``sitecustomize.py`` — runs before agentctx does. The console script could not
promise that: it imports modules before agentctx can drop the path. When agentctx is installed
in the user's site folder (``pip install --user``, which ``-I`` leaves out), the command puts
exactly that folder on the path itself (:data:`BOOT`).
"""

from __future__ import annotations

import copy
import shlex
from typing import Any, NamedTuple

from agentctx.install.jsonfile import InstallError

SERVER_NAME = "agentctx"

# Claude Code fires PostToolUse/PostToolUseFailure for every tool; the capture only reads file
# edits and shell commands, so the matcher spares a Python start for every Read, Grep or Glob.
POST_TOOL_MATCHER = "Write|Edit|MultiEdit|NotebookEdit|Bash"


class HookSpec(NamedTuple):
    """One hook registration: a Claude Code event, our ``agentctx hook`` argument and its limits."""

    event: str  # Claude Code's event name
    argument: str  # `agentctx hook <argument>`
    timeout: int  # seconds (hook timeouts are seconds; MCP timeouts are milliseconds)
    matcher: str | None = None  # None: no matcher, so every source/tool fires it
    run_async: bool = False


# Timeouts, in seconds. The synchronous hooks normally answer in well under a second; their
# timeouts only bound a pathological case (a store locked past its 3 s busy timeout, a cold disk)
# and stay far below UserPromptSubmit's 30 s hard ceiling, where a timeout silently discards the
# injection. SessionEnd gets 5 s: Claude Code gives all SessionEnd hooks 1.5 s together unless a
# timeout raises it, and our hook only spawns a detached child, but a Python start on a loaded
# machine can exceed 1.5 s, and 5 s is still a short wait at exit. The async hooks run in the
# background (nobody waits on them); 30 s is ample for a capture or a spawn.
HOOKS: tuple[HookSpec, ...] = (
    HookSpec("SessionStart", "session-start", 10),  # no matcher: startup, resume, clear, compact
    HookSpec("UserPromptSubmit", "prompt", 10),
    HookSpec("PostToolUse", "post-tool", 30, POST_TOOL_MATCHER, run_async=True),
    HookSpec("PostToolUseFailure", "post-tool", 30, POST_TOOL_MATCHER, run_async=True),
    HookSpec("PreCompact", "pre-compact", 10),
    HookSpec("Stop", "stop", 30, run_async=True),
    HookSpec("SessionEnd", "session-end", 5),
    HookSpec("CwdChanged", "cwd-changed", 10),
    HookSpec("SubagentStart", "subagent-start", 10),  # synchronous: the subagent must see it
)


# Run with ``python -I -c BOOT <folder> …``: the folder holding agentctx goes first on the path.
BOOT = ("import sys; sys.path.insert(0, sys.argv.pop(1)); "
        "from agentctx.__main__ import main; main()")


def launch_argv(python: str, folder: str | None = None) -> list[str]:
    """The argv that starts agentctx with ``python`` in isolated mode; ``folder``: the folder
    agentctx is imported from, when ``-I`` alone would not find it (the user's site folder)."""
    if folder is None:
        return [python, "-I", "-m", "agentctx"]
    return [python, "-I", "-c", BOOT, folder]


def _is_launch(argv: list[str]) -> bool:
    """Whether ``argv`` is what :func:`launch_argv` makes (for any interpreter and folder)."""
    return (len(argv) == 4 and argv[1:] == ["-I", "-m", "agentctx"]) or (
        len(argv) == 5 and argv[1:4] == ["-I", "-c", BOOT])


def hook_command(launcher: list[str], argument: str, home_env: str | None) -> str:
    """The shell command of one hook:
    ``[AGENTCTX_HOME=…] /abs/python -I -m agentctx hook <argument>``."""
    parts = [f"AGENTCTX_HOME={shlex.quote(home_env)}"] if home_env else []
    parts += [*(shlex.quote(part) for part in launcher), "hook", argument]
    return " ".join(parts)


def handler(spec: HookSpec, launcher: list[str], home_env: str | None) -> dict[str, Any]:
    """The handler object written for ``spec``."""
    entry: dict[str, Any] = {"type": "command",
                             "command": hook_command(launcher, spec.argument, home_env)}
    if spec.run_async:
        entry["async"] = True
    entry["timeout"] = spec.timeout
    return entry


def parse_command(command: str) -> tuple[dict[str, str], list[str]] | None:
    """Split a hook command into its leading ``NAME=value`` assignments and the argv."""
    try:
        tokens = shlex.split(command)
    except ValueError:
        return None
    env: dict[str, str] = {}
    while tokens and "=" in tokens[0] and tokens[0].split("=", 1)[0].isidentifier():
        name, value = tokens.pop(0).split("=", 1)
        env[name] = value
    return env, tokens


def is_agentctx_command(command: object) -> bool:
    """Whether a hook command runs ``agentctx hook <event>`` (any interpreter or script path)."""
    if not isinstance(command, str):
        return False
    parsed = parse_command(command)
    if parsed is None:
        return False
    argv = parsed[1]
    return len(argv) >= 3 and argv[-2] == "hook" and (is_legacy(argv) or _is_launch(argv[:-2]))


def is_legacy(argv: list[str]) -> bool:
    """Whether a hook's argv runs the ``agentctx`` script, as versions before isolated mode
    registered it (project code on ``PYTHONPATH`` could run in those hooks)."""
    return len(argv) == 3 and argv[0].rsplit("/", 1)[-1] == "agentctx" and argv[1] == "hook"


def is_agentctx_handler(entry: object) -> bool:
    """Whether a handler object is one of agentctx's."""
    return (isinstance(entry, dict) and entry.get("type", "command") == "command"
            and is_agentctx_command(entry.get("command")))


def _object_at(data: dict[str, Any], key: str, where: str) -> dict[str, Any] | None:
    """``data[key]`` when it is an object, ``None`` when absent; anything else is refused."""
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, dict):
        raise InstallError(f"{where}: \"{key}\" must be an object; fix it and run the command "
                           "again; nothing was changed")
    return value


def _hooks_object(data: dict[str, Any], where: str) -> dict[str, Any] | None:
    return _object_at(data, "hooks", where)


def our_handlers(data: dict[str, Any]) -> dict[str, list[tuple[str | None, dict[str, Any]]]]:
    """agentctx's handlers per event, each with its group's matcher (for checks and doctor)."""
    found: dict[str, list[tuple[str | None, dict[str, Any]]]] = {}
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return found
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            continue
        for group in groups:
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                continue
            matcher = group.get("matcher")
            for entry in group["hooks"]:
                if is_agentctx_handler(entry):
                    found.setdefault(event, []).append(
                        (matcher if isinstance(matcher, str) else None, entry))
    return found


def hooks_in_place(data: dict[str, Any], specs: tuple[HookSpec, ...], launcher: list[str],
                   home_env: str | None) -> bool:
    """Whether ``data`` already holds exactly our handlers for ``specs`` and no other of ours."""
    found = our_handlers(data)
    if set(found) != {spec.event for spec in specs}:
        return False
    for spec in specs:
        entries = found[spec.event]
        if len(entries) != 1:
            return False
        matcher, entry = entries[0]
        if matcher != spec.matcher or entry != handler(spec, launcher, home_env):
            return False
    return True


def _strip_ours(groups: list[Any]) -> tuple[list[Any], int]:
    """Groups without our handlers; a group left with no handler at all is dropped."""
    kept: list[Any] = []
    removed = 0
    for group in groups:
        if isinstance(group, dict) and isinstance(group.get("hooks"), list):
            handlers = [h for h in group["hooks"] if not is_agentctx_handler(h)]
            dropped = len(group["hooks"]) - len(handlers)
            if dropped:
                removed += dropped
                if not handlers:
                    continue
                group = {**group, "hooks": handlers}
        kept.append(group)
    return kept, removed


def add_hooks(data: dict[str, Any], specs: tuple[HookSpec, ...], launcher: list[str],
              home_env: str | None, where: str) -> dict[str, Any]:
    """A copy of ``data`` with our hooks registered (replacing any older registration of ours).

    Our handlers are removed from every event, then one group per spec is appended to its event;
    every other group and handler stays where it was.
    """
    result = copy.deepcopy(data)
    hooks = _hooks_object(result, where)
    if hooks is None:
        hooks = result["hooks"] = {}
    for spec in specs:
        current = hooks.get(spec.event)
        if current is not None and not isinstance(current, list):
            raise InstallError(f"{where}: \"hooks.{spec.event}\" must be a list; fix it and run "
                               "the command again; nothing was changed")
    wanted = {spec.event for spec in specs}
    for event in list(hooks):
        if isinstance(hooks[event], list):
            kept, removed = _strip_ours(hooks[event])
            if removed and not kept and event not in wanted:
                del hooks[event]  # an event we no longer use, which held only our handler
            elif removed:
                hooks[event] = kept
    for spec in specs:
        group: dict[str, Any] = {}
        if spec.matcher is not None:
            group["matcher"] = spec.matcher
        group["hooks"] = [handler(spec, launcher, home_env)]
        hooks.setdefault(spec.event, []).append(group)
    return result


def remove_hooks(data: dict[str, Any], before: dict[str, Any] | None) -> tuple[dict[str, Any], int]:
    """A copy of ``data`` without our handlers, and how many were removed.

    An event list or ``hooks`` object emptied by the removal is dropped too, unless it already
    existed in ``before`` (the document as it was before ``init``; ``None`` when unknown).
    """
    result = copy.deepcopy(data)
    hooks = result.get("hooks")
    if not isinstance(hooks, dict):
        return result, 0
    before_hooks = before.get("hooks") if isinstance(before, dict) else None
    total = 0
    for event in list(hooks):
        if not isinstance(hooks[event], list):
            continue
        kept, removed = _strip_ours(hooks[event])
        if not removed:
            continue
        total += removed
        existed = isinstance(before_hooks, dict) and event in before_hooks
        if kept or existed:
            hooks[event] = kept
        else:
            del hooks[event]
    if total and not hooks and not (isinstance(before, dict) and "hooks" in before):
        del result["hooks"]
    return result, total


def mcp_entry(launcher: list[str], home_env: str | None) -> dict[str, Any]:
    """The server entry, in exactly the shape ``claude mcp add`` writes."""
    return {"type": "stdio", "command": launcher[0], "args": [*launcher[1:], "mcp"],
            "env": {"AGENTCTX_HOME": home_env} if home_env else {}}


def _servers(data: dict[str, Any], where: str) -> dict[str, Any] | None:
    return _object_at(data, "mcpServers", where)


def current_server(data: dict[str, Any], where: str) -> Any:
    """Our server entry in ``data`` (``None`` when absent); a malformed container is refused."""
    servers = _servers(data, where)
    return None if servers is None else servers.get(SERVER_NAME)


def add_server(data: dict[str, Any], entry: dict[str, Any], where: str) -> dict[str, Any]:
    """A copy of ``data`` with ``mcpServers.agentctx`` set to ``entry`` (other servers kept)."""
    result = copy.deepcopy(data)
    servers = _servers(result, where)
    if servers is None:
        servers = result["mcpServers"] = {}
    servers[SERVER_NAME] = copy.deepcopy(entry)
    return result


def remove_server(data: dict[str, Any],
                  before: dict[str, Any] | None) -> tuple[dict[str, Any], int]:
    """A copy of ``data`` without our server; an emptied ``mcpServers`` we created is dropped."""
    result = copy.deepcopy(data)
    servers = result.get("mcpServers")
    if not isinstance(servers, dict) or SERVER_NAME not in servers:
        return result, 0
    del servers[SERVER_NAME]
    if not servers and not (isinstance(before, dict) and "mcpServers" in before):
        del result["mcpServers"]
    return result, 1


def has_ours(kind: str, data: dict[str, Any]) -> bool:
    """Whether a document holds any agentctx entry of ``kind`` (``settings`` or ``mcp``)."""
    if kind == "settings":
        return bool(our_handlers(data))
    servers = data.get("mcpServers")
    return isinstance(servers, dict) and SERVER_NAME in servers
