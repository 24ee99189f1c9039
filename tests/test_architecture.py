"""The architecture, checked on the source tree: wings, sizes, import direction, no circles.

Imports are read from the AST of every module, so an import inside a function or under
``if TYPE_CHECKING:`` counts as much as one at the top: a circle that exists only through
type imports still shows a value living in the wrong module.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

import pytest

from core.plan.dag import dependency_cycles
from tests.support import REPO

MAX_TOP_LEVEL_CORE_MODULES = 6
# Past this size a module says in its docstring why it is still one concept.
EXPLAINED_MODULE_LINES = 600
# The wings of core/, lowest first: a wing imports only from itself and the wings before
# it (docs/ARCHITECTURE.md draws the same order). core.errors and core.lifecycle belong to
# the base; the entry point core.__main__ stands above everything.
WING_ORDER = ("base", "tools", "plan", "llm", "prompts", "planning", "execution", "store",
              "access", "review", "learning", "runs", "cli")
# What the faces (pages/, ui/) must reach only through core's public functions.
FACE_FORBIDDEN = (
    "core.store",
    "core.runs.runner", "core.runs.live_run", "core.runs.recovery",
    "demo.shop", "demo.knowledge", "demo.ops", "demo.analytics",
    "core.tools.research", "core.tools.builtin", "demo.db",
)


@dataclass(frozen=True)
class Import:
    """One import statement's target, seen from the module that holds it."""

    source: str  # the importing module, e.g. "core.execution.coordinator"
    target: str  # a module name; a project module when one matches, else as written
    line: int
    kind: str  # "top-level", "TYPE_CHECKING" or "function-local"

    def where(self) -> str:
        return f"{self.source}:{self.line} ({self.kind})"


def module_name(path: Path) -> str:
    """``core/plan/model.py`` -> ``core.plan.model``; a package's ``__init__`` -> the package."""
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules_under(folder: str) -> dict[str, Path]:
    """Every Python module under ``folder`` of the repository, by dotted name."""
    return {module_name(path): path for path in sorted((REPO / folder).rglob("*.py"))}


PROJECT_MODULES = {**modules_under("core"), **modules_under("ui"), **modules_under("pages")}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _targets(node: ast.Import | ast.ImportFrom, source: str, is_package: bool) -> list[str]:
    """The modules an import statement loads (``from core.x import y``: core.x.y if a module)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:  # relative: resolve against the importing module's package
        package = source.split(".") if is_package else source.split(".")[:-1]
        package = package[: len(package) - (node.level - 1)]
        base = ".".join([*package, base] if base else package)
    found = []
    for alias in node.names:
        submodule = f"{base}.{alias.name}"
        found.append(submodule if submodule in PROJECT_MODULES else base)
    return found


def imports_of(name: str) -> list[Import]:
    """Every import in module ``name``, wherever it sits in the file."""
    path = PROJECT_MODULES[name]
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    found: list[Import] = []

    def visit(node: ast.AST, kind: str) -> None:
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.extend(Import(name, target, node.lineno, kind)
                         for target in _targets(node, name, is_package))
        for child in ast.iter_child_nodes(node):
            if isinstance(node, ast.If) and _is_type_checking(node.test) and child in node.body:
                child_kind = "TYPE_CHECKING"
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                child_kind = "function-local"
            else:
                child_kind = kind
            visit(child, child_kind)

    visit(tree, "top-level")
    return found


def _within(target: str, prefix: str) -> bool:
    return target == prefix or target.startswith(prefix + ".")


def core_graph() -> dict[str, dict[str, list[Import]]]:
    """Module -> imported core module -> the imports that make that edge."""
    graph: dict[str, dict[str, list[Import]]] = {}
    for name in PROJECT_MODULES:
        if not _within(name, "core"):
            continue
        edges = graph.setdefault(name, {})
        for item in imports_of(name):
            if item.target in PROJECT_MODULES and item.target != name:
                edges.setdefault(item.target, []).append(item)
    return graph


def strongly_connected(graph: dict[str, dict[str, list[Import]]]) -> list[list[str]]:
    """The groups of modules that import each other, directly or not (core.plan.dag's
    cycle finder, which is tested on plans)."""
    return [sorted(group) for group in dependency_cycles(
        {name: sorted(edges) for name, edges in sorted(graph.items())})]


def shortest_cycle(graph: dict[str, dict[str, list[Import]]], start: str,
                   members: set[str]) -> list[str]:
    """The shortest import path from ``start`` back to itself inside one group."""
    previous: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for nxt in sorted(graph.get(node, {})):
            if nxt not in members or nxt in previous:
                continue
            previous[nxt] = node
            if nxt == start:
                path = [start]
                while path[-1] != start or len(path) == 1:
                    path.append(previous[path[-1]])
                return path[::-1]
            queue.append(nxt)
    raise AssertionError(f"{start} is in a group but on no cycle")  # Tarjan rules this out


def describe_cycle(graph: dict[str, dict[str, list[Import]]], cycle: list[str]) -> str:
    """``a -> b -> a`` and, for each arrow, where the import is and what kind it is."""
    arrows = [
        f"    {a} -> {b}: " + ", ".join(dict.fromkeys(item.where() for item in graph[a][b]))
        for a, b in pairwise(cycle)
    ]
    return " -> ".join(cycle) + "\n" + "\n".join(arrows)


@pytest.mark.parametrize(("source", "code", "expected"), [
    ("core.x", "from core.tools import builtin, registry",
     ["core.tools.builtin", "core.tools.registry"]),
    ("core.x", "from core.tools import tool", ["core.tools"]),
    ("core.x", "import core.store.run_store", ["core.store.run_store"]),
    ("core.tools.builtin", "from . import registry", ["core.tools.registry"]),
    ("core.tools.builtin", "from ..plan.model import Plan", ["core.plan.model"]),
    ("core.tools", "from .registry import tool", ["core.tools.registry"]),
])
def test_import_targets_resolve_to_modules(source, code, expected):
    node = ast.parse(code).body[0]
    assert isinstance(node, ast.Import | ast.ImportFrom)
    assert _targets(node, source, is_package=source == "core.tools") == expected


def test_core_never_imports_streamlit():
    offenders = [item.where() + f" imports {item.target}"
                 for name in PROJECT_MODULES if _within(name, "core")
                 for item in imports_of(name) if _within(item.target, "streamlit")]
    assert not offenders, "core/ must stay usable without Streamlit:\n" + "\n".join(offenders)


def _bare_expressions(body: list[ast.stmt], *, module: bool = True) -> Iterator[ast.Expr]:
    """Expression statements Streamlit's "magic" would draw, under ``body`` (not inside a
    function or class, where magic does not look; a leading docstring aside)."""
    for index, node in enumerate(body):
        if isinstance(node, ast.Expr):
            drawn = not isinstance(node.value, ast.Call | ast.Await | ast.Yield | ast.YieldFrom)
            docstring = module and index == 0 and isinstance(node.value, ast.Constant)
            if drawn and not docstring:
                yield node
        elif not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            for field in ("body", "orelse", "finalbody"):
                yield from _bare_expressions(getattr(node, field, []), module=False)
            for handler in getattr(node, "handlers", []):
                yield from _bare_expressions(handler.body, module=False)


def test_no_page_relies_on_streamlit_magic():
    """.streamlit/config.toml turns magic off (it parses every page in the script's thread,
    which CPython 3.11 can disturb from another thread): a bare value on a page would vanish."""
    settings = (REPO / ".streamlit" / "config.toml").read_text(encoding="utf-8")
    assert re.search(r"(?m)^magicEnabled = false$", settings)
    scripts = [REPO / "dashboard.py", *sorted((REPO / "pages").glob("*.py"))]
    drawn = [f"{path.name}:{node.lineno}" for path in scripts
             for node in _bare_expressions(ast.parse(path.read_text(encoding="utf-8")).body)]
    assert not drawn, drawn


def test_core_holds_few_modules_directly():
    direct = sorted(path.name for path in (REPO / "core").glob("*.py"))
    assert len(direct) <= MAX_TOP_LEVEL_CORE_MODULES, (
        f"core/ holds {len(direct)} modules directly (at most {MAX_TOP_LEVEL_CORE_MODULES}: "
        f"entry points and the shared base): {', '.join(direct)}")


def test_a_long_module_says_why_it_is_one_concept():
    unexplained = []
    for name, path in sorted(PROJECT_MODULES.items()):
        source = path.read_text(encoding="utf-8")
        if len(source.splitlines()) <= EXPLAINED_MODULE_LINES:
            continue
        docstring = ast.get_docstring(ast.parse(source)) or ""
        if "one concept" not in docstring.lower():
            unexplained.append(f"{name}: {len(source.splitlines())} lines")
    assert not unexplained, (
        f"these modules pass {EXPLAINED_MODULE_LINES} lines: say in the docstring why each "
        "is one concept (the words 'one concept'), or split it by concept:\n"
        + "\n".join(unexplained))


def test_no_import_circle_in_core():
    graph = core_graph()
    reports = []
    for group in strongly_connected(graph):
        members = set(group)
        cycles = {tuple(shortest_cycle(graph, start, members)) for start in group}
        # the same circle found from each of its members: keep one rotation of each
        unique = {min(cycle[i:-1] + cycle[:i] + (cycle[i],) for i in range(len(cycle) - 1))
                  for cycle in cycles}
        reports.extend(describe_cycle(graph, list(cycle)) for cycle in sorted(unique))
    assert not reports, "import circles in core/ (type-only and local imports count):\n" + (
        "\n".join(reports))


def wing_of(module: str) -> str | None:
    """The wing a core module belongs to (None for the package and its entry point)."""
    parts = module.split(".")
    if len(parts) < 2 or parts[1] == "__main__":
        return None
    return "base" if parts[1] in ("errors", "lifecycle") else parts[1]


def test_every_core_module_lives_in_a_known_wing():
    unknown = sorted(name for name in PROJECT_MODULES if _within(name, "core")
                     and wing_of(name) not in (*WING_ORDER, None))
    assert not unknown, f"modules outside the wings {WING_ORDER}: {unknown}"


def test_wings_import_only_downward():
    rank = {wing: position for position, wing in enumerate(WING_ORDER)}
    upward = [
        f"{item.where()} imports {target} ({wing_of(source)} may not import {wing_of(target)})"
        for source, edges in core_graph().items() if wing_of(source) in rank
        for target, items in edges.items() if wing_of(target) in rank
        for item in items[:1]
        if rank[wing_of(target)] > rank[wing_of(source)]
    ]
    assert not upward, "imports that point up the wings:\n" + "\n".join(sorted(upward))


def test_no_module_imports_its_own_wings_face():
    """``from core.plan import dag`` inside core.plan runs core/plan/__init__.py first, whose
    re-exports import the wing's modules back: a circle the module graph above cannot see."""
    offenders = []
    for name, path in PROJECT_MODULES.items():
        parts = name.split(".")
        if parts[0] != "core" or len(parts) < 3:
            continue
        wing = ".".join(parts[:2])
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        offenders.extend(f"{name}:{node.lineno} imports from {wing}" for node in ast.walk(tree)
                         if isinstance(node, ast.ImportFrom) and node.module == wing)
    assert not offenders, "import the defining module, not the wing's face:\n" + "\n".join(
        offenders)


@pytest.mark.parametrize("face", ["pages", "ui"])
def test_faces_reach_core_only_through_public_functions(face):
    offenders = [
        f"{item.where()} imports {item.target}"
        for name in PROJECT_MODULES if _within(name, face)
        for item in imports_of(name)
        if any(_within(item.target, forbidden) for forbidden in FACE_FORBIDDEN)
    ]
    assert not offenders, (
        f"{face}/ must not import core's store, runner internals or tool implementations:\n"
        + "\n".join(offenders))


def test_fake_server_and_bench_import_without_pytest():
    probe = ("import sys, tests.support.fake_openai, tests.support.fake_openai_server, "
             "tests.support.hostile_plans, bench.engine_bench; "
             "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pytest', '_pytest')))")
    result = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True,
                            text=True, timeout=120, check=True)
    assert result.stdout.strip() == "[]", result.stdout


# ---- the engine knows no demo ----------------------------------------------------------------

ENGINE_AND_FACES = (*sorted((REPO / "core").rglob("*.py")), *sorted((REPO / "ui").rglob("*.py")),
                    *sorted((REPO / "pages").rglob("*.py")), REPO / "app.py",
                    REPO / "dashboard.py")
# Demo parameter names that are also ordinary words the engine uses for its own things,
# each with its reason; any other demo tool or field named outside demo/ fails the test.
GENERIC_WORDS = {
    "query": "the usual name of a search parameter, and of a database query in the store",
    "reason": "a route's, a checkpoint decision's and a reflection's reason",
    "service": "an English word (customer service, a web service)",
}


def _imported_packages(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name.split(".")[0]) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.append((node.lineno, node.module.split(".")[0]))
    return found


def test_the_engine_and_the_faces_never_import_the_demo():
    offenders = [f"{path.relative_to(REPO)}:{line}" for path in ENGINE_AND_FACES
                 for line, package in _imported_packages(path) if package == "demo"]
    assert not offenders, "core/, ui/, pages/, app.py and dashboard.py reach the demo only " \
                          "through the registry's packs:\n" + "\n".join(offenders)


def demo_names() -> set[str]:
    """The demo pack's tool names and its own parameter and declared result field names."""
    from core.tools.toolsets import default_registry

    names: set[str] = set()
    for tool in default_registry({}):
        if tool.source == "demo":
            names |= {tool.name, *(tool.parameters.get("properties") or {}),
                      *tool.hints.id_fields, *tool.hints.field_labels.values()}
    return names


def test_no_module_outside_the_demo_names_a_demo_tool_or_field():
    names = demo_names()
    assert {"query_order", "apply_refund", "run_sql", "order_id", "refund_id"} <= names
    pattern = re.compile(r"(?<!\w)(" + "|".join(sorted(map(re.escape, names - set(
        GENERIC_WORDS)))) + r")(?!\w)")
    offenders = [f"{path.relative_to(REPO)}:{number}: {match.group(1)}"
                 for path in ENGINE_AND_FACES
                 for number, line in enumerate(path.read_text("utf-8").splitlines(), 1)
                 for match in pattern.finditer(line)]
    assert not offenders, "the engine and the faces name demo tools or fields (code, " \
                          "docstrings and texts alike):\n" + "\n".join(offenders)


# ---- the tests lean on support, not on each other -------------------------------------------

def imported_test_modules(source: str) -> list[tuple[int, str]]:
    """The test modules (``test_*``) that ``source`` imports, with their lines."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        else:
            continue
        found += [(node.lineno, name) for name in names
                  if name.split(".")[-1].startswith("test_")]
    return found


def test_no_test_module_imports_another():
    assert imported_test_modules("from tests.ui.test_ui_app import open_app\nimport os") == [
        (1, "tests.ui.test_ui_app")]
    assert imported_test_modules("from tests import test_cli") == [(1, "tests.test_cli")]
    offenders = [f"{path.relative_to(REPO)}:{line} imports {name}"
                 for path in sorted((REPO / "tests").rglob("*.py"))
                 for line, name in imported_test_modules(path.read_text(encoding="utf-8"))]
    assert not offenders, ("shared helpers belong in tests/support/ and fixtures in a "
                           "conftest.py:\n" + "\n".join(offenders))


# A fixture name means one thing: defined once, in the conftest of its concept or in the one
# module that uses it. A folder may override a root fixture for a reason said here.
FIXTURE_OVERRIDES = {
    "runner": "tests/ui/conftest.py: in page tests the runner is the app's own",
}


def fixtures_defined(source: str) -> list[str]:
    """The names of the pytest fixtures ``source`` defines at its top level."""
    names = []
    for node in ast.parse(source).body:
        if not isinstance(node, ast.FunctionDef):
            continue
        for decorator in node.decorator_list:
            call = decorator if isinstance(decorator, ast.Call) else None
            target = call.func if call else decorator
            if ast.unparse(target) in ("pytest.fixture", "fixture"):
                renamed = [kw.value.value for kw in (call.keywords if call else [])
                           if kw.arg == "name" and isinstance(kw.value, ast.Constant)]
                names.append(renamed[0] if renamed else node.name)
    return names


def test_every_fixture_name_is_defined_once():
    assert fixtures_defined("@pytest.fixture\ndef a(): ...\n@pytest.fixture(name='b')\n"
                            "def c(): ...\ndef d(): ...") == ["a", "b"]
    where: dict[str, list[str]] = {}
    for path in sorted((REPO / "tests").rglob("*.py")):
        for name in fixtures_defined(path.read_text(encoding="utf-8")):
            where.setdefault(name, []).append(str(path.relative_to(REPO)))
    twice = {name: paths for name, paths in where.items()
             if len(paths) > 1 and name not in FIXTURE_OVERRIDES}
    assert not twice, ("give each concept its own fixture name, or one definition in the "
                       f"conftest.py of its folder: {twice}")
    assert all(len(where.get(name, [])) == 2 for name in FIXTURE_OVERRIDES)


# ---- agents built elsewhere reach PlanBoard through the review client only ----------------

def test_the_integrations_and_the_review_client_stay_apart_from_the_engine():
    """An agent's project copies core/review/client.py alone, and the integrations use
    nothing else of PlanBoard."""
    client = REPO / "core" / "review" / "client.py"
    offenders = [f"core/review/client.py:{line} imports {package}"
                 for line, package in _imported_packages(client)
                 if package in ("core", "ui", "pages", "demo", "integrations")]
    for path in sorted((REPO / "integrations").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        offenders += [f"{path.relative_to(REPO)}:{node.lineno} imports {node.module}"
                      for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                      and (node.module or "").split(".")[0] in ("core", "ui", "pages", "demo")
                      and node.module != "core.review.client"]
    assert not offenders, "\n".join(offenders)
