"""The layering rules of DESIGN.md section 2, side by side, each checked two ways.

1. ``scoring`` is pure: importing it pulls in no app code and no UI/DB/DICOM library.
2. Nothing below ``reader_app/`` outside ``reader_app/web``, ``reader_app/ui`` and
   ``reader_app/main.py`` imports ``streamlit`` or ``reader_app.ui``; the plain ASGI doors
   of ``reader_app/web`` (``PLAIN_ASGI``) import neither.
3. Dependencies point one way: each service unit imports only units of its own layer or
   below in ``scripts/import_graph.py``'s ``LAYERS`` (ui -> services -> models/db), and no
   modules import each other round.

Rules 1 and 2 are checked statically (every ``import`` in the source, including the
ones inside functions, followed through the package: the transitive closure) and
by importing the modules in a fresh interpreter and reading ``sys.modules``
(which also catches a third-party library that drags the forbidden one in).
Rule 3 is the graph of ``scripts/import_graph.py`` (the command that prints it), whose
parser the static walks here share.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _load_import_graph() -> ModuleType:
    spec = importlib.util.spec_from_file_location("import_graph", ROOT / "scripts/import_graph.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks itself up there
    spec.loader.exec_module(module)
    return module


import_graph = _load_import_graph()
SCORING_FORBIDDEN = ("streamlit", "sqlmodel", "sqlalchemy", "pydicom", "reader_app")
SERVICE_FORBIDDEN = ("streamlit", "reader_app.ui")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules(package: str) -> dict[str, Path]:
    return {_module_name(p): p for p in sorted((ROOT / package).rglob("*.py"))}


ALL = _modules("reader_app") | _modules("scoring")


def _is_ui(module: str) -> bool:
    # main.py is the Streamlit script; web/asgi.py serves it (st.App behind our doors)
    return module == "reader_app.main" or module.startswith(("reader_app.ui", "reader_app.web"))


# the doors of reader_app/web that are plain ASGI (no Streamlit): checked like services
PLAIN_ASGI = [
    f"reader_app.web.{name}"
    for name in (
        "security_headers",
        "origin_check",
        "browser_proof",
        "upload_gate",
        "upload_spool",
        "tcp_nodelay",
    )
]


SERVICES = sorted(
    m for m in _modules("reader_app") if not _is_ui(m) and ".migrations.versions" not in m
)


@cache
def _direct_imports(module: str) -> frozenset[str]:
    """Every module named by an import statement anywhere in the file (relative ones resolved)."""
    return frozenset(import_graph.imported_names(module, ALL[module]))


def _closure(module: str) -> dict[str, str]:
    """Every module reachable from ``module`` -> the module that imports it (for a path)."""
    seen = {module: ""}
    todo = [module]
    while todo:
        current = todo.pop()
        for name in _direct_imports(current):
            if name in seen:
                continue
            seen[name] = current
            if name in ALL:
                todo.append(name)
    return seen


def _chain(seen: dict[str, str], target: str) -> str:
    chain = [target]
    while seen.get(chain[-1]):
        chain.append(seen[chain[-1]])
    return " <- ".join(chain)


def _violations(module: str, forbidden: tuple[str, ...]) -> list[str]:
    seen = _closure(module)
    return [
        _chain(seen, name)
        for name in sorted(seen)
        if any(name == f or name.startswith(f + ".") for f in forbidden)
    ]


def _loaded_in_fresh_interpreter(modules: list[str], forbidden: tuple[str, ...]) -> list[str]:
    code = (
        "import importlib, json, sys\n"
        "for name in json.loads(sys.argv[1]):\n"
        "    importlib.import_module(name)\n"
        "bad = json.loads(sys.argv[2])\n"
        "print(json.dumps(sorted(m for m in sys.modules"
        " if any(m == b or m.startswith(b + '.') for b in bad))))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, json.dumps(modules), json.dumps(forbidden)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    loaded: list[str] = json.loads(out.stdout)
    return loaded


# --------------------------------------------------------------------------- rule 1: scoring


def test_scoring_imports_nothing_of_the_app_statically() -> None:
    bad = {m: v for m in _modules("scoring") if (v := _violations(m, SCORING_FORBIDDEN))}
    assert bad == {}


def test_scoring_in_a_fresh_interpreter_loads_nothing_forbidden() -> None:
    assert _loaded_in_fresh_interpreter(sorted(_modules("scoring")), SCORING_FORBIDDEN) == []


# --------------------------------------------------------------------------- rule 2: services


def test_no_service_module_imports_streamlit_or_the_ui_statically() -> None:
    assert len(SERVICES) > 50  # the walk found the package
    bad = {m: v for m in SERVICES if (v := _violations(m, SERVICE_FORBIDDEN))}
    assert bad == {}


def test_services_in_a_fresh_interpreter_load_no_streamlit() -> None:
    # migrations/env.py only runs inside Alembic; the static walk covers it
    importable = [m for m in SERVICES if not m.startswith("reader_app.migrations")]
    assert _loaded_in_fresh_interpreter(importable, SERVICE_FORBIDDEN) == []


def test_the_plain_asgi_doors_import_no_streamlit_nor_the_ui() -> None:
    assert set(PLAIN_ASGI) <= set(ALL)
    bad = {m: v for m in PLAIN_ASGI if (v := _violations(m, SERVICE_FORBIDDEN))}
    assert bad == {}
    assert _loaded_in_fresh_interpreter(PLAIN_ASGI, SERVICE_FORBIDDEN) == []


def test_the_checks_can_fail() -> None:
    """The UI itself breaks rule 2, and the static walk says through which import."""
    chains = _violations("reader_app.main", SERVICE_FORBIDDEN)
    assert "streamlit <- reader_app.main" in chains
    assert any(c.startswith("reader_app.ui") for c in chains)
    assert _loaded_in_fresh_interpreter(["reader_app.ui.context"], ("streamlit",)) != []


# --------------------------------------------------------------------------- rule 3: one way

# DESIGN.md's order, top to bottom (ui -> services -> core/models): the spine of LAYERS in
# scripts/import_graph.py, which places every unit. Moving a unit up or down there, to let
# an import through, has to change this list too.
DESIGN_ORDER = [
    "web",
    "ui",
    "commands",
    "study_setup",
    "analysis",
    "charts",
    "runs",
    "results",
    "grading",
    "ingest",
    "exam",
    "grounding",
    "study",
    "llm",
    "core",
    "models",
]
# Known, being removed on other branches; the integrator deletes each line once merged.
ALLOWED_BACK_EDGES: set[tuple[str, str]] = set()
ALLOWED_CYCLES: list[list[str]] = []


@cache
def _graph() -> Any:  # import_graph.Graph (the script is loaded from its file)
    return import_graph.build()


def test_the_layers_follow_design_order_and_place_every_unit() -> None:
    rank = _graph().rank
    assert [rank[unit] for unit in DESIGN_ORDER] == sorted(rank[unit] for unit in DESIGN_ORDER)
    assert len({rank[unit] for unit in DESIGN_ORDER}) == len(DESIGN_ORDER)  # no two share one
    assert _graph().unplaced() == []


def test_no_unit_imports_a_higher_layer() -> None:
    back = set(_graph().back_edges())
    assert sorted(back - ALLOWED_BACK_EDGES) == []


def test_no_modules_import_each_other_round() -> None:
    cycles = _graph().cycles()
    assert [c for c in cycles if c not in ALLOWED_CYCLES] == []


def test_every_allowed_exception_is_still_needed() -> None:
    """Once a branch removes one, its line here must go too (so no exception outlives it)."""
    graph = _graph()
    assert set(graph.back_edges()) >= ALLOWED_BACK_EDGES, "delete the fixed back-edge"
    assert all(c in graph.cycles() for c in ALLOWED_CYCLES), "delete the fixed cycle"


def test_the_graph_sees_no_streamlit_below_the_ui_and_a_pure_scoring() -> None:
    graph = _graph()
    assert graph.below_ui_importing_streamlit() == []
    assert graph.scoring_importing_the_app() == []


def test_the_app_uses_the_public_face_of_scoring() -> None:
    """``from scoring import X`` / ``from scoring.io import X``, X in its ``__all__``: scoring
    may then move its insides without touching the app."""
    assert _graph().past_the_scoring_face() == []


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_the_graph_check_can_fail(tmp_path: Path) -> None:
    """A tiny tree with one of each fault: each is reported, and nothing else is."""
    _write(
        tmp_path,
        {
            "reader_app/__init__.py": "",
            "reader_app/ui/__init__.py": "",
            "reader_app/ui/page.py": "import streamlit as st\nfrom reader_app.high import b\n",
            "reader_app/high/__init__.py": "",
            # b -> a is the right way down; a -> b (inside a function) runs back up
            "reader_app/high/b.py": "from reader_app.low import a\n",
            "reader_app/high/c.py": "from . import d\n",
            "reader_app/high/d.py": "def f():\n    from reader_app.high.c import g\n",
            "reader_app/low/__init__.py": "",
            "reader_app/low/a.py": "def f():\n    from ..high import b\n",
            "reader_app/low/e.py": "import streamlit\n",
            # an import for annotations only makes no circle (but still counts as an edge)
            "reader_app/low/t.py": "from typing import TYPE_CHECKING\n"
            "if TYPE_CHECKING:\n    from reader_app.low.u import U\n",
            "reader_app/low/u.py": "from reader_app.low import t\n",
            "reader_app/floor.py": "",
            "scoring/__init__.py": "from reader_app.low import a\n__all__ = ['Box']\n",
            "scoring/regions.py": "Box = 1\nhidden = 2\n",
            "reader_app/low/s.py": "from scoring import Box, hidden\n"
            "from scoring.regions import Box\n",
        },
    )
    layers = (("ui",), ("high",), ("low", "floor", ""))
    graph = import_graph.build(tmp_path, ("reader_app", "scoring"), layers)
    assert graph.back_edges() == [("reader_app.low.a", "reader_app.high.b")]
    assert graph.cycles() == [
        ["reader_app.high.b", "reader_app.low.a"],
        ["reader_app.high.c", "reader_app.high.d"],
    ]
    assert graph.below_ui_importing_streamlit() == [("reader_app.low.e", "streamlit")]
    assert ("scoring", "reader_app.low.a") in graph.scoring_importing_the_app()
    assert graph.past_the_scoring_face() == [
        ("reader_app.low.s", "scoring.hidden"),
        ("reader_app.low.s", "scoring.regions.Box"),
    ]
    assert graph.unplaced() == []
    t = "reader_app.low.t"
    assert graph.imports[t] - graph.runtime[t] == {"reader_app.low.u"}
    text, problems = import_graph.report(graph)
    assert problems == 1 + 2 + 1 + 2 + len(graph.scoring_importing_the_app())
    assert "reader_app.low.a -> reader_app.high.b" in text

    unplaced = import_graph.build(tmp_path, ("reader_app",), (("ui",), ("high",), ("",)))
    assert unplaced.unplaced() == ["floor", "low"]


def test_the_command_prints_the_graph_and_says_whether_it_is_clean() -> None:
    out = subprocess.run(
        [sys.executable, "scripts/import_graph.py", "--edges"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    text, problems = import_graph.report(_graph(), show_edges=True)
    assert out.stdout.strip() == text
    assert out.returncode == (1 if problems else 0)
    assert "  analysis -> charts (" in out.stdout
