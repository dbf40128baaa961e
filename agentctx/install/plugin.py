"""agentctx as a Claude Code plugin: the documents its folder holds, and finding it installed.

The plugin (``plugin/`` in the repository, listed by the marketplace manifest
``.claude-plugin/marketplace.json`` at the repository root) registers the same hooks ``agentctx
init`` writes — same events, matchers, async flags and timeouts, from :data:`entries.HOOKS` —
and the MCP server, both through the plugin's launcher ``bin/agentctx-run``: it finds the
``agentctx`` installed on ``PATH`` and starts its interpreter in isolated mode (``-I -m
agentctx``), as ``init`` registers it, so no project code on ``PYTHONPATH`` runs. It exits 0
without a word when ``agentctx`` is not installed, so a plugin installed before the package
never disturbs a session.

Claude Code records an installed plugin as ``enabledPlugins["agentctx@<marketplace>"] = true`` in
the settings file of its scope; :func:`enabled_plugins` reads those, so ``init`` can leave the
registration to the plugin and ``doctor`` can flag a double registration.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple

from agentctx.install import entries, jsonfile, paths
from agentctx.install.entries import HOOKS, HookSpec
from agentctx.install.jsonfile import InstallError

PLUGIN_NAME = "agentctx"
# The MCP server's name inside the plugin: Claude Code calls it plugin:agentctx:agentctx and
# names its tools mcp__plugin_agentctx_agentctx__<tool>.
PLUGIN_SERVER = entries.SERVER_NAME
TOOL_PREFIX = f"mcp__plugin_{PLUGIN_NAME}_{PLUGIN_SERVER}__"
# The folder of the plugin, relative to the repository root (and the marketplace's source).
PLUGIN_FOLDER = "plugin"
MARKETPLACE_NAME = "agentctx"
INSTALL_HINT = "pipx install agentctx (or pip install agentctx)"


# The plugin's launcher, as Claude Code names it in a plugin's hooks and MCP servers.
LAUNCHER = "${CLAUDE_PLUGIN_ROOT}/bin/agentctx-run"


def hook_command(argument: str) -> str:
    """The plugin's shell command for ``agentctx hook <argument>``: silent when not installed."""
    return f'"{LAUNCHER}" hook {argument}'



def hooks_document(specs: tuple[HookSpec, ...] = HOOKS) -> dict[str, Any]:
    """``hooks/hooks.json`` of the plugin: one group per spec, exactly as ``init`` writes them
    apart from the command."""
    hooks: dict[str, list[dict[str, Any]]] = {}
    for spec in specs:
        handler: dict[str, Any] = {"type": "command", "command": hook_command(spec.argument)}
        if spec.run_async:
            handler["async"] = True
        handler["timeout"] = spec.timeout
        group: dict[str, Any] = {}
        if spec.matcher is not None:
            group["matcher"] = spec.matcher
        group["hooks"] = [handler]
        hooks.setdefault(spec.event, []).append(group)
    return {"description": "agentctx: inject decisions and conventions, capture the session",
            "hooks": hooks}


def mcp_document() -> dict[str, Any]:
    """``.mcp.json`` of the plugin: the stdio server, started by the plugin's launcher."""
    return {"mcpServers": {PLUGIN_SERVER: {"type": "stdio", "command": LAUNCHER,
                                           "args": ["mcp"]}}}


def render(document: dict[str, Any]) -> str:
    """A plugin JSON document as it is committed (two-space indent, final newline)."""
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def generated_files() -> dict[str, str]:
    """The plugin files generated from the code, by path inside the plugin folder."""
    return {"hooks/hooks.json": render(hooks_document()), ".mcp.json": render(mcp_document())}


def write_generated(plugin_root: Path) -> list[Path]:
    """Write :func:`generated_files` into ``plugin_root`` (after a change to the hook specs)."""
    written = []
    for name, text in generated_files().items():
        target = plugin_root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        written.append(target)
    return written


class EnabledPlugin(NamedTuple):
    """The agentctx plugin enabled in one settings file."""

    key: str  # agentctx@<marketplace>
    settings: Path  # the file that enables it

    @property
    def marketplace(self) -> str:
        """The marketplace it was installed from."""
        return self.key.partition("@")[2]

    def describe(self) -> str:
        """``agentctx@market (enabled in ~/.claude/settings.json)``."""
        return f"{self.key} (enabled in {jsonfile.display(self.settings)})"


def settings_files(cwd: Path | None = None) -> list[Path]:
    """The settings files whose ``enabledPlugins`` apply in ``cwd``: user, project, local."""
    files = [paths.user_settings()]
    try:
        root = paths.project_root(cwd)
    except OSError:
        return files
    files += [root / ".claude" / "settings.json", root / ".claude" / "settings.local.json"]
    return list(dict.fromkeys(files))  # the project may be the home folder itself


def enabled_plugins(cwd: Path | None = None) -> list[EnabledPlugin]:
    """Every settings file here that enables the agentctx plugin (from any marketplace).

    A file that cannot be read or parsed is skipped: this only decides whether to register a
    second copy, and ``doctor`` reports broken settings files on its own.
    """
    found: list[EnabledPlugin] = []
    for path in settings_files(cwd):
        try:
            data = jsonfile.load(path).data
        except InstallError:
            continue
        enabled = data.get("enabledPlugins")
        if not isinstance(enabled, dict):
            continue
        for key, value in enabled.items():
            if isinstance(key, str) and key.partition("@")[0] == PLUGIN_NAME and value is True:
                found.append(EnabledPlugin(key, path))
    return found
