"""The MRMC long format: one row per (reader, case, modality), for iMRMC and MRMCaov.

Spot diagnosis has no negative cases: every case has a reference diagnosis,
and an observation is a success (the reader named it) or not. So ``truth``
is 1 on every row and ``score`` is that binary success; reader-and-case-averaged
percent correct is the endpoint, and ``points`` (SCORING.md's s) gives RadLE-C.
A model run is compared with the readers as a fixed reader, its rows repeated
under every reader's id (iMRMC's ``uStat11.conditionalD``, ``kernelFlag = 1``;
MRMCaov with a metric of the rating only: its binary metrics need two truth
levels). docs/analysis.md has the R recipes, run on a real export; ``score``
computes the same figures (scoring.mrmc).

Human readers form one modality, ``human``; each model run is a modality of
its own with the run as its only reader, ``model:<run name>``. ``task`` is
``diagnosis`` here; report-mode cases give rows with ``task`` ``report`` whose
``score`` is the 0-40 rubric score, a rating
(``analysis.report_scores.rubric_mrmc_rows``), exported only when asked
(``export_frame(..., task="report" or "all")``, ``export --task``). Only rows that
exist are written (a case a reader never answered has no row); answered rows
without a verdict stop the export, as they stop scoring.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import pandas as pd

from scoring import ScoringParams, row_points, validate_frame

MRMC_COLUMNS: Final = (
    "reader",
    "case",
    "modality",
    "score",
    "truth",
    "kind",
    "group",
    "status",
    "likert",
    "points",
    "task",
)
HUMAN_MODALITY: Final = "human"


def modality_of(kind: str, responder: str) -> str:
    return HUMAN_MODALITY if kind == "human" else f"model:{responder}"


def mrmc_frame(frame: pd.DataFrame, params: ScoringParams | None = None) -> pd.DataFrame:
    """The tidy frame as MRMC long rows (raises scoring.FrameError on ungraded answers)."""
    params = params or ScoringParams()
    tidy = validate_frame(frame)
    correct = (tidy["status"] == "answered") & (tidy["correct"].fillna(0) == 1)
    out = pd.DataFrame(
        {
            "reader": tidy["responder"],
            "case": tidy["case_id"],
            "modality": [
                modality_of(k, r) for k, r in zip(tidy["kind"], tidy["responder"], strict=True)
            ],
            "score": correct.astype(int),
            "truth": np.ones(len(tidy), dtype=int),
            "kind": tidy["kind"],
            "group": tidy["group"],
            "status": tidy["status"],
            "likert": tidy["likert"].astype("Int64"),
            "points": row_points(tidy, params.idk_score, params.weight),
            "task": "diagnosis",
        }
    )
    return out.sort_values(["modality", "reader", "case"]).reset_index(drop=True)[
        list(MRMC_COLUMNS)
    ]
