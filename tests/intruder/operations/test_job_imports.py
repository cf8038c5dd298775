"""Jobs point one way: views -> start services -> the queue; tasks -> services -> the queue.

The graph is read from the source (every import statement, function-level ones included,
`if TYPE_CHECKING:` blocks left out since they never run), so a lazy import inside a function
cannot hide a cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path

from intruder.models import Job
from intruder.services import jobs

ROOT = Path(__file__).resolve().parents[3]
QUEUE = "intruder.services.jobs"
RUNNERS = "intruder.tasks"


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _runtime_imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Return the import statements that run: all of them but those under TYPE_CHECKING."""
    found: list[ast.Import | ast.ImportFrom] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def import_graph() -> dict[str, set[str]]:
    """Return module -> the `intruder` modules it imports, for every production module."""
    paths = {
        _module_name(path): path
        for path in (ROOT / "intruder").rglob("*.py")
        if "migrations" not in path.parts
    }
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        edges: set[str] = set()
        for node in _runtime_imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif node.level == 0 and node.module:
                # "from package import module" imports the module; "from module import x" not.
                targets = [
                    f"{node.module}.{alias.name}"
                    if f"{node.module}.{alias.name}" in paths
                    else node.module
                    for alias in node.names
                ]
            else:
                continue
            edges.update(target for target in targets if target in paths and target != name)
        graph[name] = edges
    return graph


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        for target in graph.get(todo.pop(), ()):
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


def test_the_queue_imports_no_service_view_or_runner() -> None:
    below = reachable(import_graph(), QUEUE)
    assert RUNNERS not in below
    assert not {m for m in below if m.startswith(("intruder.services.", "intruder.views"))}


def test_only_the_app_config_imports_the_runners() -> None:
    importers = {name for name, edges in import_graph().items() if RUNNERS in edges}
    assert importers == {"intruder.apps"}


def test_no_import_cycle_passes_through_the_queue_or_the_runners() -> None:
    graph = import_graph()
    for module in (QUEUE, RUNNERS):
        assert module not in reachable(graph, module), f"{module} imports itself back"


def test_every_kind_has_one_runner_and_no_runner_lacks_a_kind() -> None:
    assert set(jobs.TASKS) == set(Job.Kind.values)


def test_no_module_names_a_job_kind_by_its_string() -> None:
    """Kinds are Job.Kind members: a misspelt string would queue a job nobody runs."""
    named = []
    for path in (ROOT / "intruder").rglob("*.py"):
        if "migrations" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.keyword)
                and node.arg in ("kind", "kinds")
                and isinstance(node.value, ast.Constant)
                and node.value.value in Job.Kind.values
            ):
                named.append(f"{path.relative_to(ROOT)}:{node.value.lineno}")
    assert named == []
