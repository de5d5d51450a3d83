"""`scoring` is pure: importing it pulls in no app code and no UI/DB/DICOM library."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FORBIDDEN = ("streamlit", "sqlmodel", "sqlalchemy", "pydicom", "reader_app")


def test_fresh_interpreter_imports_nothing_forbidden() -> None:
    code = (
        "import json, sys\n"
        "import scoring, scoring.io\n"
        "from scoring.io import read_radle_csv, parse_model_output\n"
        "bad = sorted({m.split('.')[0] for m in sys.modules} & set(json.loads(sys.argv[1])))\n"
        "print(json.dumps(bad))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, json.dumps(FORBIDDEN)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(out.stdout) == []
