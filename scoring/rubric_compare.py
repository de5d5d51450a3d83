"""Report rubric scores with uncertainty: per responder and human pool vs each model.

Input: the rubric frame (``responder``, ``kind``, ``case_id``, ``rubric`` 0..40;
``group`` optional), one row per graded report.

- Per responder: ``rubric_summary`` (SCORING.md section 6) plus a paired case
  bootstrap percentile CI of the mean score and of the percent of the ceiling
  (every arm on the same case resample; seed and B as in section 5).
- The human pool: per case, the mean of the humans' scores on it; the pool's
  figure is the mean of those case means (section 4's weighting, applied to
  scores). Its rubric totals use the case means.
- Each model against the pool, on the cases both have: mean difference
  (model - pool), its bootstrap CI, and the paired sign-flip permutation
  p-value of section 5 (d_i = model_i - pool_i).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np
import pandas as pd

from scoring.bootstrap import case_weights_for, percentile_ci
from scoring.categories import FloatArray
from scoring.permutation import sign_flip_test
from scoring.rubric import COUNTED_AS, RUBRIC_MAX, rubric_summary

POOL: Final = "human pool"
COMPARISON_COLUMNS: Final = [
    "model",
    "n_cases",
    "model_mean",
    "pool_mean",
    "diff",
    "diff_ci_low",
    "diff_ci_high",
    "p_value",
]


@dataclass(frozen=True)
class RubricScores:
    responders: pd.DataFrame  # rubric_summary + kind, group, mean_ci_*, percent_ci_*
    comparisons: pd.DataFrame  # COMPARISON_COLUMNS, one row per model


def _boot_means(scores: FloatArray, weights: FloatArray) -> FloatArray:
    """Mean over present cases on every resample: scores (arms, cases) with NaN -> (B, arms)."""
    has = ~np.isnan(scores)
    filled = np.where(has, scores, 0.0)
    totals = weights @ filled.T
    counts = weights @ has.T.astype(np.float64)
    out: FloatArray = np.divide(totals, counts, out=np.full_like(totals, np.nan), where=counts > 0)
    return out


def rubric_scores(
    frame: pd.DataFrame, *, n_boot: int = 2000, seed: int = 0, n_perm: int = 2000
) -> RubricScores:
    if len(frame) == 0:
        return RubricScores(rubric_summary(frame), pd.DataFrame(columns=COMPARISON_COLUMNS))
    summary = rubric_summary(frame)  # validates 0..40 integers
    kinds = frame.groupby("responder")["kind"].first()
    groups = (
        frame.groupby("responder")["group"].first() if "group" in frame else pd.Series(dtype=object)
    )
    wide = frame.pivot_table(
        index="responder", columns="case_id", values="rubric", aggfunc="mean"
    ).astype(float)
    cases = list(wide.columns)
    humans = [r for r in wide.index if kinds.get(r) == "human"]
    models = [r for r in wide.index if kinds.get(r) == "model"]
    arms = wide.to_numpy()
    names = list(wide.index)
    pool_row = _case_means(arms[[names.index(h) for h in humans]]) if humans else None
    if pool_row is not None:
        arms = np.vstack([arms, pool_row])
        names.append(POOL)
        pool_frame = pd.DataFrame(
            {"responder": POOL, "case_id": cases, "rubric": pool_row}
        ).dropna()
        pool_summary = _pool_summary(pool_frame)
        if COUNTED_AS in frame.columns:
            pool_summary = _pool_judged(pool_summary, frame, humans)
        summary = pd.concat([summary, pool_summary], ignore_index=True)
    weights = case_weights_for(len(cases), n_boot, seed)
    boot = _boot_means(arms, weights)
    low, high = percentile_ci(boot)
    ci = pd.DataFrame({"responder": names, "mean_ci_low": low, "mean_ci_high": high})
    ci["percent_ci_low"] = 100.0 * ci["mean_ci_low"] / RUBRIC_MAX
    ci["percent_ci_high"] = 100.0 * ci["mean_ci_high"] / RUBRIC_MAX
    out = summary.merge(ci, on="responder", how="left")
    # ranked as Bench 2 ranks: by the share of the ceiling (every case counted), best first
    out = out.sort_values(
        ["percent_of_ceiling", "responder"], ascending=[False, True], kind="stable"
    ).reset_index(drop=True)
    out.insert(1, "kind", [kinds.get(r, "pool") for r in out["responder"]])
    out.insert(2, "group", [groups.get(r) if r in groups else None for r in out["responder"]])
    rows = []
    if pool_row is not None:
        for m in models:
            model_row = arms[names.index(m)]
            both = ~np.isnan(model_row) & ~np.isnan(pool_row)
            d = np.where(both, model_row - pool_row, np.nan)
            boot_d = _boot_means(d[None, :], weights)[:, 0]
            lo, hi = percentile_ci(boot_d[:, None])
            rows.append(
                {
                    "model": m,
                    "n_cases": int(both.sum()),
                    "model_mean": float(np.mean(model_row[both])) if both.any() else np.nan,
                    "pool_mean": float(np.mean(pool_row[both])) if both.any() else np.nan,
                    "diff": float(np.mean(d[both])) if both.any() else np.nan,
                    "diff_ci_low": float(lo[0]),
                    "diff_ci_high": float(hi[0]),
                    "p_value": float(sign_flip_test(d[both], n_perm, seed)),
                }
            )
    return RubricScores(out, pd.DataFrame.from_records(rows, columns=COMPARISON_COLUMNS))


def _pool_judged(pool: pd.DataFrame, frame: pd.DataFrame, humans: list[str]) -> pd.DataFrame:
    """The pool's judged-only figures: per case, the mean of the readers' judged scores."""
    judged = frame[(frame[COUNTED_AS] == "judged") & frame["responder"].isin(humans)]
    means = judged.groupby("case_id")["rubric"].mean().astype(float)
    n = len(means)
    return pool.assign(
        n_judged=n,
        n_counted_fail=int(pool["n_cases"].iloc[0]) - n,
        judged_total=float(means.sum()),
        judged_ceiling=RUBRIC_MAX * n,
        judged_percent_of_ceiling=100.0 * float(means.sum()) / (RUBRIC_MAX * n) if n else np.nan,
        judged_mean=float(means.mean()) if n else np.nan,
    )


def _case_means(scores: FloatArray) -> FloatArray:
    """Per case, the mean over the rows that scored it (NaN where none did)."""
    has = ~np.isnan(scores)
    total = np.where(has, scores, 0.0).sum(axis=0)
    count = has.sum(axis=0)
    out: FloatArray = np.divide(total, count, out=np.full(total.shape, np.nan), where=count > 0)
    return out


def _pool_summary(pool_frame: pd.DataFrame) -> pd.DataFrame:
    """The pool's totals over case means (not integers, so not through the tier check)."""
    s = pool_frame["rubric"].astype(float)
    n = len(s)
    row = {
        "responder": POOL,
        "n_cases": n,
        "total": float(s.sum()),
        "ceiling": RUBRIC_MAX * n,
        "percent_of_ceiling": 100.0 * float(s.sum()) / (RUBRIC_MAX * n) if n else np.nan,
        "mean": float(s.mean()) if n else np.nan,
        "sd": float(s.std()) if n > 1 else np.nan,
        "median": float(s.median()) if n else np.nan,
        "min": float(s.min()) if n else np.nan,
        "max": float(s.max()) if n else np.nan,
    }
    # tiers of the case means, rounded half up to whole points
    rounded = np.floor(s.to_numpy() + 0.5).astype(int)
    tiers = rubric_summary(pd.DataFrame({"responder": POOL, "rubric": rounded}))
    for col in tiers.columns:
        if col.startswith("n_") and col != "n_cases":
            row[col] = int(tiers[col].iloc[0]) if n else 0
    return pd.DataFrame([row])
