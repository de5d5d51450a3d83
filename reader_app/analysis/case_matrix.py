"""Per-case matrix: which cases the human readers get and the models miss, and the reverse.

Case difficulty comes from the pool: ``pool_accuracy`` is the share of the
pooled readers (completion >= ``min_completion``) who answered the case
correctly, each reader with a row on the case counting once (SCORING.md 4);
difficulty is ``1 - pool_accuracy``. Humans "get" a case when at least half
of the pooled readers are correct; models "get" it when at least half of the
model runs are. A model "disagrees" with the pool on a case when it is right where
the pool's majority is wrong, or the reverse. Cases of equal difficulty come in
numeric order of their ids (9 before 13 before 100). Cells use scoring's own
status and verdict rules.
"""

from __future__ import annotations

import re
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


FILTERS: Final = {
    "all": "all cases",
    "disagree": "cases where the pool and a model disagree",
    SPLITS[0]: SPLITS[0],
    SPLITS[1]: SPLITS[1],
}


def natural_key(case_id: str) -> tuple[tuple[int, int | str], ...]:
    """``"9" < "13" < "100"`` and ``"case-2" < "case-10"``: digit runs compare as numbers."""
    return tuple(
        (0, int(part)) if part.isdigit() else (1, part.lower())
        for part in re.split(r"(\d+)", str(case_id))
        if part
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

    def chosen(self, which: str = "all", model: str | None = None) -> pd.DataFrame:
        """The cases of one filter (FILTERS), hardest first, case ids in numeric order;
        with ``model``, "disagree" means that model run disagrees with the pool."""
        if which == "all":
            return self.cases
        if which == "disagree" and model is not None:
            mine = self.cells[(self.cells["responder"] == model) & (self.cells["kind"] == "model")]
            right = dict(zip(mine["case_id"], mine["outcome"] == "correct", strict=True))
            pooled = self.cases["pooled_readers"] > 0
            differs = [
                right.get(c, False) != bool(g)
                for c, g in zip(self.cases["case_id"], self.cases["pool_gets"], strict=True)
            ]
            return self.cases[pooled & pd.Series(differs, index=self.cases.index)]
        if which == "disagree":
            return self.cases[self.cases["models_disagreeing"] > 0]
        if which in SPLITS:
            return self.split(which)
        raise ValueError(f"filter must be one of {', '.join(FILTERS)}, not {which!r}")

    def page(self, cases: pd.DataFrame) -> pd.DataFrame:
        """The cells of ``cases`` only (for one page of the matrix)."""
        return self.cells[self.cells["case_id"].isin(set(cases["case_id"]))]


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
    pool_right = pool_acc >= 0.5
    disagreeing = (
        (correct[models] != pool_right[None, :]).sum(axis=0)
        if n_models
        else np.zeros(matrix.n_cases, dtype=int)
    )
    disagreeing = np.where(n_pool > 0, disagreeing, 0)
    cases = pd.DataFrame(
        {
            "case_id": list(matrix.case_ids),
            "pool_accuracy": pool_acc,
            "difficulty": 1.0 - pool_acc,
            "pooled_readers": n_pool.astype(int),
            "models_correct": correct[models].sum(axis=0).astype(int),
            "model_runs": n_models,
            "pool_gets": pool_right,
            "models_disagreeing": disagreeing.astype(int),
            "split": [
                _split(a, int(n), m, n_models)
                for a, n, m in zip(pool_acc, n_pool, model_acc, strict=True)
            ],
        }
    )
    rank = {c: i for i, c in enumerate(sorted(cases["case_id"], key=natural_key))}
    cases = (
        cases.assign(_nat=cases["case_id"].map(rank))
        .sort_values(["difficulty", "_nat"], ascending=[False, True], na_position="last")
        .drop(columns="_nat")
        .reset_index(drop=True)
    )
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
