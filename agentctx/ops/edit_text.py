"""The text a record is edited as in ``$EDITOR`` (``agentctx edit`` and the browser's ``E``):
comment lines, the title, a marker line, then the body."""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from pathlib import Path

EDIT_MARKER = "--- body below this line ---"


class EditorError(Exception):
    """The editor failed or left text that cannot be read back; nothing changes."""


def editor_command() -> list[str] | None:
    """``$VISUAL``, else ``$EDITOR``, split as a shell would; ``None`` when neither is set."""
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    return shlex.split(editor) if editor else None


def editor_text(title: str, body: str, record_id: str) -> str:
    """The file the editor opens."""
    return (f"# Editing {record_id}. Lines starting with '#' above the marker are ignored.\n"
            f"# A change of meaning should be a supersede: agentctx supersede {record_id}\n"
            f"{title}\n{EDIT_MARKER}\n{body}\n")


def parse_editor_text(edited: str) -> tuple[str, str]:
    """The title and body back from the edited file; :class:`EditorError` when unreadable."""
    head, marker, new_body = edited.partition(EDIT_MARKER)
    if not marker:
        raise EditorError(f"the line {EDIT_MARKER!r} is missing; nothing changed")
    lines = [ln for ln in head.splitlines() if ln.strip() and not ln.startswith("#")]
    if not lines:
        raise EditorError("the title is empty; nothing changed")
    return " ".join(lines), new_body.strip("\n")


def edit_in_editor(title: str, body: str, record_id: str) -> tuple[str, str]:
    """Open the record in the editor (waits for it) and return the edited title and body."""
    command = editor_command()
    if not command:
        raise EditorError("no $EDITOR set")
    with tempfile.NamedTemporaryFile("w", suffix=".md", delete=False, encoding="utf-8") as tmp:
        tmp.write(editor_text(title, body, record_id))
        path = tmp.name
    try:
        try:
            result = subprocess.run([*command, path], check=False)
        except OSError as exc:
            raise EditorError(f"cannot run the editor {command[0]!r}: {exc.strerror}") from None
        if result.returncode != 0:
            raise EditorError(f"the editor exited with status {result.returncode}; "
                              "nothing changed")
        edited = Path(path).read_text(encoding="utf-8")
    finally:
        os.unlink(path)
    return parse_editor_text(edited)
