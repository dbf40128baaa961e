"""Claude Code's JSON config files, read strictly and written back without disturbing anything.

A file is parsed into a :class:`JsonDoc` that remembers how it was written (indentation, trailing
newline, byte-order mark, file mode) so a changed document is rendered in the same style. Anything
that could not be written back faithfully — invalid JSON, a duplicate key, ``NaN``, text that is
not UTF-8, a top level that is not an object — is refused with a clear message and the file is left
alone. Writes are atomic: a temporary file in the same folder, flushed, then renamed over the
original (a symlinked file is written through to its target, so dotfile managers keep working).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any, NamedTuple

from agentctx.core.safeio import read_small

_BOM = "\ufeff"
_INDENT = re.compile(r"[\[{]\r?\n([ \t]+)\S")


class InstallError(Exception):
    """Something ``init``/``uninstall`` refused to do; the message is one line for the user."""


class JsonDoc(NamedTuple):
    """A parsed JSON config file and the style it was written in."""

    path: Path
    exists: bool
    raw: bytes  # the bytes read (empty when the file does not exist)
    data: dict[str, Any]
    indent: str | None  # None: written on one line
    newline: bool  # ends with a newline
    eol: str  # "\n" or "\r\n"
    bom: bool
    mode: int | None  # permission bits, None when the file does not exist


def display(path: Path) -> str:
    """``path`` for messages, with the user's home folder shown as ``~``."""
    text = str(path)
    home = str(Path.home())
    if home not in ("", "/") and (text == home or text.startswith(home + os.sep)):
        return "~" + text[len(home):]
    return text


def sha256(data: bytes | None) -> str | None:
    """Hex digest of ``data`` (``None`` for a missing file)."""
    return None if data is None else hashlib.sha256(data).hexdigest()


# Claude Code's ~/.claude.json keeps per-project history and can grow to megabytes.
JSON_FILE_MAX = 64 << 20


def read_bytes(path: Path) -> bytes | None:
    """The file's bytes, ``None`` when it does not exist (a FIFO or device is refused)."""
    try:
        return read_small(path, JSON_FILE_MAX)
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise InstallError(f"{display(path)} is a folder, not a file; nothing was changed") \
            from None
    except OSError as exc:
        raise InstallError(f"cannot read {display(path)}: {exc.strerror}; nothing was changed") \
            from None


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"duplicate key {key!r}")
        result[key] = value
    return result


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def parse(path: Path, raw: bytes) -> JsonDoc:
    """Parse ``raw`` (the bytes of ``path``) strictly; :class:`InstallError` when malformed."""
    where = display(path)
    advice = "fix it (or move it away) and run the command again; nothing was changed"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InstallError(f"{where} is not UTF-8 text: {advice}") from None
    bom = text.startswith(_BOM)
    body = text[1:] if bom else text
    if body.strip():
        try:
            data = json.loads(body, object_pairs_hook=_no_duplicates,
                              parse_constant=_no_constants)
        except json.JSONDecodeError as exc:
            raise InstallError(f"{where} is not valid JSON (line {exc.lineno}, column "
                               f"{exc.colno}: {exc.msg}): {advice}") from None
        except ValueError as exc:
            raise InstallError(f"{where} cannot be edited safely ({exc}): {advice}") from None
        except RecursionError:
            raise InstallError(f"{where} is nested too deeply to edit safely: {advice}") \
                from None
    else:
        data = {}
    if not isinstance(data, dict):
        raise InstallError(f"{where} must hold a JSON object, not {type(data).__name__}: {advice}")
    match = _INDENT.search(body)
    if match:
        indent: str | None = match.group(1)
    elif "\n" in body.strip():
        indent = "  "
    elif body.strip() in ("", "{}"):
        indent = "  "  # an empty object: nothing to imitate, use the common style
    else:
        indent = None
    mode = None
    try:
        mode = path.stat().st_mode & 0o7777
    except OSError:
        pass
    newline = body.endswith("\n") if body.strip() else True
    eol = "\r\n" if "\r\n" in body else "\n"
    return JsonDoc(path, True, raw, data, indent, newline, eol, bom, mode)


def load(path: Path) -> JsonDoc:
    """Read and parse ``path``; a missing file is an empty document."""
    raw = read_bytes(path)
    if raw is None:
        return JsonDoc(path, False, b"", {}, "  ", True, "\n", False, None)
    return parse(path, raw)


def render(doc: JsonDoc, data: dict[str, Any]) -> bytes:
    """``data`` serialized in the style of ``doc`` (indentation, newline, BOM, unicode kept)."""
    if doc.indent is None:
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    else:
        text = json.dumps(data, ensure_ascii=False, indent=doc.indent)
    if doc.newline:
        text += "\n"
    if doc.eol != "\n":
        text = text.replace("\n", doc.eol)
    if doc.bom:
        text = _BOM + text
    return text.encode("utf-8")


def check_writable(path: Path) -> None:
    """Raise :class:`InstallError` unless :func:`write_atomic` could write ``path`` now.

    An atomic write needs its folder (or, when folders are missing, the nearest existing one)
    to take a new file; that is tried for real with a temporary file, because ``os.access``
    says yes to root on a read-only folder.
    """
    target = Path(os.path.realpath(path)) if path.is_symlink() else path
    folder = target.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise InstallError(f"{display(folder)} is not a folder; nothing was changed")
    try:
        handle, probe = tempfile.mkstemp(dir=folder, prefix=".agentctx-probe-")
    except OSError as exc:
        raise InstallError(f"cannot write in {display(folder)}: {exc.strerror}; nothing was "
                           "changed") from None
    os.close(handle)
    os.unlink(probe)


def write_atomic(path: Path, payload: bytes, mode: int) -> list[Path]:
    """Write ``payload`` to ``path`` atomically with permission bits ``mode``.

    Missing parent folders are created (mode 0755, as Claude Code does); the list of folders
    created is returned so they can be removed again. A symlink is followed: the target is
    replaced, the link stays.
    """
    target = Path(os.path.realpath(path)) if path.is_symlink() else path
    created: list[Path] = []
    parent = target.parent
    missing: list[Path] = []
    while not parent.exists():
        missing.append(parent)
        parent = parent.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=0o755)
        except OSError as exc:
            raise InstallError(f"cannot create {display(folder)}: {exc.strerror}") from None
        created.append(folder)
    try:
        handle, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.",
                                            suffix=".agentctx-tmp")
    except OSError as exc:
        raise InstallError(f"cannot write in {display(target.parent)}: {exc.strerror}") from None
    tmp = Path(tmp_name)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(payload)
            out.flush()
            os.fsync(out.fileno())
            os.fchmod(out.fileno(), mode)
        tmp.replace(target)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise InstallError(f"cannot write {display(target)}: {exc.strerror}") from None
    _fsync_folder(target.parent)
    return created


def remove_file(path: Path) -> None:
    """Delete ``path`` (the link itself when it is a symlink); a missing file is fine."""
    try:
        path.unlink()
    except FileNotFoundError:
        return
    except OSError as exc:
        raise InstallError(f"cannot remove {display(path)}: {exc.strerror}") from None
    _fsync_folder(path.parent)


def remove_empty_folders(folders: list[Path]) -> None:
    """Remove each folder (deepest first) if it is empty; anything else is left alone."""
    for folder in sorted(folders, key=lambda p: len(p.parts), reverse=True):
        try:
            folder.rmdir()
        except OSError:
            continue


def _fsync_folder(folder: Path) -> None:
    try:
        handle = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(handle)
    except OSError:
        pass
    finally:
        os.close(handle)
