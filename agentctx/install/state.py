"""What ``init`` did, kept in the home so ``uninstall`` can undo exactly that.

For every file ``init`` touched: whether it existed, a one-time backup of its bytes before the
first change (``<home>/install/backups``), its permission bits, the hash of what agentctx last
wrote, and the folders it had to create. A file whose bytes still equal what agentctx wrote is
restored byte for byte at uninstall; a file changed by anything else since is edited surgically.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from agentctx.core import config
from agentctx.install import jsonfile
from agentctx.install.jsonfile import InstallError

STATE_VERSION = 1


@dataclass
class FileState:
    """One file agentctx's installation touched."""

    kind: str  # "settings" (hooks) or "mcp" (server registration)
    scope: str  # "user" or "project"
    existed: bool  # whether the file existed before the first init
    mode: int | None  # its permission bits then
    backup: str | None  # backup file name under <home>/install/backups
    restorable: bool  # the backup is a clean "before" (nothing else changed the file since)
    written_sha256: str | None = None  # hash of the bytes agentctx last wrote
    created_dirs: list[str] = field(default_factory=list)
    via: str = "edit"  # "edit" (surgical) or "claude" (claude mcp add)

    def before_bytes(self, home: Path) -> bytes | None:
        """The file's bytes before the first init (``None``: it did not exist)."""
        if not self.existed or self.backup is None:
            return None
        return (home / "install" / "backups" / self.backup).read_bytes()


@dataclass
class InstallState:
    """Everything ``init`` recorded, by absolute file path."""

    files: dict[str, FileState] = field(default_factory=dict)
    launcher: str | None = None
    home_env: str | None = None
    installed_at: str | None = None


def folder(home: Path | None = None) -> Path:
    """``<home>/install``."""
    return (home or config.home()) / "install"


def state_path(home: Path | None = None) -> Path:
    """The state file."""
    return folder(home) / "state.json"


def load(home: Path | None = None) -> InstallState:
    """The recorded state (empty when nothing was installed from this home)."""
    path = state_path(home)
    raw = jsonfile.read_bytes(path)
    if raw is None:
        return InstallState()
    try:
        data: dict[str, Any] = json.loads(raw.decode("utf-8"))
        files = {name: FileState(**entry) for name, entry in data.get("files", {}).items()}
        return InstallState(files=files, launcher=data.get("launcher"),
                            home_env=data.get("home_env"), installed_at=data.get("installed_at"))
    except (ValueError, TypeError, AttributeError) as exc:
        raise InstallError(f"{jsonfile.display(path)} is damaged ({exc}); move it away and run "
                           "the command again (agentctx then edits surgically)") from None


def save(state: InstallState, home: Path | None = None) -> None:
    """Write the state atomically (or remove it when it records nothing)."""
    path = state_path(home)
    if not state.files:
        jsonfile.remove_file(path)
        return
    data = {"version": STATE_VERSION, "launcher": state.launcher, "home_env": state.home_env,
            "installed_at": state.installed_at,
            "files": {name: asdict(entry) for name, entry in sorted(state.files.items())}}
    config.ensure_home(home or config.home())
    folder(home).mkdir(mode=0o700, exist_ok=True)
    payload = (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    jsonfile.write_atomic(path, payload, 0o600)


def make_backup(path: Path, raw: bytes, home: Path | None = None) -> str:
    """Keep ``raw`` (the bytes of ``path`` before agentctx changed it); returns the backup name."""
    backups = folder(home) / "backups"
    backups.mkdir(mode=0o700, parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%S")
    name = f"{stamp}-{os.getpid()}-{path.name.lstrip('.')}"
    counter = 0
    while (backups / name).exists():
        counter += 1
        name = f"{stamp}-{os.getpid()}-{counter}-{path.name.lstrip('.')}"
    jsonfile.write_atomic(backups / name, raw, 0o600)
    return name


def drop_backup(entry: FileState, home: Path | None = None) -> None:
    """Delete the backup of a file that was restored byte for byte (it is redundant now)."""
    if entry.backup:
        jsonfile.remove_file(folder(home) / "backups" / entry.backup)
