"""The layering of agentctx, read from the source with the standard library's ``ast``.

The rules, in the same words as README.md:

    Floors, top to bottom: the faces (cli, tui, web, mcpserver, hooks), the use cases (ops), the
    offline passes and integrations (extract, consolidate, drift, team, install, benchmarks, demo),
    what Claude sees and the models (context, ml), the store, the core. A module imports only
    from its own floor or the floors below it. SQL only in agentctx/store; nothing heavy on the
    hook path: agentctx/hooks imports, of agentctx, only the core, the context package and the
    store; the core imports nothing above it, and the configuration never imports the store.
    Outside the hook path (hooks, core, context, store), imports sit at the top of their module,
    unless a "# late:" comment on the import says why it waits.

"Heavy" third-party packages on the hook path are caught by the subprocess ``-X importtime``
test in ``tests/hooks/test_import_hygiene.py``; this file checks what only the source can tell.
Each check is shown failing on a deliberately broken example beside it.
"""

from __future__ import annotations

import ast
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "agentctx"

# Floors, top to bottom; a module may import from its own floor or any floor below it.
FLOORS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("entry", ("agentctx.__main__",)),
    ("faces", ("agentctx.cli", "agentctx.tui", "agentctx.web", "agentctx.mcpserver",
               "agentctx.hooks")),
    ("use cases", ("agentctx.ops",)),
    ("passes", ("agentctx.extract", "agentctx.consolidate", "agentctx.drift", "agentctx.team",
                "agentctx.install", "agentctx.benchmarks", "agentctx.demo")),
    ("what Claude sees and the models", ("agentctx.context", "agentctx.ml")),
    ("store", ("agentctx.store",)),
    ("core", ("agentctx.core", "agentctx")),
)
# What the hooks may import of agentctx, besides themselves.
HOOK_PATH = ("agentctx.core", "agentctx.context", "agentctx.store")
# Loose modules the package root may hold besides __init__ and __main__.
ROOT_MODULES_MAX = 6

# The first word of an SQL statement; a string that starts with one is handed to SQLite itself.
SQL_START = re.compile(r"^\s*(select|insert|replace|update|delete|create|drop|alter|pragma|with|"
                       r"begin|commit|rollback|savepoint|release|vacuum|attach|detach|analyze|"
                       r"reindex|explain)\b", re.IGNORECASE)
# Calls that run SQL on a connection or a Store, whatever the receiver is called.
SQL_CALLS = frozenset({"execute", "executemany", "executescript", "rows", "scalar", "one"})


def modules(under: Path = PACKAGE) -> Iterator[tuple[str, Path, ast.Module]]:
    """``(dotted name, path, tree)`` of every module of the package under ``under``."""
    for path in sorted(under.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        yield name, path, ast.parse(path.read_text(encoding="utf-8"), str(path))


def rel(path: Path) -> str:
    return str(path.relative_to(PACKAGE.parent))


def within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def is_store(name: str) -> bool:
    return within(name, "agentctx.store")


def docstrings(tree: ast.Module) -> set[int]:
    """``id()`` of every docstring node (documentation may quote SQL)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


_PARSER = sqlite3.connect(":memory:")


def is_sql(text: str) -> bool:
    """Whether SQLite reads ``text`` as a statement: preparing it fails for a reason other than
    its syntax (a missing table, say) or not at all. Prose that starts with "Select" or "Update"
    is a syntax error to SQLite."""
    if len(text.split()) < 2 or not SQL_START.match(text):
        return False
    try:
        _PARSER.execute("EXPLAIN " + text.strip().rstrip(";").replace("\x00", ""))
    except sqlite3.Warning:  # more than one statement: a script is SQL too
        return True
    except sqlite3.Error as error:
        message = str(error)
        return not ("syntax error" in message or "incomplete input" in message or
                    "unrecognized token" in message)
    return True


def joined_text(node: ast.JoinedStr) -> str:
    """An f-string's text with each placeholder read as a name (or a parameter after an
    operator)."""
    return "".join(part.value if isinstance(part, ast.Constant) and isinstance(part.value, str)
                   else " x " for part in node.values)


def sql_violations(name: str, path: Path, tree: ast.Module) -> list[str]:
    """Where a module outside the store speaks SQL: SQL text in a string (any case), a call of
    ``execute``/``executemany``/``executescript`` or of a Store's ``rows``/``scalar``/``one``,
    ``sqlite3.connect``, or a reach into a Store's connection (``.conn``)."""
    if is_store(name):
        return []
    skip = docstrings(tree)
    found = []
    for node in ast.walk(tree):
        where = f"{rel(path)}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            if is_sql(node.value):
                found.append(f"{where}: SQL text {node.value[:40]!r}")
        elif isinstance(node, ast.JoinedStr):
            text = joined_text(node)
            if is_sql(text):
                found.append(f"{where}: SQL text {text[:40]!r}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in SQL_CALLS:
                found.append(f"{where}: .{node.func.attr}() runs SQL")
            elif node.func.attr == "connect" and isinstance(node.func.value, ast.Name) and \
                    node.func.value.id == "sqlite3":
                found.append(f"{where}: sqlite3.connect() opens a database")
        elif isinstance(node, ast.Attribute) and node.attr == "conn":
            found.append(f"{where}: .conn reaches into a store's connection")
    return found


def imports_of(name: str, tree: ast.Module, *, module_level_only: bool = False,
               ) -> list[tuple[str, int]]:
    """The agentctx modules ``name`` imports, with line numbers: ``import agentctx.x``,
    ``from agentctx.x import y`` (and ``agentctx.x.y`` when ``y`` is a module), relative imports
    resolved; with ``module_level_only``, not those inside functions. Imports under
    ``if TYPE_CHECKING:`` do not run and are left out."""
    is_package = (PACKAGE.parent / name.replace(".", "/") / "__init__.py").exists()
    package = name if is_package else name.rpartition(".")[0]
    found: list[tuple[str, int]] = []

    def record(node: ast.Import | ast.ImportFrom) -> None:
        if isinstance(node, ast.Import):
            found.extend((alias.name, node.lineno) for alias in node.names
                         if alias.name.split(".")[0] == "agentctx")
            return
        base = node.module or ""
        if node.level:
            parts = package.split(".")
            base = ".".join([*parts[:len(parts) - node.level + 1], *([base] if base else [])])
        if base.split(".")[0] != "agentctx":
            return
        found.append((base, node.lineno))
        for alias in node.names:
            candidate = PACKAGE.parent / f"{base}.{alias.name}".replace(".", "/")
            if candidate.with_suffix(".py").exists() or (candidate / "__init__.py").exists():
                found.append((f"{base}.{alias.name}", node.lineno))

    def visit(nodes: list[ast.AST], in_function: bool) -> None:
        for node in nodes:
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                visit(list(node.orelse), in_function)
                continue
            if isinstance(node, ast.Import | ast.ImportFrom):
                if not (module_level_only and in_function):
                    record(node)
                continue
            nested = in_function or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            for field in ("body", "handlers", "orelse", "finalbody"):
                inner = getattr(node, field, None)
                if isinstance(inner, list):
                    visit(inner, nested)

    visit(list(tree.body), False)
    return found


def floor_of(name: str) -> int:
    """The index of ``name``'s floor in :data:`FLOORS` (0 is the top); the most specific
    package wins, so ``agentctx.core.x`` is core and ``agentctx.demo`` a pass."""
    best, depth = -1, -1
    for index, (_label, packages) in enumerate(FLOORS):
        for package in packages:
            if within(name, package) and package.count(".") > depth:
                best, depth = index, package.count(".")
    return best


def upward_imports(sources: dict[str, tuple[Path, ast.Module]]) -> list[str]:
    """Every import that points to a floor above the importer's."""
    found = []
    for name, (path, tree) in sources.items():
        own, seen = floor_of(name), set()
        for target, line in imports_of(name, tree):
            if target == "agentctx" or line in seen:
                continue
            if floor_of(target) < own:
                seen.add(line)
                found.append(f"{rel(path)}:{line} ({FLOORS[own][0]}) imports {target} "
                             f"({FLOORS[floor_of(target)][0]})")
    return found


ALL = {name: (path, tree) for name, path, tree in modules()}


def test_every_module_stands_on_a_floor() -> None:
    assert not [name for name in ALL if floor_of(name) < 0]


def test_imports_point_down_or_sideways() -> None:
    found = upward_imports(ALL)
    assert not found, "imports that run up a floor:\n" + "\n".join(found)


def test_the_floor_check_catches_an_import_up() -> None:
    broken = {"agentctx.store.stray": (PACKAGE / "store" / "stray.py",
                                       ast.parse("from agentctx.context import judgement\n")),
              "agentctx.core.stray": (PACKAGE / "core" / "stray.py",
                                      ast.parse("def late():\n    import agentctx.ops.export\n"))}
    assert len(upward_imports(broken)) == 2


def loose_root_modules(names: list[str]) -> list[str]:
    """The modules that sit directly in the package root, ``__init__`` and ``__main__`` aside."""
    return sorted(name for name in names if name.count(".") == 1 and name != "agentctx.__main__"
                  and not (PACKAGE / name.split(".")[1] / "__init__.py").exists())


def test_the_root_keeps_few_loose_modules() -> None:
    loose = loose_root_modules(list(ALL))
    assert len(loose) <= ROOT_MODULES_MAX, loose


def test_the_root_check_counts_a_new_module() -> None:
    names = [*ALL, *(f"agentctx.extra{i}" for i in range(ROOT_MODULES_MAX + 1))]
    assert len(loose_root_modules(names)) > ROOT_MODULES_MAX


def config_imports_of_the_store(tree: ast.Module) -> list[str]:
    return [f"line {line}: {target}" for target, line in imports_of("agentctx.core.config", tree)
            if is_store(target)]


def test_the_configuration_never_imports_the_store() -> None:
    assert not config_imports_of_the_store(ALL["agentctx.core.config"][1])


def test_the_configuration_check_sees_an_import_inside_a_function() -> None:
    broken = ast.parse("def late():\n    from agentctx.store.ids import now\n")
    assert config_imports_of_the_store(broken) == ["line 2: agentctx.store.ids"]


def test_sql_only_in_the_store() -> None:
    found = [v for name, (path, tree) in ALL.items() for v in sql_violations(name, path, tree)]
    assert not found, "SQL outside agentctx/store:\n" + "\n".join(found)


@pytest.mark.parametrize("source", [
    'def count(db):\n    return db.execute("SELECT count(*) FROM records")\n',
    'def count(db):\n    return db.scalar("select count(*) from records where project_id = ?")\n',
    'def names(db, table):\n    return db.rows(f"select name from {table} order by name")\n',
])
def test_the_sql_check_catches_a_stray_query(source: str) -> None:
    stray = ast.parse(source)
    found = sql_violations("agentctx.stray", PACKAGE / "stray.py", stray)
    assert len(found) == 2, found  # the statement and the call that runs it
    assert any("SQL text" in f for f in found)
    assert sql_violations("agentctx.store.stray", PACKAGE / "store" / "stray.py", stray) == []


@pytest.mark.parametrize("prose", [
    "Select the records from a project, then update the view.",
    "Update the team file after a write.",
    "With a record selected, press s to supersede it.",
    "create a record",
])
def test_the_sql_check_leaves_prose_alone(prose: str) -> None:
    tree = ast.parse(f"HELP = {prose!r}\n")
    assert sql_violations("agentctx.stray", PACKAGE / "stray.py", tree) == []


def test_imports_are_read_at_every_depth_but_type_checking() -> None:
    tree = ast.parse(
        "from agentctx.core import config\n"
        "TYPE_CHECKING = False\n"
        "if TYPE_CHECKING:\n    import agentctx.consolidate.run\n"
        "def late():\n    try:\n        from . import graph\n    finally:\n        pass\n"
        "    from agentctx.ml.embedder import load_model\n")
    everywhere = {target for target, _ in imports_of("agentctx.store.records", tree)}
    assert everywhere == {"agentctx.core", "agentctx.core.config", "agentctx.store",
                          "agentctx.store.graph", "agentctx.ml.embedder"}
    top = {target for target, _ in imports_of("agentctx.store.records", tree,
                                              module_level_only=True)}
    assert top == {"agentctx.core", "agentctx.core.config"}


# The hook's hot path: the hooks and what they may import. An import there may wait inside the
# function that needs it, to keep it off every other hook call.
HOT_PATH = ("agentctx.hooks", *HOOK_PATH)
# What a late import's statement carries: "# late:" and the reason (its measured cost, a cycle).
LATE_REASON = re.compile(r"#\s*late:\s*\S")


def unexplained_late_imports(name: str, source: str, tree: ast.Module) -> list[str]:
    """The imports inside functions of a module off the hook path (:data:`HOT_PATH`) with no
    ``# late: <why>`` comment on a line of their statement; imports under ``if TYPE_CHECKING:``
    do not run and are left out."""
    if any(within(name, package) for package in HOT_PATH):
        return []
    lines = source.splitlines()
    found: list[str] = []

    def visit(nodes: list[ast.stmt], in_function: bool) -> None:
        for node in nodes:
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                visit(node.orelse, in_function)
                continue
            if isinstance(node, ast.Import | ast.ImportFrom):
                statement = "\n".join(lines[node.lineno - 1:node.end_lineno or node.lineno])
                if in_function and not LATE_REASON.search(statement):
                    found.append(f"{name}:{node.lineno}: {lines[node.lineno - 1].strip()}")
                continue
            nested = in_function or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            for field in ("body", "handlers", "orelse", "finalbody"):
                inner = getattr(node, field, None)
                if isinstance(inner, list):
                    visit(inner, nested)

    visit(tree.body, False)
    return found


def test_imports_off_the_hook_path_are_at_the_top_or_say_why_they_wait() -> None:
    found = [late for name, (path, tree) in ALL.items()
             for late in unexplained_late_imports(name, path.read_text(encoding="utf-8"), tree)]
    assert not found, "imports inside functions without a '# late: <why>':\n" + "\n".join(found)


def test_the_late_import_check_catches_an_import_without_a_reason() -> None:
    source = ("import os\n"
              "def a():\n    import json\n"
              "def b():\n    import csv  # late: 2 ms at every CLI start\n"
              "def c():\n    from agentctx.store import (  # late: a cycle\n        Store,\n    )\n"
              "def d():\n    try:\n        from agentctx.core import config\n"
              "    finally:\n        pass\n"
              "def e():\n    if TYPE_CHECKING:\n        import typing\n")
    tree = ast.parse(source)
    assert unexplained_late_imports("agentctx.ops.stray", source, tree) == [
        "agentctx.ops.stray:3: import json",
        "agentctx.ops.stray:12: from agentctx.core import config"]
    assert unexplained_late_imports("agentctx.store.stray", source, tree) == []
    assert unexplained_late_imports("agentctx.hooks.stray", source, tree) == []


def test_hooks_import_only_the_core_the_context_and_the_store() -> None:
    reached: dict[str, str] = {}
    waiting = [name for name in ALL if within(name, "agentctx.hooks")]
    while waiting:
        name = waiting.pop()
        path, tree = ALL[name]
        for target, line in imports_of(name, tree):
            if target not in ALL or target in reached:
                continue
            reached[target] = f"{rel(path)}:{line}"
            waiting.append(target)
    outside = {target: where for target, where in reached.items() if not (
        target == "agentctx" or within(target, "agentctx.hooks")
        or any(within(target, package) for package in HOOK_PATH))}
    assert not outside, "the hook path reaches beyond the core, context and store:\n" + "\n".join(
        f"{where} imports {target}" for target, where in sorted(outside.items()))


def import_circles(sources: dict[str, tuple[Path, ast.Module]], package: str,
                   ) -> list[list[str]]:
    """The circles among the modules of ``package``: every group of two or more modules that
    reach each other through imports (those inside functions too; ``TYPE_CHECKING`` ones do not
    run and are left out), found as the strongly connected parts of the import graph."""
    graph = {name: sorted({target for target, _ in imports_of(name, tree)
                           if target in sources and target != name and within(target, package)})
             for name, (_path, tree) in sources.items() if within(name, package)}
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(name: str) -> None:
        order[name] = low[name] = len(order)
        stack.append(name)
        for target in graph.get(name, []):
            if target not in order:
                visit(target)
                low[name] = min(low[name], low[target])
            elif target in stack:
                low[name] = min(low[name], order[target])
        if low[name] == order[name]:
            group = stack[stack.index(name):]
            del stack[stack.index(name):]
            if len(group) > 1:
                circles.append(sorted(group))

    for name in graph:
        if name not in order:
            visit(name)
    return circles


def test_the_tui_has_no_import_circle() -> None:
    """Panes get the browser's state when they are made; none imports the App (which imports
    them), so the TUI's modules form no circle."""
    assert not import_circles(ALL, "agentctx.tui")


def test_the_circle_check_catches_a_pane_that_imports_the_app() -> None:
    broken = {name: ALL[name] for name in ALL if within(name, "agentctx.tui")}
    broken["agentctx.tui.pane"] = (PACKAGE / "tui" / "pane.py", ast.parse(
        "def app():\n    from agentctx.tui.app import AgentctxApp\n"))
    assert ["agentctx.tui.app", "agentctx.tui.pane"] in [
        [n for n in circle if n in ("agentctx.tui.app", "agentctx.tui.pane")]
        for circle in import_circles(broken, "agentctx.tui")]


def test_no_import_probe_for_a_module_of_our_own() -> None:
    """``try: import agentctx.x / except ImportError`` was for modules not written yet; every
    module ships with agentctx now."""
    found = []
    for _name, (path, tree) in ALL.items():
        for node in ast.walk(tree):
            if not isinstance(node, ast.Try):
                continue
            caught = {ast.unparse(h.type) for h in node.handlers if h.type is not None}
            if not any("ImportError" in c or "ModuleNotFoundError" in c for c in caught):
                continue
            for statement in node.body:
                for inner in ast.walk(statement):
                    names = ([a.name for a in inner.names] if isinstance(inner, ast.Import)
                             else [inner.module or ""] if isinstance(inner, ast.ImportFrom)
                             else [])
                    if isinstance(inner, ast.Call) and ast.unparse(inner.func).endswith(
                            "import_module") and inner.args:
                        names = [ast.unparse(inner.args[0]).strip("'\"")]
                    for module in names:
                        if module.split(".")[0] == "agentctx":
                            found.append(f"{rel(path)}:{node.lineno} probes {module}")
    assert not found, "\n".join(found)


# Names two modules may share, and why.
SHARED_NAMES = {
    "run": "the entry point of each offline pass (consolidate/run.py, extract/run.py)",
    "app": "the application object of each long-lived surface (mcpserver/app.py, tui/app.py)",
}


def name_clashes(names: list[str]) -> list[str]:
    """The module names among dotted ``names`` that more than one module (or package) uses,
    apart from a CLI module named after the package or store module whose commands it holds
    (cli/records.py over store/records.py, cli/hooks.py over hooks/) and SHARED_NAMES."""
    seen: dict[str, list[str]] = {}
    for name in names:
        seen.setdefault(name.rsplit(".", 1)[-1], []).append(name)
    found = []
    for short, same in sorted(seen.items()):
        if len(same) < 2 or short in SHARED_NAMES:
            continue
        cli = [n for n in same if n.startswith("agentctx.cli.")]
        commanded = [n for n in same if n in (f"agentctx.{short}", f"agentctx.store.{short}")]
        if not (len(same) == 2 and len(cli) == 1 and len(commanded) == 1):
            found.append(f"{short}: {', '.join(same)}")
    return found


def test_module_names_are_distinct() -> None:
    """A module's name says which module is meant."""
    found = name_clashes(list(ALL))
    assert not found, "\n".join(found)


def test_the_name_check_catches_a_clash() -> None:
    assert name_clashes(["agentctx.cli.common", "agentctx.hooks.common"]) == [
        "common: agentctx.cli.common, agentctx.hooks.common"]
    assert name_clashes(["agentctx.store.records", "agentctx.cli.records"]) == []
    assert name_clashes(["agentctx.hooks", "agentctx.cli.hooks", "agentctx.x.hooks"]) != []


def test_the_readme_states_the_rules() -> None:
    rule = " ".join((__doc__ or "").split())
    last = "says why it waits."
    start, end = rule.index("Floors, top to bottom"), rule.index(last)
    text = " ".join((PACKAGE.parent / "README.md").read_text(encoding="utf-8").split())
    assert rule[start:end + len(last)] in text
