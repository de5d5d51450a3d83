"""The analysts' view of the AI-aided arm (SCORING.md section 10): one call of
``scoring.score_with_aid`` on a study's data, as tables for the AI aid page."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import pandas as pd

from reader_app.analysis.data import StudyData
from scoring import ScoringParams, score_with_aid, switch_table

FIGURES: Final = (
    ("responder", "Reader"),
    ("group", "Group"),
    ("n_aided_cases", "Aided cases"),
    ("harmful_switch_rate", "Harmful switch rate"),
    ("helpful_switch_rate", "Helpful switch rate"),
    ("net_benefit", "Net benefit"),
    ("mean_likert_change", "Likert change"),
    ("radle_a_diff", "Δ RadLE-A (aided − unaided)"),
    ("radle_a_diff_ci_low", "Δ A CI low"),
    ("radle_a_diff_ci_high", "Δ A CI high"),
    ("radle_c_diff", "Δ RadLE-C (aided − unaided)"),
    ("radle_c_diff_ci_low", "Δ C CI low"),
    ("radle_c_diff_ci_high", "Δ C CI high"),
)
BY_CONFIDENCE: Final = (
    "model_confidence",
    "harmful_switch_rate",
    "helpful_switch_rate",
    "n_harmful_at_risk",
    "n_helpful_at_risk",
)


@dataclass(frozen=True)
class AidFigures:
    readers: pd.DataFrame  # one row per reader, then the pool (responder "Human pool")
    by_confidence: pd.DataFrame  # the pool's switch rates by the model's confidence
    by_group: pd.DataFrame  # the pool's figures per reader group
    switches: pd.DataFrame  # scoring.switch_table: one row per (reader, aided case)
    comparison: pd.DataFrame  # the pool's aided minus unaided, bootstrap and MRMC, per metric


METRIC_NAMES: Final = {"radle_a": "RadLE-A", "radle_c": "RadLE-C"}


def comparison_table(pool: dict[str, Any]) -> pd.DataFrame:
    """The pool's aided minus unaided per metric: the pools' difference with the paired
    case bootstrap's CI, and the readers-and-cases-random estimate (scoring.aid.arm_mrmc)."""
    rows = [
        {
            "Metric": name,
            "Aided − unaided": pool[f"{m}_diff"],
            "Bootstrap CI low": pool.get(f"{m}_diff_ci_low"),
            "Bootstrap CI high": pool.get(f"{m}_diff_ci_high"),
            "MRMC difference": pool[f"{m}_diff_mrmc"],
            "MRMC SE": pool[f"{m}_diff_mrmc_se"],
            "MRMC CI low": pool[f"{m}_diff_mrmc_ci_low"],
            "MRMC CI high": pool[f"{m}_diff_mrmc_ci_high"],
            "MRMC p": pool[f"{m}_diff_mrmc_p"],
            "Readers": pool["mrmc_readers"],
            "Cases": pool["mrmc_cases"],
        }
        for m, name in METRIC_NAMES.items()
    ]
    return pd.DataFrame(rows)


def _table(rows: Sequence[dict[str, Any]]) -> pd.DataFrame:
    frame = pd.DataFrame([{k: r.get(k) for k, _ in FIGURES} for r in rows])
    frame["responder"] = frame["responder"].replace({"human_pool": "Human pool"})
    return frame.rename(columns=dict(FIGURES))


def aid_figures(data: StudyData, cases: Sequence[str], params: ScoringParams) -> AidFigures | None:
    """The aided arm's figures over ``cases``; None for a study without aided rows.
    Raises scoring's FrameError (UngradedRowsError) as the leaderboard does."""
    if data.aided_frame is None or len(data.aided_frame) == 0:
        return None
    report = score_with_aid(data.with_aided, params, case_ids=list(cases))
    entries = report["aid"]
    pool = entries[-1]
    by_confidence = pd.DataFrame(
        [{k: b[k] for k in BY_CONFIDENCE} for b in pool["by_confidence"]],
        columns=list(BY_CONFIDENCE),
    )
    return AidFigures(
        readers=_table(entries),
        by_confidence=by_confidence,
        by_group=_table(pool["by_group"]) if pool["by_group"] else pd.DataFrame(),
        switches=switch_table(data.with_aided, case_ids=list(cases)),
        comparison=comparison_table(pool),
    )
