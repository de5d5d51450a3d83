"""The app's import graph, read from the source, checked against DESIGN.md's layer order.

    python scripts/import_graph.py            # edges, back-edges, cycles; exit 1 if any rule breaks
    python scripts/import_graph.py --edges    # also every edge between the service units
    python scripts/import_graph.py --root DIR # the same for another checkout (e.g. before a change)

Every ``import`` counts, the ones inside functions too (they hide a dependency, not remove it).
A *unit* is a sub-package of ``reader_app`` (``reader_app/grading/``) or one of its top-level
modules (``reader_app/results.py``). ``LAYERS`` lists the units from the top (the UI) down to
the floor (core, models); a unit may import units of its own layer or below, never
above: such an import is a *back-edge*. A *cycle* is a set of modules that import each other
round (module level, so a circle inside one package counts). Besides the order, the two other
rules of DESIGN.md section 2: ``scoring`` imports none of the app, and nothing below the UI
imports ``streamlit`` or ``reader_app.ui``; and the app uses scoring's public face only (the
``__all__`` of ``scoring`` and ``scoring.io``). tests/test_import_rules.py runs the same code.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
APP = "reader_app"

# DESIGN.md section 2, top to bottom: ui -> services -> models/db. One line per layer; a unit
# may import its own layer and every layer below it. A new unit must be placed here.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("web",),  # the served app and its doors in front of Streamlit (reader_app/web/)
    ("ui", "main"),  # Streamlit: pages, components, the script
    ("cli", "commands"),  # the `readerstudy` command
    ("study_setup",),  # set-up in the browser: upload, check, import
    ("analysis",),  # coordinator and analyst services, exports, HTML report
    ("charts",),  # Vega-Lite specs of the tables analysis builds
    ("grounding_audit",),  # the causal grounding audit: its arms are model runs
    ("runs",),  # model runs: prompt, runner, leases, importers
    ("results",),  # DB rows -> the tidy frame (reads grade memory)
    ("grading",),  # answer key, grade memory, adjudication, judges
    ("ingest",),  # manifest, readers, anonymize, render, import
    ("exam",),  # the reading session
    ("grounding",),  # a location and a reference mask: storage and the hit test
    ("study",),  # case bank, study settings, answer modes, PNG store, windows, state switch
    ("llm",),  # the one OpenAI-compatible chat client, judges, prompts
    ("responses",),  # the one builder of responses rows: exam, model runs, imports
    ("core", "migrations"),  # settings, db, errors, logs, audit, auth, text rules, doors
    ("models",),  # the tables
    ("",),  # reader_app/__init__.py
)
UI_UNITS = frozenset(LAYERS[0] + LAYERS[1])
SERVICE_FORBIDDEN = ("streamlit", f"{APP}.ui")
SCORING_FORBIDDEN = ("streamlit", "sqlmodel", "sqlalchemy", "pydicom", APP)
# the app imports scoring through these packages' __all__ only (their submodules may move)
SCORING_FACES = ("scoring", "scoring.io")


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def find_modules(root: Path, packages: Iterable[str]) -> dict[str, Path]:
    """Every module of the packages (generated Alembic revisions left out) -> its file."""
    found: dict[str, Path] = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            if "versions" not in path.relative_to(root).parts:
                found[module_name(path, root)] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imported_names(module: str, path: Path, known: Collection[str] = ()) -> dict[str, bool]:
    """Every name an import statement anywhere in the file names (relative ones resolved)
    -> whether it is imported only under ``if TYPE_CHECKING:`` (for annotations).

    ``from p import a, b`` names ``p``, ``p.a`` and ``p.b`` (either may be a module), less
    ``p`` when ``p.a`` and ``p.b`` are all ``known`` modules: then those are what it uses."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names: dict[str, bool] = {}

    def add(name: str, type_only: bool) -> None:
        names[name] = names.get(name, True) and type_only

    def visit(node: ast.AST, type_only: bool) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name, type_only)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                anchor = parts[: len(parts) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            subs = [f"{base}.{alias.name}" for alias in node.names]  # maybe submodules
            if not all(sub in known for sub in subs):
                add(base, type_only)
            for sub in subs:
                add(sub, type_only)
        elif isinstance(node, ast.If) and _is_type_checking(node.test):
            for statement in node.body:
                visit(statement, True)
            for statement in node.orelse:
                visit(statement, type_only)
            return
        for child in ast.iter_child_nodes(node):
            visit(child, type_only)

    visit(ast.parse(path.read_text(), str(path)), False)
    return names


def _all_names(path: Path) -> set[str]:
    """The names a package's ``__init__.py`` lists in ``__all__`` (a literal list)."""
    for node in ast.parse(path.read_text(), str(path)).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            return {str(v) for v in ast.literal_eval(node.value)}
    return set()


def resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The module an imported name lives in: the longest known module it starts with."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def unit_of(module: str) -> str | None:
    """``reader_app.grading.rubric`` -> ``grading``; ``reader_app.results`` -> ``results``."""
    if module == APP:
        return ""
    if not module.startswith(APP + "."):
        return None
    return module.split(".")[1]


@dataclass
class Graph:
    modules: dict[str, Path]
    imports: dict[str, set[str]]  # module -> modules of ours it imports
    runtime: dict[str, set[str]]  # the same less those imported only for type checking
    external: dict[str, set[str]]  # module -> other names it imports (third party, stdlib)
    layers: Sequence[Sequence[str]]
    rank: dict[str, int] = field(init=False)

    def __post_init__(self) -> None:
        self.rank = {unit: i for i, layer in enumerate(self.layers) for unit in layer}

    def unit_edges(self) -> dict[tuple[str, str], list[tuple[str, str]]]:
        """(importing unit, imported unit) -> the (module, module) imports that make it."""
        edges: dict[tuple[str, str], list[tuple[str, str]]] = {}
        for source, targets in sorted(self.imports.items()):
            for target in sorted(targets):
                a, b = unit_of(source), unit_of(target)
                if a is not None and b is not None and a != b:
                    edges.setdefault((a, b), []).append((source, target))
        return edges

    def unplaced(self) -> list[str]:
        units = {unit_of(m) for m in self.modules}
        return sorted(u for u in units if u is not None and u not in self.rank)

    def back_edges(self) -> list[tuple[str, str]]:
        """Imports from a unit to a unit of a higher layer, module by module."""
        found: list[tuple[str, str]] = []
        for (a, b), pairs in self.unit_edges().items():
            if a in self.rank and b in self.rank and self.rank[b] < self.rank[a]:
                found.extend(pairs)
        return sorted(found)

    def cycles(self) -> list[list[str]]:
        """Sets of two or more modules that import each other round at run time (Tarjan's
        strongly connected components), each sorted; imports for type checking only
        cannot make an import circle, so they are left out here (not from the layers)."""
        index: dict[str, int] = {}
        low: dict[str, int] = {}
        stack: list[str] = []
        on_stack: set[str] = set()
        found: list[list[str]] = []

        def visit(node: str) -> None:
            index[node] = low[node] = len(index)
            stack.append(node)
            on_stack.add(node)
            for succ in sorted(self.runtime.get(node, ())):
                if succ not in index:
                    visit(succ)
                    low[node] = min(low[node], low[succ])
                elif succ in on_stack:
                    low[node] = min(low[node], index[succ])
            if low[node] == index[node]:
                group: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))

        for module in sorted(self.imports):
            if module not in index:
                visit(module)
        return sorted(found)

    def forbidden(self, sources: Iterable[str], names: Sequence[str]) -> list[tuple[str, str]]:
        """(module, name) for each direct import by one of ``sources`` of a forbidden name."""
        hits: list[tuple[str, str]] = []
        for module in sorted(sources):
            for name in sorted(self.external[module] | self.imports[module]):
                if any(name == bad or name.startswith(bad + ".") for bad in names):
                    hits.append((module, name))
        return hits

    def below_ui_importing_streamlit(self) -> list[tuple[str, str]]:
        services = [m for m in self.modules if unit_of(m) not in UI_UNITS and m.startswith(APP)]
        return self.forbidden(services, SERVICE_FORBIDDEN)

    def past_the_scoring_face(self) -> list[tuple[str, str]]:
        """(module, name) for each name the app imports from scoring other than through
        ``from scoring import X`` or ``from scoring.io import X`` with X in its ``__all__``."""
        public = {
            face: _all_names(self.modules[face]) for face in SCORING_FACES if face in self.modules
        }
        hits: list[tuple[str, str]] = []
        for module, path in sorted(self.modules.items()):
            if not module.startswith(APP):
                continue
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names if a.name.startswith("scoring.")]
                elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                    base = node.module
                    if base != "scoring" and not base.startswith("scoring."):
                        continue
                    exported = public.get(base, set())
                    names = [f"{base}.{a.name}" for a in node.names if a.name not in exported]
                else:
                    continue
                hits.extend((module, name) for name in names)
        return sorted(set(hits))

    def scoring_importing_the_app(self) -> list[tuple[str, str]]:
        scoring = [m for m in self.modules if m == "scoring" or m.startswith("scoring.")]
        return self.forbidden(scoring, SCORING_FORBIDDEN)


def build(
    root: Path = ROOT,
    packages: Sequence[str] = (APP, "scoring"),
    layers: Sequence[Sequence[str]] = LAYERS,
) -> Graph:
    modules = find_modules(root, packages)
    imports: dict[str, set[str]] = {}
    runtime: dict[str, set[str]] = {}
    external: dict[str, set[str]] = {}
    for module, path in modules.items():
        imports[module], runtime[module], external[module] = set(), set(), set()
        for name, type_only in imported_names(module, path, modules).items():
            target = resolve(name, modules)
            if target is None:
                external[module].add(name)
            elif target != module:
                imports[module].add(target)
                if not type_only:
                    runtime[module].add(target)
    return Graph(modules, imports, runtime, external, layers)


def report(graph: Graph, show_edges: bool = False) -> tuple[str, int]:
    """The printed report and the number of broken rules in it."""
    lines: list[str] = []
    edges = graph.unit_edges()
    services = {
        pair: pairs
        for pair, pairs in edges.items()
        if pair[0] not in UI_UNITS and pair[0] not in ("cli", "commands")
    }
    lines.append(f"{len(graph.modules)} modules; {len(edges)} edges between units.")
    lines.append(
        "Layers, top to bottom: "
        + " > ".join("/".join(u or "<init>" for u in layer) for layer in graph.layers)
    )
    if show_edges:
        lines.append("\nService unit edges (importer -> imported, number of imports):")
        for (a, b), pairs in sorted(services.items()):
            lines.append(f"  {a or '<init>'} -> {b or '<init>'} ({len(pairs)})")
    problems = 0
    sections = [
        ("Units missing from LAYERS", [(u, "") for u in graph.unplaced()]),
        ("Back-edges (a lower layer importing a higher one)", graph.back_edges()),
        (
            "Below the UI, importing streamlit or reader_app.ui",
            graph.below_ui_importing_streamlit(),
        ),
        ("scoring importing the app or a UI/DB/DICOM library", graph.scoring_importing_the_app()),
        (
            "The app importing scoring past scoring / scoring.io __all__",
            graph.past_the_scoring_face(),
        ),
    ]
    for title, items in sections:
        lines.append(f"\n{title}: {len(items)}")
        lines.extend(f"  {a} -> {b}" if b else f"  {a}" for a, b in items)
        problems += len(items)
    cycles = graph.cycles()
    lines.append(f"\nCycles: {len(cycles)}")
    lines.extend("  " + " <-> ".join(group) for group in cycles)
    problems += len(cycles)
    return "\n".join(lines), problems


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--edges", action="store_true", help="print every service unit edge")
    parser.add_argument("--root", type=Path, default=ROOT, help="another checkout to read")
    args = parser.parse_args(argv)
    text, problems = report(build(args.root), show_edges=args.edges)
    print(text)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
