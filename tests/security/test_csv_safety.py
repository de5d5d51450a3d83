"""Issue 14 finding 9: every CSV a person opens is defused; scripts get exact text on request.

A diagnosis like ``=HYPERLINK("http://...","click")`` left as a live formula in
``readerstudy export`` and the Exports page, the answer key CSV and the
Progress CSV. These tests build those CSVs from a real database (SQLite and
PostgreSQL) and read them back as a spreadsheet would see the cells.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import pandas as pd
from hypothesis import given
from hypothesis import strategies as st
from sqlmodel import Session

from reader_app.analysis.coordinator import reader_progress
from reader_app.core.csv_safe import (
    FORMULA_START,
    spreadsheet_csv,
    spreadsheet_safe,
    spreadsheet_unsafe,
)
from reader_app.core.settings import PROJECT_ROOT, Settings
from reader_app.grading.key import by_source_id, parse_key_csv, study_key, write_key_csv
from tests.factories import make_reader, make_study

LINK = '=HYPERLINK("http://example.invalid/x","click")'
HOSTILE = [LINK, "+1+cmd /C calc!A0", "-2+3", "@SUM(A1)", "\tTAB", "\rCR", "plain"]


def cells(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def live_formulas(text: str) -> list[str]:
    return [c for row in cells(text)[1:] for c in row if c.startswith(FORMULA_START)]


def test_answer_key_csv_is_defused_and_reads_back_exactly(
    session: Session, settings: Settings
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=len(HOSTILE), diagnoses=HOSTILE)
    assert study.id is not None
    entries = list(by_source_id(study_key(session=session, study_id=study.id)).values())
    out = io.StringIO()
    write_key_csv(entries, out)
    assert live_formulas(out.getvalue()) == []
    assert sorted(row[1] for row in cells(out.getvalue())[1:]) == sorted(
        "'" + d if d != "plain" else d for d in HOSTILE
    )
    # uploaded again (the key editor's round trip), the key is exactly what it was
    again = parse_key_csv(out.getvalue())  # (the key trims outer whitespace, tab and CR too)
    assert sorted(e.diagnosis for e in again.values()) == sorted(d.strip() for d in HOSTILE)
    raw = io.StringIO()
    write_key_csv(entries, raw, raw=True)
    assert sorted(row[1] for row in cells(raw.getvalue())[1:]) == sorted(HOSTILE)


def test_progress_csv_is_defused(session: Session, settings: Settings) -> None:
    study = make_study(session, settings.asset_dir, n_cases=2)
    make_reader(session, study, code="=cmd|' /C calc'!A0", group="@SUM(1)")
    coordinator = make_reader(session, study, code="C01", role="coordinator").reader
    frame = reader_progress(session=session, actor=coordinator)
    text = spreadsheet_csv(frame)
    assert live_formulas(text) == []
    back = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    assert "'=cmd|' /C calc'!A0" in set(back["reader"]) and "'@SUM(1)" in set(back["group"])
    assert set(back["answered"]) == {"0"}  # numbers stay numbers


def test_negative_numbers_stay_numbers() -> None:
    frame = pd.DataFrame({"delta": [-1.5, 2.0], "name": ["-x", "y"]})
    assert spreadsheet_csv(frame) == "delta,name\r\n-1.5,'-x\r\n2.0,y\r\n"
    assert spreadsheet_csv(frame, raw=True) == "delta,name\n-1.5,-x\n2.0,y\n"


@given(st.text())
def test_defusing_round_trips(text: str) -> None:
    safe = spreadsheet_safe(text)
    assert safe is not None and not safe.startswith(FORMULA_START)
    assert spreadsheet_unsafe(safe) == text or text.startswith("'")


def test_every_csv_download_goes_through_the_csv_safety_layer() -> None:
    """No page, component or export builds a CSV with a bare ``to_csv``/``csv.writer``."""
    offenders = []
    folders = ["reader_app/ui", "reader_app/analysis", "reader_app/grading", "reader_app/commands"]
    allowed = {  # exact on purpose: scripts' outputs, or not a file a person opens
        "reader_app/analysis/data.py",  # a cache digest of the frame, never written out
        "reader_app/commands/grade.py",  # `readerstudy grade` output, read by `score`
        "reader_app/commands/score.py",  # `readerstudy score --format csv`: numbers
    }
    for folder in folders:
        for path in sorted((PROJECT_ROOT / folder).rglob("*.py")):
            rel = path.relative_to(PROJECT_ROOT).as_posix()
            source = path.read_text(encoding="utf-8")
            if rel in allowed:
                continue
            for line in source.splitlines():
                if re.search(r"\.to_csv\(|csv\.writer\(", line) and "safe" not in source:
                    offenders.append(f"{rel}: {line.strip()}")
    assert offenders == []
    assert Path(PROJECT_ROOT / "reader_app/core/csv_safe.py").is_file()
