"""The layering of agentctx, read from the source with the standard library's ``ast``.

The rule, in the same words as README.md and NOTES.md:

    SQL only in agentctx/store; nothing heavy on the hook path: agentctx/hooks imports, of agentctx,
    only the store and the lean core modules config, budget, redact, gitinfo, lean, injection,
    judgement, evidence, prompt_kind, digest, project_profile, background and safeio (and those
    import nothing else of agentctx); the lean core modules never import from agentctx/hooks; the
    store imports config, redact and gitinfo only inside functions, except the redact of records.py
    (every record is redacted before it is stored) and of scrub.py (it re-redacts what older
    versions stored).

"Heavy" third-party packages on the hook path are caught by the subprocess ``-X importtime``
test in ``tests/hooks/test_import_hygiene.py``; this file checks what only the source can tell.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "agentctx"

LEAN_CORE = ("config", "budget", "redact", "gitinfo", "lean", "injection", "judgement", "evidence",
             "prompt_kind", "digest", "project_profile", "background", "safeio")
# Module-level imports the store may make of what it otherwise imports only inside functions.
STORE_MODULE_LEVEL_ALLOWED = {
    ("records.py", "agentctx.redact"): "every record is redacted before it is stored",
    ("scrub.py", "agentctx.redact"): "it re-redacts what older versions stored",
}

# The start of an SQL statement (upper case, as agentctx writes SQL).
SQL = re.compile(r"""^\s*(
      SELECT\s+\S
    | INSERT\s+(OR\s+[A-Z]+\s+)?INTO\s
    | REPLACE\s+INTO\s
    | UPDATE\s+(OR\s+[A-Z]+\s+)?\S+\s+SET\s
    | DELETE\s+FROM\s
    | CREATE\s+(TEMP\s+|TEMPORARY\s+|UNIQUE\s+|VIRTUAL\s+)*(TABLE|INDEX|TRIGGER|VIEW)\s
    | DROP\s+(TABLE|INDEX|TRIGGER|VIEW)\s
    | ALTER\s+TABLE\s
    | PRAGMA\s+\w
    | WITH\s+(RECURSIVE\s+)?\w+\s*(\(|AS\s)
    | (BEGIN|COMMIT|ROLLBACK|SAVEPOINT|VACUUM|ATTACH|DETACH)(\s|$)
)""", re.VERBOSE)
# Calls that run SQL on a connection or a Store, whatever the receiver is called.
SQL_CALLS = frozenset({"execute", "executemany", "executescript"})


def modules(under: Path = PACKAGE) -> Iterator[tuple[str, Path, ast.Module]]:
    """``(dotted name, path, tree)`` of every module of the package under ``under``."""
    for path in sorted(under.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        yield name, path, ast.parse(path.read_text(encoding="utf-8"), str(path))


def rel(path: Path) -> str:
    return str(path.relative_to(PACKAGE.parent))


def is_store(name: str) -> bool:
    return name == "agentctx.store" or name.startswith("agentctx.store.")


def docstrings(tree: ast.Module) -> set[int]:
    """``id()`` of every docstring node (documentation may quote SQL)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def sql_violations(name: str, path: Path, tree: ast.Module) -> list[str]:
    """Where a module outside the store speaks SQL: an SQL statement in a string, a call of
    ``execute``/``executemany``/``executescript``, ``sqlite3.connect``, or a reach into a
    Store's connection (``.conn``)."""
    if is_store(name):
        return []
    skip = docstrings(tree)
    found = []
    for node in ast.walk(tree):
        where = f"{rel(path)}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            if SQL.match(node.value):
                found.append(f"{where}: SQL text {node.value[:40]!r}")
        elif isinstance(node, ast.JoinedStr):
            head = node.values[0] if node.values else None
            if isinstance(head, ast.Constant) and isinstance(head.value, str) and \
                    SQL.match(head.value):
                found.append(f"{where}: SQL text {head.value[:40]!r}")
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


ALL = {name: (path, tree) for name, path, tree in modules()}


def test_sql_only_in_the_store() -> None:
    found = [v for name, (path, tree) in ALL.items() for v in sql_violations(name, path, tree)]
    assert not found, "SQL outside agentctx/store:\n" + "\n".join(found)


def test_the_sql_check_catches_a_stray_query() -> None:
    stray = ast.parse('def count(db):\n    return db.execute("SELECT count(*) FROM records")\n')
    found = sql_violations("agentctx.stray", PACKAGE / "stray.py", stray)
    assert len(found) == 2  # the statement and the call that runs it
    assert any("SQL text 'SELECT count(*)" in f for f in found)
    prose = ast.parse('HELP = "Select the records from a project, then update the view."\n')
    assert sql_violations("agentctx.stray", PACKAGE / "stray.py", prose) == []
    assert sql_violations("agentctx.store.stray", PACKAGE / "store" / "stray.py", stray) == []


def test_imports_are_read_at_every_depth_but_type_checking() -> None:
    tree = ast.parse(
        "from agentctx import config\n"
        "TYPE_CHECKING = False\n"
        "if TYPE_CHECKING:\n    import agentctx.consolidate.run\n"
        "def late():\n    try:\n        from . import graph\n    finally:\n        pass\n"
        "    from agentctx.embedder import load_model\n")
    everywhere = {target for target, _ in imports_of("agentctx.store.records", tree)}
    assert everywhere == {"agentctx", "agentctx.config", "agentctx.store", "agentctx.store.graph",
                          "agentctx.embedder"}
    top = {target for target, _ in imports_of("agentctx.store.records", tree,
                                              module_level_only=True)}
    assert top == {"agentctx", "agentctx.config"}


def test_hooks_import_only_the_store_and_the_lean_core() -> None:
    allowed = {f"agentctx.{m}" for m in LEAN_CORE} | {"agentctx"}
    reached: dict[str, str] = {}
    waiting = [name for name in ALL if name.startswith("agentctx.hooks")]
    while waiting:
        name = waiting.pop()
        path, tree = ALL[name]
        for target, line in imports_of(name, tree):
            if target not in ALL or target in reached:
                continue
            reached[target] = f"{rel(path)}:{line}"
            waiting.append(target)
    outside = {target: where for target, where in reached.items() if not (
        target in allowed or is_store(target) or target.startswith("agentctx.hooks"))}
    assert not outside, "the hook path reaches beyond the store and the lean core:\n" + "\n".join(
        f"{where} imports {target}" for target, where in sorted(outside.items()))


def test_the_lean_core_never_imports_from_the_hooks() -> None:
    found = [f"{rel(ALL[name][0])}:{line} imports {target}"
             for name in (f"agentctx.{m}" for m in LEAN_CORE)
             for target, line in imports_of(name, ALL[name][1])
             if target.startswith("agentctx.hooks")]
    assert not found, "\n".join(found)


def test_the_store_imports_configuration_only_inside_functions() -> None:
    found = []
    for name, (path, tree) in ALL.items():
        if not is_store(name):
            continue
        for target, line in imports_of(name, tree, module_level_only=True):
            if target in ("agentctx.config", "agentctx.redact", "agentctx.gitinfo") and \
                    (path.name, target) not in STORE_MODULE_LEVEL_ALLOWED:
                found.append(f"{rel(path)}:{line} imports {target} at module level")
        for target, line in imports_of(name, tree):
            if not (is_store(target) or target in ("agentctx", "agentctx.lean", "agentctx.config",
                                                   "agentctx.redact", "agentctx.gitinfo")):
                found.append(f"{rel(path)}:{line} imports {target}")
    assert not found, "\n".join(found)


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


@pytest.mark.parametrize("words", [
    "SQL only in agentctx/store",
    "nothing heavy on the hook path",
    "config, budget, redact, gitinfo, lean, injection, judgement, evidence, prompt_kind, digest, "
    "project_profile, background and safeio",
])
def test_readme_and_notes_state_the_same_rule(words: str) -> None:
    rule = " ".join((__doc__ or "").split())
    assert words in rule
    for document in ("README.md", "NOTES.md"):
        text = " ".join((PACKAGE.parent / document).read_text(encoding="utf-8").split())
        end = "older versions stored)."
        assert rule[rule.index("SQL only"):rule.index(end) + len(end)] in text, document
