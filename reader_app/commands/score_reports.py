"""``readerstudy score REPORTS.csv``: the rubric summary of SCORING.md section 6.

A file with a ``rubric`` column and no ``diagnosis`` column holds report rows
(``export --what reports``, or any file with responder, kind, case_id and
rubric). Per responder and for the human pool: reports, total of the ceiling,
percent of the ceiling and mean with paired case-bootstrap 95% CIs, SD, median,
range and the count per tier; then each model against the pool. The figures
are ``scoring.rubric_scores``'s, shown as the leaderboard's Reports tab shows them.
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

from reader_app.analysis.report_scores import ReportBoard, display_comparisons, display_reports
from scoring import FrameError, rubric_scores

NEEDED = ("responder", "kind", "case_id", "rubric")


def is_report_file(columns: list[str]) -> bool:
    return "rubric" in columns and "diagnosis" not in columns


def graded_rows(frame: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """The rows with a 0-40 score (as integers) and how many had none yet."""
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
    graded["rubric"] = scores.astype(int)
    if "group" not in graded.columns:
        graded["group"] = ""
    return graded[["responder", "kind", "group", "case_id", "rubric"]], int(blank.sum())


def rubric_report(frame: pd.DataFrame, *, n_boot: int, seed: int) -> ReportBoard:
    if n_boot < 1:
        raise ValueError("the rubric summary's CIs need --bootstrap 1 or more")
    return ReportBoard(frame, rubric_scores(frame, n_boot=n_boot, seed=seed, n_perm=n_boot))


def rubric_json(board: ReportBoard, *, n_boot: int, seed: int, ungraded: int) -> str:
    def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
        return json.loads(frame.to_json(orient="records"))  # type: ignore[no-any-return]

    return json.dumps(
        {
            "scoring": "rubric (SCORING.md section 6)",
            "n_boot": n_boot,
            "seed": seed,
            "ungraded_rows_left_out": ungraded,
            "responders": records(board.scores.responders),
            "comparisons": records(board.scores.comparisons),
        },
        indent=2,
        ensure_ascii=False,
    )


def rubric_table(board: ReportBoard, *, n_boot: int, ungraded: int) -> str:
    parts = [
        f"Report rubric (0-40 per report; 95% paired case-bootstrap CIs, B = {n_boot})",
        display_reports(board).to_string(index=False),
    ]
    comparisons = display_comparisons(board)
    if len(comparisons):
        parts += ["", "Each model minus the human pool", comparisons.to_string(index=False)]
    if ungraded:
        parts += ["", f"{ungraded} report row(s) without a score yet were left out"]
    return "\n".join(parts)
