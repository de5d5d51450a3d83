"""Grounding (SCORING.md section 8): G, GA and U per responder and for the human pool.

Input is the tidy frame plus a ``hit`` column (1 when the responder's location
lies in the case's reference region; see scoring.regions) and the set of
cases that carry a region. Over those N_g cases:

    G  = hits / N_g                      missing rows, "no focal finding",
    GA = #(correct and hit) / N_g        IDK and failures are misses
    U  = #(correct and not hit) / #(correct)   NaN when nothing is correct

The pool averages the included readers per case (weight 1 / n_i, as in
section 4). CIs use the paired case bootstrap of section 5 on the very same
case resamples as ``score_responses`` (the study's resample over all scored
cases, restricted to the grounded ones), so grounding and accuracy CIs pair.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

import numpy as np
import pandas as pd

from scoring.bootstrap import case_weights_for, percentile_ci
from scoring.categories import CORRECT_0, FAILURE, IDK, MISSING, FloatArray
from scoring.frame import FrameError, validate_frame
from scoring.params import ScoringParams
from scoring.permutation import sign_flip_test
from scoring.points import ResponseMatrix, build_matrix
from scoring.pool import pool_members
from scoring.status import parse_flag

GROUNDING_METRICS: Final = ("grounding_rate", "grounded_accuracy", "ungrounded_correct_share")
POOL_NAME: Final = "human_pool"


def grounding_from_sums(
    hits: FloatArray, correct_hits: FloatArray, correct: FloatArray, n_grounded: FloatArray
) -> dict[str, FloatArray]:
    """G, GA and U from (weighted) sums; any leading shape, NaN where undefined."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return {
            "grounding_rate": np.where(n_grounded > 0, hits / n_grounded, np.nan),
            "grounded_accuracy": np.where(n_grounded > 0, correct_hits / n_grounded, np.nan),
            "ungrounded_correct_share": np.where(
                correct > 0, (correct - correct_hits) / correct, np.nan
            ),
        }


def _hit_matrix(raw: pd.DataFrame, matrix: ResponseMatrix) -> FloatArray:
    """1.0 where the responder's row on a case says hit, else 0.0, as (responders, cases)."""
    if "hit" not in raw.columns:
        raise FrameError("grounding needs a `hit` column (1 = location inside the region)")
    out = np.zeros(matrix.categories.shape)
    rows = pd.Index(matrix.responders).get_indexer(pd.Index(raw["responder"].astype(str)))
    cols = pd.Index(matrix.case_ids).get_indexer(pd.Index(raw["case_id"].astype(str)))
    hit = np.zeros(len(raw), dtype=bool)
    bad = []
    for i, value in enumerate(raw["hit"]):
        try:
            hit[i] = parse_flag(value) is True
        except ValueError:
            bad.append(i)
    if bad:
        raise FrameError(f"`hit` must be 0/1 or empty; bad rows {bad[:20]}")
    keep = (rows >= 0) & (cols >= 0)
    out[rows[keep], cols[keep]] = hit[keep].astype(np.float64)
    return out


def _case_vectors(matrix: ResponseMatrix, hit: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Per responder and case: counted hit (IDK/failure/missing are misses) and correct."""
    cats = matrix.categories
    counted = hit * ~np.isin(cats, (IDK, FAILURE, MISSING))
    correct = ((cats >= CORRECT_0) & (cats < CORRECT_0 + 5)).astype(np.float64)
    return counted, correct


def _pool_vectors(
    counted: FloatArray, correct: FloatArray, has_row: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """The pool's per-case means over readers with a row (0 on a case none read)."""
    n_i = has_row.sum(axis=0)
    inv = np.divide(1.0, n_i, out=np.zeros_like(n_i), where=n_i > 0)
    return (counted * has_row).sum(axis=0) * inv, (correct * has_row).sum(axis=0) * inv


def grounding_report(
    data: pd.DataFrame | Iterable[Mapping[str, Any]],
    grounded_case_ids: Iterable[str],
    params: ScoringParams | None = None,
    *,
    case_ids: Sequence[str] | None = None,
) -> dict[str, Any]:
    """``{"responders": [...], "human_pool": {...}, "params": {...}}`` for grounding.

    ``case_ids`` is the scored case set in the order ``score_responses`` is
    given it (default: every case in the data, sorted), so the bootstrap
    draws the same resamples; ``grounded_case_ids`` are those with a region.
    """
    params = params or ScoringParams()
    raw = data if isinstance(data, pd.DataFrame) else pd.DataFrame(list(data))
    matrix = build_matrix(validate_frame(raw), case_ids)
    grounded = np.isin(np.array(matrix.case_ids, dtype=object), list(set(grounded_case_ids)))
    counted, correct = _case_vectors(matrix, _hit_matrix(raw, matrix))
    both = counted * correct
    members = pool_members(matrix, params.min_completion)
    has_row = (matrix.categories[members] != MISSING).astype(np.float64)
    pool_hit, pool_correct = _pool_vectors(counted[members], correct[members], has_row)
    pool_both = _pool_vectors(both[members], correct[members], has_row)[0]
    g = grounded.astype(np.float64)
    n_g = float(g.sum())
    # an empty pool has no figures (n/a), like its RadLE metrics: not 0 hits of N_g
    pool_n = 1.0 if members.any() else 0.0
    resp = grounding_from_sums(counted @ g, both @ g, correct @ g, np.full(len(counted), n_g))
    pool = grounding_from_sums(
        pool_hit @ g, pool_both @ g, pool_correct @ g, np.array(n_g * pool_n)
    )
    rows = [
        {
            "responder": matrix.responders[i],
            "kind": matrix.kinds[i],
            "group": matrix.groups[i],
            "n_grounded": int(n_g),
            "hits": float(counted[i] @ g),
            **{k: float(v[i]) for k, v in resp.items()},
        }
        for i in range(len(matrix.responders))
    ]
    pooled: dict[str, Any] = {
        "responder": POOL_NAME,
        "kind": "pool",
        "group": None,
        "n_grounded": int(n_g),
        "n_readers": int(members.sum()),
        **{k: float(v) for k, v in pool.items()},
    }
    if params.n_boot > 0 and n_g > 0:
        weights = case_weights_for(matrix.n_cases, params.n_boot, params.seed) * g
        boot = grounding_from_sums(
            weights @ counted.T,
            weights @ both.T,
            weights @ correct.T,
            weights.sum(axis=1, keepdims=True),
        )
        boot_pool = grounding_from_sums(
            weights @ pool_hit,
            weights @ pool_both,
            weights @ pool_correct,
            weights.sum(axis=1) * pool_n,
        )
        _add_inference(matrix, rows, pooled, boot, boot_pool, bool(members.any()))
        models = [i for i, k in enumerate(matrix.kinds) if k == "model"]
        if models and members.any():
            diffs = (counted[models][:, grounded] - pool_hit[grounded]).T
            p = sign_flip_test(diffs, params.n_boot, params.seed)
            for j, i in enumerate(models):
                rows[i]["grounding_rate_perm_p_vs_pool"] = float(p[j])
    return {"responders": rows, "human_pool": pooled, "params": params.to_dict()}


def _add_inference(
    matrix: ResponseMatrix,
    rows: list[dict[str, Any]],
    pooled: dict[str, Any],
    boot: dict[str, FloatArray],
    boot_pool: dict[str, FloatArray],
    has_pool: bool,
) -> None:
    """Percentile CIs for every arm and model-minus-pool differences with CIs."""
    models = [i for i, k in enumerate(matrix.kinds) if k == "model"]
    for name in GROUNDING_METRICS:
        low, high = percentile_ci(boot[name])
        for i, row in enumerate(rows):
            row[f"{name}_ci_low"], row[f"{name}_ci_high"] = float(low[i]), float(high[i])
        p_low, p_high = percentile_ci(boot_pool[name][:, None])
        pooled[f"{name}_ci_low"], pooled[f"{name}_ci_high"] = float(p_low[0]), float(p_high[0])
        if not (models and has_pool):
            continue
        d_low, d_high = percentile_ci(boot[name][:, models] - boot_pool[name][:, None])
        for j, i in enumerate(models):
            rows[i][f"{name}_diff_vs_pool"] = rows[i][name] - pooled[name]
            rows[i][f"{name}_diff_vs_pool_ci_low"] = float(d_low[j])
            rows[i][f"{name}_diff_vs_pool_ci_high"] = float(d_high[j])


def grounded_cases_of(data: pd.DataFrame) -> list[str]:
    """The cases with a ``hit`` (0 or 1) on some row, sorted: a responses file marks a
    case without a reference region by leaving ``hit`` blank on every row of it."""
    if "hit" not in data.columns or len(data) == 0:
        return []

    def blank(value: object) -> bool:
        try:
            return parse_flag(value) is None
        except ValueError:
            return False  # not blank: grounding_report names the bad row

    given = ~data["hit"].map(blank).astype(bool)
    return sorted({str(c).strip() for c in data.loc[given, "case_id"]})
