"""The whole result: every responder, the human pool, CIs and tests, with params.

``score_responses`` is the one entry point the CLI, the app and notebooks use;
it returns plain dicts and lists (floats may be NaN; see scoring.render).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

import numpy as np
import pandas as pd

from scoring.agreement import fleiss_kappa, outcome_table
from scoring.arms import split_arms
from scoring.bootstrap import bootstrap_counts, percentile_ci
from scoring.categories import FloatArray
from scoring.frame import FrameError, validate_frame
from scoring.mrmc import model_vs_pool
from scoring.params import ScoringParams
from scoring.permutation import sign_flip_test
from scoring.points import ResponseMatrix, build_matrix
from scoring.pool import Pool, build_pools, case_contributions, pool_members
from scoring.radle import radle_metrics
from scoring.secondary import secondary_metrics

# Scalar metrics that get a bootstrap CI (and a model-minus-pool difference).
CI_METRICS: Final = (
    "radle_c",
    "radle_a",
    "attempted_accuracy",
    "radle_r",
    "radle_s",
    "radle_h",
    "idk_rate",
    "confident_error_rate",
    "likert4_accuracy",
    "brier",
    "ece",
    "spearman_rho",
    "aurc",
)
POOL_NAME: Final = "human_pool"
COHORT_POOL_NAME: Final = "cohort_pool"


def metrics_from_counts(counts: FloatArray, params: ScoringParams) -> dict[str, FloatArray]:
    """Every metric of SCORING.md section 3 from count vectors (..., 14)."""
    return {**radle_metrics(counts, params), **secondary_metrics(counts)}


def responder_metrics(
    data: pd.DataFrame | Iterable[Mapping[str, Any]],
    params: ScoringParams | None = None,
    *,
    case_ids: Sequence[str] | None = None,
) -> pd.DataFrame:
    """One row per responder with every point metric (no pool, no bootstrap)."""
    params = params or ScoringParams()
    raw = data if isinstance(data, pd.DataFrame) else pd.DataFrame(list(data))
    matrix = build_matrix(validate_frame(split_arms(raw)[0]), case_ids)
    metrics = metrics_from_counts(matrix.counts(), params)
    out = pd.DataFrame(
        {
            "responder": list(matrix.responders),
            "kind": list(matrix.kinds),
            "group": list(matrix.groups),
            "n_cases": matrix.n_cases,
            "completion": matrix.completion(),
            **metrics,
        }
    )
    out.attrs["params"] = params.to_dict()
    return out


def score_responses(
    data: pd.DataFrame | Iterable[Mapping[str, Any]],
    params: ScoringParams | None = None,
    *,
    case_ids: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Score a tidy frame: ``{"responders": [...], "human_pool": {...}, "params": {...}}``.

    ``case_ids`` fixes the scored case set (default: every case in the data).
    With ``params.n_boot > 0`` each arm gets percentile CIs from the paired
    bootstrap and each model its difference to the pool, with CI and
    sign-flip permutation p-value (``perm_p_vs_pool``). ``comparisons`` holds,
    for every model and for RadLE-A and RadLE-C, its difference to the pool with
    readers and cases random (scoring.mrmc), whatever ``n_boot``.
    Aided rows (an ``arm`` column, SCORING.md section 10) are left out here:
    ``scoring.aid.score_with_aid`` scores both arms.
    """
    params = params or ScoringParams()
    raw = data if isinstance(data, pd.DataFrame) else pd.DataFrame(list(data))
    raw = split_arms(raw)[0]
    matrix = build_matrix(validate_frame(raw), case_ids)
    cohorts = responder_cohorts(raw, matrix.responders)
    pools = build_pools(matrix, params)
    n_human_pools = len(pools)
    pools += cohort_pools(matrix, cohorts)
    members = pool_members(matrix, params.min_completion)
    completion = matrix.completion()
    resp = _rows(metrics_from_counts(matrix.counts(), params), len(matrix.responders))
    pooled = _rows(metrics_from_counts(np.stack([p.counts() for p in pools]), params), len(pools))
    for i, row in enumerate(resp):
        row.update(
            responder=matrix.responders[i],
            kind=matrix.kinds[i],
            group=matrix.groups[i],
            cohort=cohorts[i],
            n_cases=matrix.n_cases,
            completion=float(completion[i]),
            in_pool=bool(members[i]),
        )
    for k, (pool, row) in enumerate(zip(pools, pooled, strict=True)):
        if k < n_human_pools:
            row.update(
                responder=POOL_NAME,
                kind="pool",
                group=pool.group,
                cohort=None,
                n_cases=matrix.n_cases,
                n_readers=len(pool.readers),
                readers=list(pool.readers),
            )
        else:  # the model runs of one cohort, pooled as the readers are
            row.update(
                responder=COHORT_POOL_NAME,
                kind="cohort",
                group=None,
                cohort=pool.group,
                n_cases=matrix.n_cases,
                n_runs=len(pool.readers),
                runs=list(pool.readers),
            )
    if params.n_boot > 0 and matrix.n_cases > 0:
        _add_inference(matrix, pools, params, resp, pooled)
    overall = pooled[0]
    overall["excluded_readers"] = [
        r
        for r, k, m in zip(matrix.responders, matrix.kinds, members, strict=True)
        if k == "human" and not m
    ]
    overall["fleiss_kappa"] = fleiss_kappa(outcome_table(matrix.categories[pools[0].reader_index]))
    overall["by_group"] = pooled[1:n_human_pools]
    report: dict[str, Any] = {
        "responders": [_ordered(r) for r in resp],
        "human_pool": _ordered(overall),
        "params": params.to_dict(),
    }
    report["comparisons"] = comparisons(matrix, pools[0], params, resp)
    if len(pools) > n_human_pools:  # only when some model run has a cohort
        report["cohort_pools"] = [_ordered(r) for r in pooled[n_human_pools:]]
    return report


def comparisons(
    matrix: ResponseMatrix, pool: Pool, params: ScoringParams, resp: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Model minus pool for RadLE-A and RadLE-C with readers and cases random
    (scoring.mrmc, SCORING.md section 5), with the bootstrap interval of the same
    difference (``boot_ci_low``, ``boot_ci_high``) beside it when it was computed."""
    out = model_vs_pool(matrix, pool.reader_index, params)
    by_name = {row["responder"]: row for row in resp}
    for entry in out:
        row = by_name[entry["model"]]
        for side in ("low", "high"):
            key = f"{entry['metric']}_diff_vs_pool_ci_{side}"
            if key in row:
                entry[f"boot_ci_{side}"] = row[key]
    return out


def responder_cohorts(raw: pd.DataFrame, responders: Sequence[str]) -> list[str | None]:
    """Each responder's cohort from an optional ``cohort`` column (e.g. frontier,
    open-weight, medical), None where blank; one cohort per responder."""
    if "cohort" not in raw.columns or len(raw) == 0:
        return [None] * len(responders)
    who = raw["responder"].astype(str).str.strip()
    given = raw["cohort"].where(raw["cohort"].notna(), "").astype(str).str.strip()
    found: dict[str, set[str]] = {}
    for name, cohort in zip(who, given, strict=True):
        if cohort and cohort.lower() != "nan":
            found.setdefault(name, set()).add(cohort)
    mixed = sorted(name for name, values in found.items() if len(values) > 1)
    if mixed:
        raise FrameError(f"responder(s) with more than one cohort: {mixed[:20]}")
    return [next(iter(found[r])) if r in found else None for r in responders]


def cohort_pools(matrix: ResponseMatrix, cohorts: Sequence[str | None]) -> list[Pool]:
    """One pool per cohort of model runs (sorted by name): on each case the cohort's
    runs with a row share weight 1, as the readers do in the human pool."""
    names = sorted({c for c, k in zip(cohorts, matrix.kinds, strict=True) if c and k == "model"})
    out = []
    for name in names:
        index = np.flatnonzero(
            [c == name and k == "model" for c, k in zip(cohorts, matrix.kinds, strict=True)]
        )
        out.append(
            Pool(
                group=name,
                readers=tuple(matrix.responders[i] for i in index),
                reader_index=index,
                contributions=case_contributions(matrix.categories[index]),
            )
        )
    return out


def _rows(metrics: dict[str, FloatArray], n: int) -> list[dict[str, Any]]:
    return [{k: float(v[i]) for k, v in metrics.items()} for i in range(n)]


def _ordered(row: dict[str, Any]) -> dict[str, Any]:
    """Identity columns first, then metrics in a stable order."""
    head = ["responder", "kind", "group", "cohort", "n_cases"]
    return {
        **{k: row[k] for k in head if k in row},
        **{k: v for k, v in row.items() if k not in head},
    }


def _add_inference(
    matrix: ResponseMatrix,
    pools: list[Pool],
    params: ScoringParams,
    resp: list[dict[str, Any]],
    pooled: list[dict[str, Any]],
) -> None:
    """Bootstrap CIs for every arm, model-minus-pool differences and p-values."""
    boot_resp, boot_pool = bootstrap_counts(matrix, pools, params)
    m_resp = metrics_from_counts(boot_resp, params)
    m_pool = metrics_from_counts(boot_pool, params)
    models = [i for i, k in enumerate(matrix.kinds) if k == "model"]
    has_pool = len(pools[0].readers) > 0
    for name in CI_METRICS:
        for rows, samples in ((resp, m_resp[name]), (pooled, m_pool[name])):
            low, high = percentile_ci(samples)
            for j, row in enumerate(rows):
                row[f"{name}_ci_low"], row[f"{name}_ci_high"] = float(low[j]), float(high[j])
        if not models:
            continue
        diff = m_resp[name][:, models] - m_pool[name][:, :1]
        low, high = percentile_ci(diff)
        for j, i in enumerate(models):
            resp[i][f"{name}_diff_vs_pool"] = resp[i][name] - pooled[0][name]
            resp[i][f"{name}_diff_vs_pool_ci_low"] = float(low[j])
            resp[i][f"{name}_diff_vs_pool_ci_high"] = float(high[j])
    if models:
        pool_points = pools[0].case_points(params.idk_score, params.weight)
        diffs = (matrix.points(params.idk_score, params.weight)[models] - pool_points).T
        p = (
            sign_flip_test(diffs, params.n_boot, params.seed)
            if has_pool
            else np.full(len(models), np.nan)
        )
        for j, i in enumerate(models):
            resp[i]["perm_p_vs_pool"] = float(p[j])
