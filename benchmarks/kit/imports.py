"""What a served page's imports cost: resident memory per library, in a fresh interpreter.

Streamlit imports a page script's modules on its first run, in the server
process; ``import_costs`` replays that in a new interpreter (same Python, the
given checkout on its path) and reports how much VmRSS each group of libraries
adds, in import order, after Streamlit itself (which an idle server already
holds).
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from benchmarks.kit.servers import base_env

# (label, modules): each group's cost is what it adds after the groups before it
LIBRARY_GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("numpy", ("numpy",)),
    ("pyarrow (Streamlit's dataframe transport; its C++ libraries)", ("pyarrow",)),
    ("pandas (with pyarrow.compute)", ("pandas",)),
    ("SQLAlchemy, SQLModel, pydantic", ("sqlalchemy", "sqlmodel")),
)


def script_imports(script: Path) -> list[str]:
    """The absolute modules a script imports at its top level."""
    names: list[str] = []
    for node in ast.parse(script.read_text()).body:
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


def import_costs(scripts: Sequence[Path], root: Path) -> list[tuple[str, float]]:
    """(label, MiB) per library group, then the rest of what ``scripts`` import."""
    groups = [*LIBRARY_GROUPS, ("the app's code and its other imports", ())]
    rest = sorted({m for s in scripts for m in script_imports(s)})
    code = (
        "import importlib, json\n"
        "def rss():\n"
        "    with open('/proc/self/status') as fh:\n"
        "        return next(int(l.split()[1]) for l in fh if l.startswith('VmRSS'))\n"
        "import streamlit, streamlit.web.server.server\n"
        "out, last = [], rss()\n"
        f"for label, mods in {[(g, list(m)) for g, m in groups]!r}:\n"
        f"    for m in mods or {rest!r}: importlib.import_module(m)\n"
        "    now = rss(); out.append((label, round((now - last) / 1024, 1))); last = now\n"
        "print(json.dumps(out))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=root,
        env=base_env() | {"PYTHONPATH": str(root)},
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    return [(str(label), float(mib)) for label, mib in json.loads(done.stdout.splitlines()[-1])]
