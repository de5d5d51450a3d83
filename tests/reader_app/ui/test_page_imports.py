"""What the served pages import: no DICOM decoding, migration, Parquet or Altair code.

pydicom (with GDCM and its codecs, ~31 MiB resident), Alembic (with Mako and
Pygments, ~12 MiB) and pyarrow.parquet (~9 MiB) are loaded by the few places
that need them (import, migrate, a Parquet export); an import at the top of a
module every page reaches put them on every page. Altair (~26 MiB) is loaded
by none: the charts are Vega-Lite dicts (reader_app/charts/vl.py). The analyst's
pages also leave out the judges' HTTP client (httpx, stamina) and the answer
matcher (rapidfuzz), which only grading needs (docs/performance.md, Analyst
memory). Each check runs in a fresh interpreter, importing what a page's
script imports, as Streamlit does on its first run.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from benchmarks.kit.imports import script_imports
from reader_app.ui.navigation import PAGES_DIR, ROLE_PAGES

APP = PAGES_DIR.parent.parent / "main.py"
HEAVY = ("pydicom", "alembic", "pyarrow.parquet", "altair")
IMPORTING = {"study_setup.py": ("pydicom",)}  # builds studies from DICOM: needs it
GRADING = ("httpx", "stamina", "rapidfuzz")  # the judges' client, the answer matcher


def loaded_after(scripts: list[Path], heavy: tuple[str, ...] = HEAVY) -> set[str]:
    """Which of ``heavy`` a fresh interpreter holds after the scripts' imports."""
    modules = sorted({m for s in scripts for m in script_imports(s)})
    code = (
        "import importlib, json, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        f"print(json.dumps([h for h in {heavy!r} if h in sys.modules]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_pages_other_than_study_setup_load_none_of_the_heavy_modules() -> None:
    pages = [p for p in sorted(PAGES_DIR.glob("*.py")) if p.name not in IMPORTING]
    assert len(pages) > 10  # every page of the app, not an empty glob
    assert loaded_after([APP, *pages]) == set()


def test_the_check_sees_a_page_that_does_load_them() -> None:
    for name, expected in IMPORTING.items():
        assert set(expected) <= loaded_after([APP, PAGES_DIR / name])


def test_the_analyst_pages_load_no_grading_client_or_matcher() -> None:
    pages = [PAGES_DIR / p.file for p in ROLE_PAGES["analyst"]]
    assert len(pages) == 7  # with the AI aid page
    assert loaded_after([APP, *pages], GRADING) == set()
    # the adjudicator's page grades: it does load them, so the check can see them
    assert loaded_after([APP, PAGES_DIR / "adjudicate.py"], GRADING) == set(GRADING)
