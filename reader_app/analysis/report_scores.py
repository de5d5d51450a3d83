"""The Reports leaderboard: rubric scores (0-40) per responder, human pool vs each model.

From the study's rubric grades (``grading.rubric_grades.report_score_frame``: a
human grade, else the judges' score, over every report case, "I don't know",
failed and missing reports counted 0 as Bench 2 counts them) through
``scoring.rubric_scores``. Used by the leaderboard's Reports tab, the static
report and the exports. The judged reports alone are a labelled secondary figure.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Final

import numpy as np
import pandas as pd
from sqlmodel import Session, col, select

from reader_app.analysis.mrmc import MRMC_COLUMNS, modality_of
from reader_app.grading.rubric_grades import fabrication_frame, report_score_frame, rubric_tier
from reader_app.models import Response, RubricGrade, RubricJudgement, Study
from scoring import (
    TIERS,
    RubricScores,
    fabrication_rates,
    icc_2_1,
    rubric_scores,
    score_histogram,
    tier_kappa,
)

TIER_NAMES: Final = tuple(name for name, _, _ in TIERS)  # best first
REPORT_EXPORT_COLUMNS: Final = (
    "responder",
    "kind",
    "group",
    "case_id",
    "rubric",
    "tier",
    "counted_as",
)


@dataclass(frozen=True)
class ReportBoard:
    frame: pd.DataFrame  # responder, kind, group, case_id, rubric[, counted_as]
    scores: RubricScores
    pending: int = 0  # reports still waiting for a score, left out

    @property
    def empty(self) -> bool:
        return self.frame.empty


def board_of(frame: pd.DataFrame, *, n_boot: int, seed: int, pending: int = 0) -> ReportBoard:
    """The board of a report frame (``report_score_frame`` or a file's rows)."""
    return ReportBoard(
        frame, rubric_scores(frame, n_boot=n_boot, seed=seed, n_perm=n_boot), pending
    )


def report_board(
    *, session: Session, study: Study, n_boot: int = 2000, seed: int = 0
) -> ReportBoard:
    assert study.id is not None
    frame, pending = report_score_frame(session=session, study_id=study.id)
    return board_of(frame, n_boot=n_boot, seed=seed, pending=pending)


def report_fabrication_rates(*, session: Session, study: Study) -> pd.DataFrame:
    """Per responder: judged reports, how many a judge found fabricating, and the rate
    (``scoring.fabrication.fabrication_rates`` of ``grading.rubric_grades.fabrication_frame``)."""
    assert study.id is not None
    return fabrication_rates(fabrication_frame(session=session, study_id=study.id))


def _fmt(value: object, digits: int = 1) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{float(value):.{digits}f}"  # type: ignore[arg-type]


JUDGED_ONLY: Final = "Judged reports only: mean, % of ceiling"
COUNTED_FAIL: Final = "Counted 0 (IDK, failed, missing)"


def display_reports(board: ReportBoard) -> pd.DataFrame:
    """One row per responder and the pool, best first: total of the ceiling, mean [CI],
    % of ceiling [CI], SD, median, tiers (every report case counted, Bench 2's way);
    then, labelled, how many counted 0 and the judged reports alone."""
    rows = []
    for r in board.scores.responders.to_dict("records"):
        judged = {}
        if "n_judged" in r:
            judged = {
                COUNTED_FAIL: _fmt(r["n_counted_fail"], 0),
                JUDGED_ONLY: f"{_fmt(r['judged_mean'])}, {_fmt(r['judged_percent_of_ceiling'])}% "
                f"of {_fmt(r['judged_ceiling'], 0)} ({_fmt(r['n_judged'], 0)} judged)",
            }
        rows.append(
            {
                "Responder": r["responder"],
                "Kind": r["kind"],
                "Reports": int(r["n_cases"]),
                "Total": _fmt(r["total"], 0) + f" / {int(r['ceiling'])}",
                "Mean (0-40)": f"{_fmt(r['mean'])} [{_fmt(r['mean_ci_low'])}, "
                f"{_fmt(r['mean_ci_high'])}]",
                "% of ceiling": f"{_fmt(r['percent_of_ceiling'])} [{_fmt(r['percent_ci_low'])}, "
                f"{_fmt(r['percent_ci_high'])}]",
                "SD": _fmt(r["sd"]),
                "Median": _fmt(r["median"]),
                "Range": f"{_fmt(r['min'], 0)}-{_fmt(r['max'], 0)}",
                **{name.capitalize(): int(r[f"n_{name}"]) for name in TIER_NAMES},
                **judged,
            }
        )
    return pd.DataFrame(rows)


def display_comparisons(board: ReportBoard) -> pd.DataFrame:
    rows = []
    for c in board.scores.comparisons.to_dict("records"):
        rows.append(
            {
                "Model": c["model"],
                "Paired reports": int(c["n_cases"]),
                "Model mean": _fmt(c["model_mean"]),
                "Pool mean": _fmt(c["pool_mean"]),
                "Model - pool [95% CI]": f"{_fmt(c['diff'])} [{_fmt(c['diff_ci_low'])}, "
                f"{_fmt(c['diff_ci_high'])}]",
                "p (sign-flip)": _fmt(c["p_value"], 4),
            }
        )
    return pd.DataFrame(rows)


def tier_counts(board: ReportBoard) -> pd.DataFrame:
    """Long frame for the tier-distribution chart: name, kind, tier, count, share."""
    rows = []
    for r in board.scores.responders.to_dict("records"):
        n = int(r["n_cases"]) or 1
        for name in TIER_NAMES:
            count = int(r[f"n_{name}"])
            rows.append(
                {
                    "name": r["responder"],
                    "kind": r["kind"],
                    "tier": name.capitalize(),
                    "count": count,
                    "share": count / n,
                }
            )
    return pd.DataFrame(rows, columns=["name", "kind", "tier", "count", "share"])


def report_export(frame: pd.DataFrame) -> pd.DataFrame:
    """The rubric scores as rows, one per report case and responder, with the tier and
    ``counted_as`` (judged, or idk / failure / invalid / missing: counted 0)."""
    out = frame.copy()
    out["tier"] = [rubric_tier(int(s)) for s in out["rubric"]] if len(out) else []
    if "counted_as" not in out.columns:
        out["counted_as"] = "judged"
    return out[list(REPORT_EXPORT_COLUMNS)].reset_index(drop=True)


def rubric_mrmc_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """Report rows in the MRMC long format: the 0-40 score is the rating (``task`` report)."""
    out = pd.DataFrame(
        {
            "reader": frame["responder"],
            "case": frame["case_id"],
            "modality": [
                modality_of(k, r) for k, r in zip(frame["kind"], frame["responder"], strict=True)
            ],
            "score": frame["rubric"].astype(int),
            "truth": np.ones(len(frame), dtype=int),
            "kind": frame["kind"],
            "group": frame["group"],
            "status": "report",
            "likert": pd.array([pd.NA] * len(frame), dtype="Int64"),
            "points": np.full(len(frame), np.nan),
            "task": "report",
        }
    )
    return out[list(MRMC_COLUMNS)]


def histogram_frame(board: ReportBoard) -> pd.DataFrame:
    """Per responder, the count of reports at each score 0..40 (``score_histogram``)."""
    return score_histogram(board.frame)


AGREEMENT_COLUMNS: Final = (
    "Graders",
    "Reports both scored",
    "ICC(2,1)",
    "Weighted kappa (tiers)",
    "Mean |difference|",
)


def grader_agreement(*, session: Session, study_id: int) -> pd.DataFrame:
    """Judge with judge (every active judgement with both scores) and each judge with the
    adjudicator (the reports an adjudicator graded that the judge had scored): ICC(2,1) on
    the 0-40 scores, quadratic-weighted kappa on the tiers, mean absolute difference."""
    judgements = session.exec(
        select(RubricJudgement)
        .join(Response, col(Response.id) == RubricJudgement.response_id)
        .where(Response.study_id == study_id, col(RubricJudgement.active).is_(True))
    ).all()
    grades = {
        rid: int(score)
        for rid, score in session.exec(
            select(RubricGrade.response_id, RubricGrade.score)
            .join(Response, col(Response.id) == RubricGrade.response_id)
            .where(Response.study_id == study_id, col(RubricGrade.active).is_(True))
        ).all()
    }
    pairs: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for j in judgements:
        labels = j.judges.split("+") if j.judges else []
        scores = json.loads(j.scores_json or "[]")
        named = [(lab, int(s)) for lab, s in zip(labels, scores, strict=False) if s is not None]
        for i in range(len(named)):
            for k in range(i + 1, len(named)):
                key = (named[i][0], named[k][0])
                pairs.setdefault(key, []).append((named[i][1], named[k][1]))
        human = grades.get(j.response_id)
        if human is not None:
            for label, score in named:
                pairs.setdefault((label, "adjudicator"), []).append((score, human))
    rows = []
    for (one, other), values_ in sorted(pairs.items()):
        first = [x for x, _ in values_]
        second = [y for _, y in values_]
        rows.append(
            {
                "Graders": f"{one} vs {other}",
                "Reports both scored": len(values_),
                "ICC(2,1)": _fmt(icc_2_1(np.array(values_, dtype=float)), 2),
                "Weighted kappa (tiers)": _fmt(tier_kappa(first, second), 2),
                "Mean |difference|": _fmt(float(np.mean(np.abs(np.subtract(first, second)))), 1),
            }
        )
    return pd.DataFrame(rows, columns=list(AGREEMENT_COLUMNS))
