"""runs/runner.py and runs/report_ask.py do not import each other in a circle (issue 27):
the case job and its outcome live in runs/case_job.py, and no module of the package
hides an import of another inside a function."""

from __future__ import annotations

import ast
from pathlib import Path

import reader_app.runs

RUNS = Path(reader_app.runs.__file__).resolve().parent


def _imports(path: Path) -> tuple[set[str], set[str]]:
    """(runs modules imported at the top, runs modules imported inside a function)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top: set[str] = set()
    nested: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("reader_app.runs."):
            name = (node.module or "").removeprefix("reader_app.runs.")
            (top if node in tree.body else nested).add(name)
    return top, nested


def test_the_runs_package_has_no_import_cycle_and_no_hidden_import() -> None:
    graph: dict[str, set[str]] = {}
    for path in sorted(RUNS.glob("*.py")):
        top, nested = _imports(path)
        assert nested == set(), f"{path.name} imports {nested} inside a function"
        graph[path.stem] = top
    assert "runner" not in graph["report_ask"]  # the circle of issue 27
    assert "report_ask" in graph["runner"]

    def reach(start: str) -> set[str]:
        seen: set[str] = set()
        todo = list(graph.get(start, ()))
        while todo:
            name = todo.pop()
            if name not in seen:
                seen.add(name)
                todo.extend(graph.get(name, ()))
        return seen

    cycles = [name for name in graph if name in reach(name)]
    assert cycles == []
