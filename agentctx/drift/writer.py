"""Writing a proposal: only what its diff shows, atomically, after a backup — and only when asked.

:func:`write` checks that every file still holds exactly the text the proposal was computed from
(a file edited meanwhile refuses the whole write), copies the files it will replace into a
backup folder (with a ``manifest.json`` naming the files it creates), writes each new text to a
fresh temporary file beside its target (``mkstemp``: never through a planted link) and renames
it into place. A target that is a link, a FIFO, a device or too big is refused unread. A
failure part-way restores what was already replaced and removes what was created. Nothing else
is touched.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple

from agentctx.core import safeio
from agentctx.drift.propose import FileChange

# A memory file larger than this is not read back (nor rewritten).
MAX_READ_BYTES = 4_000_000


class Changed(Exception):
    """A file changed since the proposal was computed: nothing was written."""


class Written(NamedTuple):
    """What a write changed."""

    written: tuple[str, ...]  # names of the files replaced
    created: tuple[str, ...]  # names of the files created
    backup: Path | None  # the backup folder (None when nothing was written)


def backup_folder(home: Path, project_id: str, now: datetime | None = None) -> Path:
    """A fresh backup folder under ``<home>/backups/sync/``."""
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%S%fZ")
    return home / "backups" / "sync" / f"{stamp}-{project_id[:12]}"


def _current(path: Path) -> str | None:
    # Never through a link (its target may be a device, a FIFO or a file outside the project),
    # never a FIFO or device, never more than MAX_READ_BYTES.
    if os.path.islink(path):
        raise Changed(f"{path} is a symbolic link; agentctx does not write through links, "
                      "nothing was written")
    try:
        return safeio.read_small(path, MAX_READ_BYTES).decode("utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise Changed(f"{path} cannot be read as UTF-8 any more ({exc}); nothing was written") \
            from None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write(changes: Sequence[FileChange], backup: Path) -> Written:
    """Write ``changes`` (see the module docstring); raises :class:`Changed` or ``OSError``."""
    if not changes:
        return Written((), (), None)
    for change in changes:
        if _current(change.path) != change.before:
            raise Changed(f"{change.name} changed since the proposal was made; nothing was "
                          "written — run agentctx sync again")
    backup.mkdir(parents=True, exist_ok=False, mode=0o700)
    replaced: dict[str, str] = {}
    created: list[str] = []
    for change in changes:
        if change.before is None:
            created.append(str(change.path))
            continue
        copy = backup / "files" / change.name.lstrip("/")
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(change.path, copy)
        replaced[str(change.path)] = str(copy)
    (backup / "manifest.json").write_text(
        json.dumps({"replaced": replaced, "created": created}, indent=2), encoding="utf-8")

    temps: list[tuple[FileChange, Path]] = []
    try:
        for change in changes:
            # mkstemp creates a new file (O_EXCL) under an unpredictable name: a link planted
            # beside the target is never written through.
            fd, name = tempfile.mkstemp(prefix=f".{change.path.name}.", suffix=".agentctx.tmp",
                                        dir=change.path.parent)
            temp = Path(name)
            temps.append((change, temp))
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
                handle.write(change.after)
                handle.flush()
                os.fsync(handle.fileno())
            if change.before is not None:
                shutil.copymode(change.path, temp)
            else:
                os.chmod(temp, 0o644 & ~_umask())
    except OSError:
        for _change, temp in temps:
            temp.unlink(missing_ok=True)
        raise
    done: list[FileChange] = []
    try:
        for change, temp in temps:
            os.replace(temp, change.path)
            done.append(change)
    except OSError:
        for change in done:
            if change.before is None:
                change.path.unlink(missing_ok=True)
            else:
                shutil.copy2(backup / "files" / change.name.lstrip("/"), change.path)
        for _change, temp in temps:
            temp.unlink(missing_ok=True)
        raise
    return Written(tuple(c.name for c in changes if c.before is not None),
                   tuple(c.name for c in changes if c.before is None), backup)
