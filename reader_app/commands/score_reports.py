"""``readerstudy score REPORTS.csv``: the rubric summary of SCORING.md section 6.

A file with a ``rubric`` column and no ``diagnosis`` column holds report rows
(``export --what reports``, or any file with responder, kind, case_id and
rubric). As Bench 2 counts (``scoring.count_unjudged``): every responder over
every case of the file, a report that is "I don't know", failed or invalid
(its ``status``) or missing counted 0 (Fail); a blank score on an answered
report is one still waiting for its score, left out and said so. Per responder
and for the human pool, best first: reports, total of the ceiling, percent of
the ceiling and mean with paired case-bootstrap 95% CIs, SD, median, range and
the count per tier; the judged reports alone as labelled secondary figures;
then each model against the pool. The figures are ``scoring.rubric_scores``'s,
shown as the leaderboard's Reports tab shows them.
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

from reader_app.analysis.report_scores import (
    ReportBoard,
    board_of,
    display_comparisons,
    display_reports,
)
from scoring import FrameError, count_unjudged

NEEDED = ("responder", "kind", "case_id", "rubric")


def is_report_file(columns: list[str]) -> bool:
    return "rubric" in columns and "diagnosis" not in columns


def graded_rows(frame: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """Every responder over every case of the file, scored 0-40 (unjudgeable and missing
    reports 0, ``count_unjudged``), and how many answered reports have no score yet."""
    missing = [c for c in NEEDED if c not in frame.columns]
    if missing:
        raise FrameError(f"report rows need the columns {', '.join(missing)}")
    blank = frame["rubric"].astype(str).str.strip() == ""
    graded = frame[~blank].copy()
    scores = pd.to_numeric(graded["rubric"], errors="coerce")
    bad = graded.index[scores.isna() | (scores % 1 != 0) | (scores < 0) | (scores > 40)]
    if len(bad):
        lines = ", ".join(str(int(i) + 2) for i in bad[:20])  # + header, 1-based
        raise FrameError(f"rubric scores must be whole numbers 0..40; bad line(s) {lines}")
    data = frame.copy()
    data["rubric"] = pd.to_numeric(data["rubric"], errors="coerce").where(~blank)
    if "group" not in data.columns:
        data["group"] = ""
    columns = ["responder", "kind", "group", "case_id", "rubric"]
    columns += ["status"] if "status" in data.columns else []
    return count_unjudged(data[columns])


def rubric_report(frame: pd.DataFrame, *, n_boot: int, seed: int, pending: int = 0) -> ReportBoard:
    if n_boot < 1:
        raise ValueError("the rubric summary's CIs need --bootstrap 1 or more")
    return board_of(frame, n_boot=n_boot, seed=seed, pending=pending)


def rubric_json(board: ReportBoard, *, n_boot: int, seed: int, ungraded: int) -> str:
    def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
        return json.loads(frame.to_json(orient="records"))  # type: ignore[no-any-return]

    return json.dumps(
        {
            "scoring": "rubric (SCORING.md section 6)",
            "n_boot": n_boot,
            "seed": seed,
            "counting": "every case of the file; I don't know, failed and missing reports "
            "count 0 (Fail); judged_* columns: the judged reports alone",
            "ungraded_rows_left_out": ungraded,
            "responders": records(board.scores.responders),
            "comparisons": records(board.scores.comparisons),
        },
        indent=2,
        ensure_ascii=False,
    )


def rubric_table(board: ReportBoard, *, n_boot: int, ungraded: int) -> str:
    parts = [
        f"Report rubric (0-40 per report; 95% paired case-bootstrap CIs, B = {n_boot}); "
        "every case counted, I don't know, failed and missing reports 0 (Fail)",
        display_reports(board).to_string(index=False),
    ]
    comparisons = display_comparisons(board)
    if len(comparisons):
        parts += ["", "Each model minus the human pool", comparisons.to_string(index=False)]
    if ungraded:
        parts += ["", f"{ungraded} answered report(s) still waiting for a score were left out"]
    return "\n".join(parts)
