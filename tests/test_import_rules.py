"""The layering rules of DESIGN.md section 2, side by side, each checked two ways.

1. ``scoring`` is pure: importing it pulls in no app code and no UI/DB/DICOM library.
2. Nothing below ``reader_app/`` outside ``reader_app/ui``, ``reader_app/main.py`` and
   ``reader_app/asgi.py``
   imports ``streamlit`` or ``reader_app.ui``.

Each rule is checked statically (every ``import`` in the source, including the
ones inside functions, followed through the package: the transitive closure) and
by importing the modules in a fresh interpreter and reading ``sys.modules``
(which also catches a third-party library that drags the forbidden one in).
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
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
    # main.py is the Streamlit script; asgi.py serves it (st.App behind the Referrer-Policy header)
    return module in ("reader_app.main", "reader_app.asgi") or module.startswith("reader_app.ui")


SERVICES = sorted(
    m for m in _modules("reader_app") if not _is_ui(m) and ".migrations.versions" not in m
)


@cache
def _direct_imports(module: str) -> frozenset[str]:
    """Every module named by an import statement anywhere in the file (relative ones resolved)."""
    path = ALL[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)  # submodules
    return frozenset(found)


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


def test_the_checks_can_fail() -> None:
    """The UI itself breaks rule 2, and the static walk says through which import."""
    chains = _violations("reader_app.main", SERVICE_FORBIDDEN)
    assert "streamlit <- reader_app.main" in chains
    assert any(c.startswith("reader_app.ui") for c in chains)
    assert _loaded_in_fresh_interpreter(["reader_app.ui.context"], ("streamlit",)) != []
