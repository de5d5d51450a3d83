"""Per-case matrix: which cases the human readers get and the models miss, and the reverse.

Case difficulty comes from the pool: ``pool_accuracy`` is the share of the
pooled readers (completion >= ``min_completion``) who answered the case
correctly, each reader with a row on the case counting once (SCORING.md 4);
difficulty is ``1 - pool_accuracy``. Humans "get" a case when at least half
of the pooled readers are correct; models "get" it when at least half of the
model runs are. Cells use scoring's own status and verdict rules.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np
import pandas as pd

from reader_app.analysis.leaderboard import on_cases
from scoring import CATEGORY_NAMES, ScoringParams, build_matrix, pool_members, validate_frame

SPLITS: Final = (
    "humans get, models miss",
    "models get, humans miss",
    "both get",
    "both miss",
    "no pooled readers",
    "no model runs",
)


def outcome_of(category: str) -> str:
    """correct_l3 -> correct; wrong_l0 -> wrong; idk, invalid, failure, missing as they are."""
    return category.split("_l")[0]


@dataclass(frozen=True)
class CaseMatrix:
    cells: pd.DataFrame  # case_id, responder, kind, outcome, likert
    cases: pd.DataFrame  # one row per case, hardest first

    def split(self, name: str) -> pd.DataFrame:
        return self.cases[self.cases["split"] == name]


def _split(pool_acc: float, n_pool: int, model_acc: float, n_models: int) -> str:
    if n_pool == 0:
        return "no pooled readers"
    if n_models == 0:
        return "no model runs"
    humans, models = pool_acc >= 0.5, model_acc >= 0.5
    if humans and not models:
        return SPLITS[0]
    if models and not humans:
        return SPLITS[1]
    return "both get" if humans else "both miss"


def case_matrix(
    frame: pd.DataFrame, case_ids: tuple[str, ...], params: ScoringParams
) -> CaseMatrix:
    """The responders x cases outcome matrix and each case's difficulty and split."""
    matrix = build_matrix(validate_frame(on_cases(frame, case_ids)), list(case_ids))
    names = np.array(CATEGORY_NAMES, dtype=object)[matrix.categories]
    outcome = np.vectorize(outcome_of, otypes=[object])(names) if names.size else names
    correct = outcome == "correct"
    answered_any = outcome != "missing"
    kinds = np.array(matrix.kinds, dtype=object)
    pooled = pool_members(matrix, params.min_completion)
    models = kinds == "model"

    rows_pool = answered_any[pooled]
    n_pool = rows_pool.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        pool_acc = np.where(n_pool > 0, correct[pooled].sum(axis=0) / n_pool, np.nan)
        n_models = int(models.sum())
        model_acc = (
            correct[models].sum(axis=0) / n_models if n_models else np.full(matrix.n_cases, np.nan)
        )
    cases = pd.DataFrame(
        {
            "case_id": list(matrix.case_ids),
            "pool_accuracy": pool_acc,
            "difficulty": 1.0 - pool_acc,
            "pooled_readers": n_pool.astype(int),
            "models_correct": correct[models].sum(axis=0).astype(int),
            "model_runs": n_models,
            "split": [
                _split(a, int(n), m, n_models)
                for a, n, m in zip(pool_acc, n_pool, model_acc, strict=True)
            ],
        }
    )
    cases = cases.sort_values(
        ["difficulty", "case_id"], ascending=[False, True], na_position="last"
    ).reset_index(drop=True)
    likert = [int(n.rsplit("_l", 1)[1]) if "_l" in n else None for n in names.ravel().tolist()]
    cells = pd.DataFrame(
        {
            "case_id": np.tile(np.array(matrix.case_ids, dtype=object), len(matrix.responders)),
            "responder": np.repeat(np.array(matrix.responders, dtype=object), matrix.n_cases),
            "kind": np.repeat(kinds, matrix.n_cases),
            "outcome": outcome.ravel(),
            "likert": pd.array(likert, dtype="Int64"),
        }
    )
    order = {c: i for i, c in enumerate(cases["case_id"])}
    cells = cells.sort_values(
        ["kind", "responder", "case_id"], key=lambda s: s.map(order) if s.name == "case_id" else s
    ).reset_index(drop=True)
    return CaseMatrix(cells=cells, cases=cases)
