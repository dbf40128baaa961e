"""Project profile detection: name, stack, commands and entry points, read from build files.

Facts come from ``pyproject.toml``, ``package.json``, ``Cargo.toml``, ``go.mod``, ``Makefile``,
``justfile`` and the like, and are stored as ``profile`` records keyed by what they describe
(``name``, ``stack``, ``command.test``, ``entry_points`` …), so a changed value supersedes the old
one and an unchanged one is left alone. Explicit project commands (Makefile, justfile, package.json
scripts) win over ecosystem defaults. Standard library only (the cwd-changed hook calls it).
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from agentctx.context import injection
from agentctx.core.safeio import read_small_text
from agentctx.store import profiles, records
from agentctx.store.db import Store
from agentctx.store.models import Draft, Project, Record
from agentctx.store.profiles import COMMAND_KINDS

_MAKE_TARGETS = {
    "test": ("test", "tests", "check"),
    "build": ("build", "all", "dist"),
    "lint": ("lint", "check-lint", "typecheck"),
    "format": ("fmt", "format"),
    "run": ("run", "dev", "serve", "start", "demo"),
}
_FRAMEWORKS = {
    "django": "Django", "flask": "Flask", "fastapi": "FastAPI", "textual": "Textual",
    "typer": "Typer", "click": "Click", "pydantic": "Pydantic", "sqlalchemy": "SQLAlchemy",
    "pytest": "pytest", "react": "React", "next": "Next.js", "vue": "Vue", "svelte": "Svelte",
    "express": "Express", "hono": "Hono", "vite": "Vite", "vitest": "Vitest", "jest": "Jest",
    "typescript": "TypeScript", "tokio": "Tokio", "axum": "Axum", "actix-web": "Actix",
    "serde": "Serde", "clap": "clap",
}


class Fact(NamedTuple):
    """One detected profile value."""

    key: str
    title: str
    body: str


def _load_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(read_small_text(path))
    except (OSError, tomllib.TOMLDecodeError, RecursionError):
        return {}


def _load_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(read_small_text(path))
    except (OSError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def _targets(path: Path, pattern: str) -> list[str]:
    try:
        text = read_small_text(path)
    except OSError:
        return []
    found = re.findall(pattern, text, flags=re.MULTILINE)
    return [t for t in dict.fromkeys(found) if not t.startswith(".")]


def _table(value: object) -> dict[str, Any]:
    """``value`` when it is a JSON object or TOML table, else empty (build files lie)."""
    return value if isinstance(value, dict) else {}


def _items(value: object) -> list[Any]:
    """``value`` when it is a list, else empty."""
    return value if isinstance(value, list) else []


def _text(value: object) -> str | None:
    """``value`` when it is a non-empty string, else ``None``."""
    return value.strip() or None if isinstance(value, str) else None


def _dep_names(requirements: list[Any]) -> list[str]:
    names = []
    for item in requirements:
        match = re.match(r"\s*([A-Za-z0-9_.-]+)", str(item))
        if match:
            names.append(match.group(1).lower().replace("_", "-"))
    return names


def detect(root: Path) -> list[Fact]:
    """Every profile fact detectable in the folder ``root`` (nothing is written)."""
    name: str | None = None
    stack: list[str] = []
    commands: dict[str, tuple[str, str]] = {}  # kind -> (command, where from)
    entries: list[str] = []

    def command(kind: str, text: str, origin: str) -> None:
        commands.setdefault(kind, (text, origin))

    # Explicit project commands first: they say how this project wants to be driven.
    for file_name, runner, pattern in (
        ("Makefile", "make", r"^([A-Za-z0-9_.-]+)\s*:(?!=)"),
        ("makefile", "make", r"^([A-Za-z0-9_.-]+)\s*:(?!=)"),
        ("justfile", "just", r"^@?([A-Za-z0-9_-]+)(?:\s+[^:=]*)?:(?!=)"),
        ("Justfile", "just", r"^@?([A-Za-z0-9_-]+)(?:\s+[^:=]*)?:(?!=)"),
    ):
        path = root / file_name
        if path.is_file():
            targets = _targets(path, pattern)
            for kind, names in _MAKE_TARGETS.items():
                for target in names:
                    if target in targets:
                        command(kind, f"{runner} {target}", f"{file_name} target `{target}`")
                        break

    package = _load_json(root / "package.json")
    if package:
        name = name or _text(package.get("name"))
        manager = ("pnpm" if (root / "pnpm-lock.yaml").exists() else
                   "yarn" if (root / "yarn.lock").exists() else
                   "bun" if (root / "bun.lockb").exists() or (root / "bun.lock").exists() else
                   "npm")
        raw_scripts = package.get("scripts")
        npm_scripts: dict[str, Any] = raw_scripts if isinstance(raw_scripts, dict) else {}
        for kind, names in {"test": ("test",), "build": ("build",), "lint": ("lint",),
                            "format": ("format", "fmt"), "run": ("dev", "start")}.items():
            for script in names:
                if script in npm_scripts:
                    text = f"{manager} test" if script == "test" else f"{manager} run {script}"
                    command(kind, text, f"package.json script `{script}`")
                    break
        node_deps = {**_table(package.get("dependencies")),
                     **_table(package.get("devDependencies"))}
        stack.append("TypeScript" if "typescript" in node_deps or (root / "tsconfig.json").exists()
                     else "JavaScript")
        stack.append("Node.js")
        stack.extend(label for dep, label in _FRAMEWORKS.items() if dep in node_deps)
        if isinstance(package.get("bin"), dict):
            entries.extend(f"{k} → {v}" for k, v in package["bin"].items())
        elif isinstance(package.get("main"), str):
            entries.append(package["main"])

    pyproject = _load_toml(root / "pyproject.toml")
    if pyproject or (root / "setup.py").exists() or (root / "requirements.txt").exists():
        meta = _table(pyproject.get("project"))
        tool = _table(pyproject.get("tool"))
        poetry = _table(tool.get("poetry"))
        name = name or _text(meta.get("name")) or _text(poetry.get("name"))
        stack.append("Python")
        requires = _text(meta.get("requires-python"))
        if requires:
            stack[-1] = f"Python {requires}"
        deps = _dep_names(_items(meta.get("dependencies")))
        for group in _table(meta.get("optional-dependencies")).values():
            deps.extend(_dep_names(_items(group)))
        deps.extend(str(k).lower() for k in _table(poetry.get("dependencies")))
        stack.extend(label for dep, label in _FRAMEWORKS.items() if dep in deps)
        prefix = ("uv run " if (root / "uv.lock").exists() else
                  "poetry run " if (root / "poetry.lock").exists() else "")
        if "pytest" in deps or "pytest" in tool or (root / "tests").is_dir():
            command("test", f"{prefix}pytest", "Python project with tests")
        if "ruff" in tool:
            command("lint", f"{prefix}ruff check .", "[tool.ruff] in pyproject.toml")
            command("format", f"{prefix}ruff format .", "[tool.ruff] in pyproject.toml")
        elif "mypy" in tool:
            command("lint", f"{prefix}mypy .", "[tool.mypy] in pyproject.toml")
        if pyproject.get("build-system"):
            builder = {"uv run ": "uv build", "poetry run ": "poetry build"}.get(
                prefix, "python -m build")
            command("build", builder, "[build-system] in pyproject.toml")
        py_scripts = _table(meta.get("scripts")) or _table(poetry.get("scripts"))
        entries.extend(f"{k} → {v}" for k, v in py_scripts.items())
        if py_scripts:
            first = next(iter(py_scripts))
            command("run", f"{prefix}{first}", "[project.scripts] in pyproject.toml")

    cargo = _load_toml(root / "Cargo.toml")
    if cargo:
        name = name or _text(_table(cargo.get("package")).get("name"))
        stack.append("Rust")
        crates = list(_table(cargo.get("dependencies")))
        stack.extend(label for dep, label in _FRAMEWORKS.items() if dep in crates)
        for kind, text in (("test", "cargo test"), ("build", "cargo build"),
                           ("lint", "cargo clippy"), ("format", "cargo fmt"),
                           ("run", "cargo run")):
            command(kind, text, "Cargo.toml")
        if (root / "src" / "main.rs").exists():
            entries.append("src/main.rs")

    gomod = root / "go.mod"
    if gomod.is_file():
        module = _targets(gomod, r"^module\s+(\S+)")
        name = name or (module[0].rsplit("/", 1)[-1] if module else None)
        stack.append("Go")
        for kind, text in (("test", "go test ./..."), ("build", "go build ./..."),
                           ("lint", "go vet ./..."), ("format", "gofmt -w ."),
                           ("run", "go run .")):
            command(kind, text, "go.mod")
        entries.extend(str(p.parent.relative_to(root)) for p in sorted(root.glob("cmd/*/main.go")))

    for marker, label, test_cmd in (("pom.xml", "Java (Maven)", "mvn test"),
                                    ("build.gradle", "JVM (Gradle)", "./gradlew test"),
                                    ("build.gradle.kts", "Kotlin (Gradle)", "./gradlew test"),
                                    ("Gemfile", "Ruby", "bundle exec rake test"),
                                    ("mix.exs", "Elixir", "mix test")):
        if (root / marker).exists():
            stack.append(label)
            command("test", test_cmd, marker)

    facts = [Fact("name", f"Project name: {name or root.name}",
                  f"Detected in {root}" if name else f"Folder name of {root}")]
    if stack:
        unique = list(dict.fromkeys(stack))
        facts.append(Fact("stack", "Stack: " + ", ".join(unique),
                          "Detected from the build files at the project root."))
    for kind in COMMAND_KINDS:
        if kind in commands:
            text, origin = commands[kind]
            facts.append(Fact(f"command.{kind}", f"{kind.capitalize()} command: {text}",
                              f"From {origin}."))
    if entries:
        facts.append(Fact("entry_points", "Entry points: " + ", ".join(entries[:8]),
                          "\n".join(entries)))
    return facts


def refresh(db: Store, project: Project) -> list[Record]:
    """Detect the profile of ``project`` (at its root) and store it; returns the current values.

    A changed value supersedes the previous record with the same key; an unchanged value is left
    as it is (no write, no change-counter bump).
    """
    root = Path(project.root)
    try:
        if not root.is_dir():
            return []
    except OSError:  # a name too long to be a folder's
        return []
    stored = []
    with db.write():
        for fact in detect(root):
            stored.append(records.add(db, Draft(type="profile", key=fact.key, title=fact.title,
                                                body=fact.body, confidence="explicit",
                                                source="detection"),
                                      project_id=project.id))
    return stored


def current(db: Store, project_id: str) -> list[Record]:
    """The project's current profile records, in a stable order (name, stack, commands …)."""
    return profiles.project_profile(db, project_id)


def _value(record: Record) -> str:
    """What a profile record says, without its label ("Test command: make test" → "make test")."""
    title = " ".join(injection.clean(record.title).split())
    return title.split(": ", 1)[1] if ": " in title else title


def lines(profile: Sequence[Record], project_name: str, max_chars: int) -> list[str]:
    """The project profile in at most two lines: what the project is (name, stack, entry points,
    anything else detected), then its commands. Nothing when it only knows its name."""
    by_key = {r.key: r for r in profile if r.key}
    name = _value(by_key["name"]) if "name" in by_key else project_name
    first = f"{injection.PROFILE_LEADS[0]}{name}"
    parts = [_value(by_key["stack"])] if "stack" in by_key else []
    if "entry_points" in by_key:
        parts.append(f"entry points {_value(by_key['entry_points'])}")
    known = {"name", "stack", "entry_points", *(f"command.{kind}" for kind in COMMAND_KINDS)}
    parts.extend(" ".join(injection.clean(r.title).split()) for r in profile
                 if r.key not in known)
    commands = [f"{kind} `{_value(by_key[f'command.{kind}'])}`" for kind in COMMAND_KINDS
                if f"command.{kind}" in by_key]
    found = []
    if parts:
        found.append(f"{first}: {'; '.join(parts)}.")
    if commands:
        found.append(f"{injection.PROFILE_LEADS[1]}{', '.join(commands)}.")
    half = max(0, max_chars // max(1, len(found)) - 1)
    return [line if len(line) <= half else line[:max(0, half - 1)].rstrip() + "…"
            for line in found if half > 1]
