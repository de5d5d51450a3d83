"""The audit for people: a row per (audit, arm), the chart's frame, the human readers'
G and GA beside it. Shared by the analyst page, the static report and the export."""

from __future__ import annotations

import math
from typing import Any, Final

import pandas as pd
from sqlmodel import Session

from reader_app.grounding_audit.figures import audit_figures, audited_case_ids, audits
from reader_app.results import tidy_responses
from scoring import AUDIT_ARMS as ARMS
from scoring import AuditParams, ScoringParams, grounding_report

HUMAN_SERIES: Final = ("human readers' G", "human readers' GA")
TABLE_COLUMNS: Final = (
    "audit",
    "model",
    "arm",
    "run",
    "n",
    "correct",
    "accuracy",
    "accuracy_ci_low",
    "accuracy_ci_high",
    "keep",
    "keep_n",
    "occlusion_effect",
    "occlusion_effect_ci_low",
    "occlusion_effect_ci_high",
    "stability",
    "text_gap",
    "category",
    "fill",
    "intervention_seed",
)


def audit_params(params: ScoringParams) -> AuditParams:
    """The audit's bootstrap follows the study's scoring parameters."""
    return AuditParams(n_boot=params.n_boot, seed=params.seed)


def study_audits(
    *, session: Session, study_id: int, params: AuditParams | None = None
) -> list[dict[str, Any]]:
    """Every complete audit of the study, as ``audit_figures`` reports it."""
    return [
        audit_figures(session=session, study_id=study_id, audit=a, params=params)
        for a in audits(session=session, study_id=study_id)
        if a.complete
    ]


def human_grounding(*, session: Session, study_id: int) -> dict[str, float]:
    """The human pool's G and GA on the audited cases (NaN without readers)."""
    cases = sorted(audited_case_ids(session=session, study_id=study_id).values())
    frame = tidy_responses(session=session, study_id=study_id, with_grounding=True)
    humans = frame[(frame["kind"] == "human") & frame["case_id"].isin(cases)]
    if not len(humans) or not cases or (humans["correct"].isna().any() and _pending(humans)):
        return {"grounding_rate": math.nan, "grounded_accuracy": math.nan}
    pool = grounding_report(humans, cases, ScoringParams(n_boot=0), case_ids=cases)["human_pool"]
    return {
        "grounding_rate": pool["grounding_rate"],
        "grounded_accuracy": pool["grounded_accuracy"],
    }


def _pending(frame: pd.DataFrame) -> bool:
    return bool(((frame["status"] == "answered") & frame["correct"].isna()).any())


def audit_table(reports: list[dict[str, Any]]) -> pd.DataFrame:
    """One row per (audit, arm): the five arms side by side, the audit's figures repeated."""
    rows = []
    for r in reports:
        for arm in ARMS:
            a, keep = r["arms"][arm], r["keep"].get(arm, {})
            rows.append(
                {
                    "audit": r["name"],
                    "model": r["model"],
                    "arm": arm,
                    "run": r["runs"].get(arm),
                    "n": a["n"],
                    "correct": a["correct"],
                    "accuracy": a["accuracy"],
                    "accuracy_ci_low": a["ci"][0],
                    "accuracy_ci_high": a["ci"][1],
                    "keep": keep.get("value"),
                    "keep_n": keep.get("n"),
                    "occlusion_effect": r["occlusion_effect"]["value"],
                    "occlusion_effect_ci_low": r["occlusion_effect"]["ci"][0],
                    "occlusion_effect_ci_high": r["occlusion_effect"]["ci"][1],
                    "stability": r["stability"]["value"],
                    "text_gap": r["text_gap"]["value"],
                    "category": r["category"],
                    "fill": r["params"].get("fill"),
                    "intervention_seed": r["params"].get("seed"),
                }
            )
    return pd.DataFrame(rows, columns=list(TABLE_COLUMNS))


def summary_table(reports: list[dict[str, Any]]) -> pd.DataFrame:
    """Per audit: accuracy in each arm, the effect [CI], stability, text gap, category."""

    def num(v: float | None) -> str:
        return "n/a" if v is None or math.isnan(v) else f"{v:.2f}"

    rows = []
    for r in reports:
        e = r["occlusion_effect"]
        rows.append(
            {
                "audit": r["name"],
                "model": r["model"],
                **{arm: f"{r['arms'][arm]['correct']}/{r['arms'][arm]['n']}" for arm in ARMS},
                "occlusion effect [95% CI]": f"{num(e['value'])} [{num(e['ci'][0])}, "
                f"{num(e['ci'][1])}]",
                "stability": num(r["stability"]["value"]),
                "text gap": num(r["text_gap"]["value"]),
                "category": r["category"],
            }
        )
    return pd.DataFrame(rows)


def chart_frame(reports: list[dict[str, Any]], human: dict[str, float]) -> pd.DataFrame:
    """name, series (an arm, or the human readers' G / GA), value, ci_low, ci_high."""
    rows = [
        {
            "name": r["name"],
            "series": arm,
            "value": r["arms"][arm]["accuracy"],
            "ci_low": r["arms"][arm]["ci"][0],
            "ci_high": r["arms"][arm]["ci"][1],
        }
        for r in reports
        for arm in ARMS
    ]
    for series, key in zip(HUMAN_SERIES, ("grounding_rate", "grounded_accuracy"), strict=True):
        if not math.isnan(human.get(key, math.nan)):
            rows.append(
                {
                    "name": "human readers",
                    "series": series,
                    "value": human[key],
                    "ci_low": None,
                    "ci_high": None,
                }
            )
    return pd.DataFrame(rows, columns=["name", "series", "value", "ci_low", "ci_high"])


def audit_caption(human: dict[str, float]) -> str:
    """What the audit section says before its table (plain text, the caller escapes)."""
    g, ga = human.get("grounding_rate", math.nan), human.get("grounded_accuracy", math.nan)
    readers = (
        "no graded human reader on these cases yet"
        if math.isnan(g)
        else f"human readers' G {g:.2f}, GA {ga:.2f}"
    )
    return (
        "Each audited model answered the cases with a reference region five times: the "
        "stored images, the region occluded, another region of its size occluded, a "
        "same-diagnosis case's images, and no image (SCORING.md section 9). Occlusion effect "
        "= keep(occlude_irrelevant) - keep(occlude_relevant) over the cases right in "
        f"original; 95% paired case-bootstrap CI. {readers}."
    )
