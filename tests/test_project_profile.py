"""Project profile detection from build files, stored as keyed profile records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentctx.context import project_profile
from agentctx.store import Store, projects, records
from tests.support import special_files


def facts(root: Path) -> dict[str, str]:
    return {f.key: f.title for f in project_profile.detect(root)}


def test_python_project_with_makefile(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "shop"\nrequires-python = ">=3.12"\n'
        'dependencies = ["fastapi", "pydantic>=2"]\n[project.scripts]\nshop = "shop.cli:main"\n'
        "[tool.ruff]\nline-length = 100\n", encoding="utf-8")
    (tmp_path / "Makefile").write_text("test:\n\tpytest\nlint:\n\truff check .\n",
                                       encoding="utf-8")
    (tmp_path / "uv.lock").write_text("", encoding="utf-8")
    found = facts(tmp_path)
    assert found["name"] == "Project name: shop"
    assert found["stack"] == "Stack: Python >=3.12, FastAPI, Pydantic"
    assert found["command.test"] == "Test command: make test"  # explicit beats default
    assert found["command.lint"] == "Lint command: make lint"
    assert found["command.format"] == "Format command: uv run ruff format ."
    assert found["entry_points"] == "Entry points: shop → shop.cli:main"


def test_node_project_uses_its_package_manager(tmp_path: Path) -> None:
    (tmp_path / "package.json").write_text(json.dumps({
        "name": "web", "scripts": {"test": "vitest", "build": "vite build", "dev": "vite"},
        "devDependencies": {"typescript": "5", "vitest": "3", "react": "19"}}), encoding="utf-8")
    (tmp_path / "pnpm-lock.yaml").write_text("", encoding="utf-8")
    found = facts(tmp_path)
    assert found["command.test"] == "Test command: pnpm test"
    assert found["command.build"] == "Build command: pnpm run build"
    assert found["command.run"] == "Run command: pnpm run dev"
    assert "TypeScript" in found["stack"] and "React" in found["stack"]


def test_rust_and_go(tmp_path: Path) -> None:
    rust = tmp_path / "r"
    rust.mkdir()
    (rust / "Cargo.toml").write_text('[package]\nname = "engine"\n[dependencies]\ntokio = "1"\n',
                                     encoding="utf-8")
    assert facts(rust)["command.test"] == "Test command: cargo test"
    assert "Tokio" in facts(rust)["stack"]
    go = tmp_path / "g"
    go.mkdir()
    (go / "go.mod").write_text("module github.com/acme/tool\n\ngo 1.22\n", encoding="utf-8")
    assert facts(go)["name"] == "Project name: tool"
    assert facts(go)["command.lint"] == "Lint command: go vet ./..."


def test_broken_build_files_do_not_stop_detection(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[project\nname=", encoding="utf-8")
    (tmp_path / "package.json").write_text("{nope", encoding="utf-8")
    assert facts(tmp_path)["name"] == f"Project name: {tmp_path.name}"


def test_refresh_supersedes_only_what_changed(store: Store, project_dir: Path) -> None:
    (project_dir / "Makefile").write_text("test:\n\tpytest\n", encoding="utf-8")
    project = projects.resolve(store, str(project_dir)).project
    first = {r.key: r for r in project_profile.refresh(store, project)}
    counter = store.change_counter()
    again = {r.key: r for r in project_profile.refresh(store, project)}
    assert again == first and store.change_counter() == counter
    (project_dir / "Makefile").write_text("check:\n\tpytest -x\n", encoding="utf-8")
    third = {r.key: r for r in project_profile.refresh(store, project)}
    assert third["command.test"].title == "Test command: make check"
    old = records.get(store, first["command.test"].id)
    assert old.superseded_by == third["command.test"].id
    assert [r.key for r in project_profile.current(store, project.id)][:2] == ["name",
                                                                               "command.test"]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "huge", "folder"])
def test_special_build_files_are_skipped_reading_little(kind: str, tmp_path: Path) -> None:
    for name in ("pyproject.toml", "package.json", "Makefile", "go.mod"):
        special_files.MAKERS[kind](tmp_path / name)
    (tmp_path / "Cargo.toml").write_text('[package]\nname = "tool"\n', encoding="utf-8")
    before = special_files.bytes_read()
    with special_files.limited_memory():
        found = facts(tmp_path)
    assert special_files.bytes_read() - before < 2_000_000
    assert found["name"] == "Project name: tool"
    assert "Rust" in found["stack"]


def test_build_files_with_wrong_types_are_read_for_what_they_get_right(tmp_path: Path) -> None:
    (tmp_path / "package.json").write_text(json.dumps({
        "name": ["x"], "dependencies": [1, 2], "devDependencies": "react", "scripts": [],
        "bin": 7, "main": {"a": 1}}), encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(
        'tool = 3\n[project]\nname = 5\ndependencies = "fastapi"\nscripts = ["a"]\n'
        'optional-dependencies = {dev = "pytest"}\nrequires-python = 3\n', encoding="utf-8")
    (tmp_path / "Cargo.toml").write_text('package = "tool"\ndependencies = 4\n',
                                         encoding="utf-8")
    found = facts(tmp_path)
    assert found["name"] == f"Project name: {tmp_path.name}"
    assert found["stack"] == "Stack: JavaScript, Node.js, Python, Rust"
