"""AI-aided reading (SCORING.md section 10): two arms, switches, aided minus unaided.

``score_with_aid`` scores a frame whose human rows may carry ``arm`` and
``aid_run`` (scoring/arms.py). Unaided rows (and the model runs) score exactly
as ``score_responses`` scores them; aided rows score as a second responder per
reader, ``<reader> [aided]``, with a pool of their own (``aided_pool``). The
top-level ``aid`` list holds, per reader and for the pool (``human_pool``):

- ``harmful_switch_rate`` HS = #(model wrong, unaided correct, aided not correct)
  / #(model wrong, unaided correct), NaN when nothing is at risk;
- ``helpful_switch_rate`` GS = #(model correct, unaided not correct, aided correct)
  / #(model correct, unaided not correct);
- ``net_benefit`` = (aided correct - unaided correct) / aided cases;
- ``mean_likert_change`` (aided minus unaided over cases answered both times);
- the same by the model's stated confidence (``by_confidence``: its Likert 0..4,
  or ``none`` when the model gave no answered row) and, for the pool, by the
  reader's group (``by_group``);
- aided minus unaided RadLE-A and RadLE-C with the paired case bootstrap of
  section 5 (the same case resample for both arms) and, for the pool, with
  readers and cases random (``scoring.mrmc``'s U-statistic, the two arms paired
  within reader and case: ``radle_a_diff_mrmc``, ``..._mrmc_se``, ``..._mrmc_ci_low``,
  ``..._mrmc_ci_high``, ``..._mrmc_p``, ``mrmc_readers``, ``mrmc_cases``).

"Correct" is a correct answered row; IDK, invalid, failure and missing are not.
The pool weighs a reader's aided case i by 1 / n_i, n_i the pool readers with an
aided row on i (section 4), so each aided case counts once.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import pandas as pd

from scoring.arms import AIDED_SUFFIX, aided_name, split_arms
from scoring.bootstrap import case_weights_for, percentile_ci, pool_counts, responder_counts
from scoring.categories import CORRECT_0, MISSING, N_LEVELS, WRONG_0, FloatArray
from scoring.frame import FrameError, validate_frame
from scoring.mrmc import metric_kernels, normal_test, u_stat11
from scoring.params import ScoringParams
from scoring.points import IntArray, ResponseMatrix, build_matrix
from scoring.pool import case_contributions
from scoring.score import POOL_NAME, metrics_from_counts, score_responses

AID_METRICS: Final = ("radle_a", "radle_c")
CONFIDENCE_BINS: Final = ("0", "1", "2", "3", "4", "none")
AIDED_POOL_NAME: Final = aided_name(POOL_NAME)


@dataclass(frozen=True)
class AidCells:
    """One entry per (reader, aided case): who, which case, the three outcomes."""

    reader: npt.NDArray[np.intp]  # index into the readers tuple
    case: npt.NDArray[np.intp]  # index into the scored case list
    model: IntArray  # category of the model run shown, on that case
    unaided: IntArray  # category of the reader's unaided row (MISSING if none)
    aided: IntArray  # category of the reader's aided row


def _correct(categories: IntArray) -> npt.NDArray[np.bool_]:
    out: npt.NDArray[np.bool_] = (categories >= CORRECT_0) & (categories < CORRECT_0 + N_LEVELS)
    return out


def _likert(categories: IntArray) -> FloatArray:
    """The Likert of an answered row, NaN otherwise."""
    answered = categories < WRONG_0 + N_LEVELS
    out: FloatArray = np.where(answered, (categories % N_LEVELS).astype(np.float64), np.nan)
    return out


def confidence_bin(categories: IntArray) -> npt.NDArray[np.str_]:
    """The model's stated confidence on each cell: its Likert, or ``none``."""
    likert = _likert(categories)
    out: npt.NDArray[np.str_] = np.where(
        np.isnan(likert), "none", np.nan_to_num(likert).astype(np.int64).astype(str)
    )
    return out


def switch_figures(
    model: IntArray, unaided: IntArray, aided: IntArray, weight: FloatArray
) -> dict[str, float]:
    """HS, GS, net benefit and the mean Likert change over weighted aided cells.

    With weight 1 per cell these are one reader's figures; with the pool's
    1 / n_i weights the pool's. Counts are weighted the same way.
    """
    mc, uc, ac = _correct(model), _correct(unaided), _correct(aided)
    harm_risk = float(weight[~mc & uc].sum())
    harm = float(weight[~mc & uc & ~ac].sum())
    help_risk = float(weight[mc & ~uc].sum())
    helped = float(weight[mc & ~uc & ac].sum())
    cases = float(weight.sum())
    change = _likert(aided) - _likert(unaided)
    both = ~np.isnan(change)
    both_weight = float(weight[both].sum())
    return {
        "n_aided_cases": cases,
        "harmful_switch_rate": harm / harm_risk if harm_risk > 0 else float("nan"),
        "helpful_switch_rate": helped / help_risk if help_risk > 0 else float("nan"),
        "net_benefit": (
            float((weight * (ac.astype(float) - uc.astype(float))).sum()) / cases
            if cases > 0
            else float("nan")
        ),
        "n_harmful_switches": harm,
        "n_harmful_at_risk": harm_risk,
        "n_helpful_switches": helped,
        "n_helpful_at_risk": help_risk,
        "mean_likert_change": (
            float((weight[both] * change[both]).sum()) / both_weight
            if both_weight > 0
            else float("nan")
        ),
    }


def figures_with_bins(cells: AidCells, weight: FloatArray) -> dict[str, Any]:
    """``switch_figures`` overall and per model confidence bin (``by_confidence``)."""
    out: dict[str, Any] = switch_figures(cells.model, cells.unaided, cells.aided, weight)
    bins = confidence_bin(cells.model)
    out["by_confidence"] = [
        {"model_confidence": b}
        | switch_figures(cells.model[sel], cells.unaided[sel], cells.aided[sel], weight[sel])
        for b in CONFIDENCE_BINS
        if (sel := bins == b).any()
    ]
    return out


def pool_weights(cells: AidCells, members: npt.NDArray[np.bool_]) -> FloatArray:
    """1 / n_i for the cells of pool readers (n_i: pool readers aided on case i), else 0."""
    keep = members[cells.reader]
    n_cases = int(cells.case.max(initial=-1)) + 1
    n_i = np.bincount(cells.case[keep], minlength=n_cases).astype(np.float64)
    out: FloatArray = np.where(keep, 1.0 / np.maximum(n_i[cells.case], 1.0), 0.0)
    return out


def aid_cells(
    unaided: ResponseMatrix, aided: ResponseMatrix, aid_runs: npt.NDArray[np.object_]
) -> AidCells:
    """The aided cells of every reader: ``aided`` holds the aided rows under the
    readers' own names; ``aid_runs`` (readers x cases) the run shown, None where no
    aided row. The model's category comes from its row in ``unaided``."""
    reader, case = np.nonzero(aided.categories != MISSING)
    row_of = {name: i for i, name in enumerate(unaided.responders)}
    kinds = dict(zip(unaided.responders, unaided.kinds, strict=True))
    runs = aid_runs[reader, case]
    unknown = sorted({str(r) for r in runs if kinds.get(str(r)) != "model"})
    if unknown:
        raise FrameError(
            f"aid_run(s) {unknown[:20]} name no model run in the responses; the frame must "
            "hold the model rows the readers were shown"
        )
    model_rows = np.array([row_of[str(r)] for r in runs], dtype=np.intp)
    own = np.array([row_of.get(aided.responders[r], -1) for r in range(len(aided.responders))])
    unaided_rows = own[reader]
    unaided_cat = np.where(
        unaided_rows >= 0,
        unaided.categories[np.maximum(unaided_rows, 0), case],
        MISSING,
    ).astype(np.int8)
    return AidCells(
        reader=reader.astype(np.intp),
        case=case.astype(np.intp),
        model=unaided.categories[model_rows, case].astype(np.int8),
        unaided=unaided_cat,
        aided=aided.categories[reader, case].astype(np.int8),
    )


def score_with_aid(
    data: pd.DataFrame | Iterable[Mapping[str, Any]],
    params: ScoringParams | None = None,
    *,
    case_ids: Sequence[str] | None = None,
) -> dict[str, Any]:
    """``score_responses`` with the aided arm: aided responders, ``aided_pool``, ``aid``.

    A frame without aided rows gives exactly what ``score_responses`` gives.
    """
    params = params or ScoringParams()
    raw = data if isinstance(data, pd.DataFrame) else pd.DataFrame(list(data))
    unaided_raw, aided_raw = split_arms(raw)
    report = score_responses(unaided_raw, params, case_ids=case_ids)
    if len(aided_raw) == 0:
        return report
    unaided_frame = validate_frame(unaided_raw)
    aided_frame = validate_frame(aided_raw)
    cases = (
        list(case_ids)
        if case_ids is not None
        else sorted({*unaided_frame["case_id"], *aided_frame["case_id"]})
    )
    u_matrix = build_matrix(unaided_frame, cases)
    a_matrix = build_matrix(aided_frame, cases)
    runs = _aid_run_matrix(aided_frame, aided_raw, a_matrix)
    renamed = aided_raw.drop(columns=["arm"]).assign(
        responder=aided_raw["responder"].astype(str).str.strip() + AIDED_SUFFIX
    )
    aided_report = score_responses(renamed, params, case_ids=cases)
    run_of = {
        aided_name(r): "|".join(sorted({str(x) for x in runs[i] if x is not None}))
        for i, r in enumerate(a_matrix.responders)
    }
    for row in aided_report["responders"]:
        row.update(arm="aided", aid_run=run_of.get(row["responder"]))
    report["responders"] = [*report["responders"], *aided_report["responders"]]
    aided_pool = aided_report["human_pool"]
    aided_pool["responder"] = AIDED_POOL_NAME
    for group_row in aided_pool.get("by_group", []):
        group_row["responder"] = AIDED_POOL_NAME
    report["aided_pool"] = aided_pool
    cells = aid_cells(u_matrix, a_matrix, runs)
    pool_readers = {r.removesuffix(AIDED_SUFFIX) for r in aided_pool.get("readers", [])}
    report["aid"] = _aid_entries(cells, u_matrix, a_matrix, pool_readers, report, params)
    return report


def _aid_run_matrix(
    frame: pd.DataFrame, raw: pd.DataFrame, matrix: ResponseMatrix
) -> npt.NDArray[np.object_]:
    """(readers x cases) aid_run names of the aided rows (validate_frame keeps row order)."""
    out = np.full(matrix.categories.shape, None, dtype=object)
    r = pd.Index(matrix.responders).get_indexer(pd.Index(frame["responder"]))
    c = pd.Index(matrix.case_ids).get_indexer(pd.Index(frame["case_id"]))
    keep = c >= 0
    out[r[keep], c[keep]] = raw["aid_run"].astype(str).str.strip().to_numpy()[keep]
    return out


def _aid_entries(
    cells: AidCells,
    u_matrix: ResponseMatrix,
    a_matrix: ResponseMatrix,
    pool_readers: set[str],
    report: dict[str, Any],
    params: ScoringParams,
) -> list[dict[str, Any]]:
    """One entry per reader (sorted), then the pool's, with the arm comparison."""
    readers = a_matrix.responders
    by_name = {r["responder"]: r for r in report["responders"]}
    entries: list[dict[str, Any]] = []
    for i, reader in enumerate(readers):
        sel = cells.reader == i
        part = AidCells(
            cells.reader[sel],
            cells.case[sel],
            cells.model[sel],
            cells.unaided[sel],
            cells.aided[sel],
        )
        entry: dict[str, Any] = {"responder": reader, "group": a_matrix.groups[i]}
        entry |= figures_with_bins(part, np.ones(int(sel.sum())))
        for metric in AID_METRICS:
            before = by_name.get(reader, {}).get(metric, float("nan"))
            after = by_name[aided_name(reader)][metric]
            entry |= {f"{metric}_unaided": before, f"{metric}_aided": after}
            entry[f"{metric}_diff"] = after - before
        entries.append(entry)
    members = np.array([r in pool_readers for r in readers], dtype=bool)
    pool: dict[str, Any] = {"responder": POOL_NAME, "group": None}
    pool |= figures_with_bins(cells, pool_weights(cells, members))
    pool["n_readers"] = int(members.sum())
    pool["by_group"] = [
        {"responder": POOL_NAME, "group": g}
        | figures_with_bins(cells, pool_weights(cells, members & (np.array(a_matrix.groups) == g)))
        for g in sorted({g for g, m in zip(a_matrix.groups, members, strict=True) if m and g})
    ]
    unaided_pool, aided_pool = report["human_pool"], report["aided_pool"]
    for metric in AID_METRICS:
        before, after = unaided_pool[metric], aided_pool[metric]
        pool |= {f"{metric}_unaided": before, f"{metric}_aided": after}
        pool[f"{metric}_diff"] = after - before
    pool |= arm_mrmc(
        u_matrix,
        a_matrix,
        set(unaided_pool["readers"]),
        {r for r, m in zip(readers, members, strict=True) if m},
        params,
    )
    entries.append(pool)
    if params.n_boot > 0 and u_matrix.n_cases > 0:
        _add_arm_bootstrap(
            entries, u_matrix, a_matrix, set(unaided_pool["readers"]), members, params
        )
    return entries


def _arm_arrays(
    matrix: ResponseMatrix, values: FloatArray, readers: Sequence[str], members: set[str]
) -> tuple[FloatArray, FloatArray]:
    """(cases, readers) kernel and design of one arm: a reader outside the arm's pool
    (or without rows in it) is a column of zeros of the design."""
    row_of = {name: i for i, name in enumerate(matrix.responders)}
    kernel = np.zeros((matrix.n_cases, len(readers)))
    design = np.zeros_like(kernel)
    for j, reader in enumerate(readers):
        if reader in members and reader in row_of:
            i = row_of[reader]
            kernel[:, j] = values[i]
            design[:, j] = matrix.categories[i] != MISSING
    return kernel, design


def arm_mrmc(
    u_matrix: ResponseMatrix,
    a_matrix: ResponseMatrix,
    unaided_pool: set[str],
    aided_pool: set[str],
    params: ScoringParams,
) -> dict[str, Any]:
    """Aided minus unaided pool RadLE-A and RadLE-C with readers and cases random.

    The aided arm is modality A, the unaided arm modality B of ``scoring.mrmc.u_stat11``
    over the readers of either pool (each arm holds only its own pool's readers) and
    the scored cases; a reader's two rows on one case are the paired observations.
    Each arm's mean weighs every observed (reader, case) pair the same, so on an
    incomplete design ``*_diff_mrmc`` may differ slightly from ``*_diff`` (the pools'
    1 / n_i weights). The interval and p are normal, as in the model-vs-panel
    comparison; with fewer than two readers or cases they are NaN.
    """
    readers = sorted(unaided_pool | aided_pool)
    out: dict[str, Any] = {}
    u_values, a_values = metric_kernels(u_matrix, params), metric_kernels(a_matrix, params)
    for metric in AID_METRICS:
        ka, da = _arm_arrays(a_matrix, a_values[metric][0], readers, aided_pool)
        kb, db = _arm_arrays(u_matrix, u_values[metric][0], readers, unaided_pool)
        _, _, scale = u_values[metric]
        stat = u_stat11(ka, da, kb, db)
        enough = stat.n_readers >= 2 and stat.n_cases >= 2
        diff = scale * stat.mean_diff
        se, low, high, p = normal_test(diff, scale**2 * stat.var_diff if enough else math.nan)
        out |= {
            f"{metric}_diff_mrmc": diff,
            f"{metric}_diff_mrmc_se": se,
            f"{metric}_diff_mrmc_ci_low": low,
            f"{metric}_diff_mrmc_ci_high": high,
            f"{metric}_diff_mrmc_p": p,
        }
        out |= {"mrmc_readers": stat.n_readers, "mrmc_cases": stat.n_cases}
    return out


def _add_arm_bootstrap(
    entries: list[dict[str, Any]],
    u_matrix: ResponseMatrix,
    a_matrix: ResponseMatrix,
    unaided_pool: set[str],
    aided_members: npt.NDArray[np.bool_],
    params: ScoringParams,
) -> None:
    """Paired case bootstrap of aided minus unaided RadLE-A and RadLE-C: both arms
    (and both pools) see the same case resample, the one ``score_responses`` draws."""
    weights = case_weights_for(u_matrix.n_cases, params.n_boot, params.seed)
    readers = a_matrix.responders
    row_of = {name: i for i, name in enumerate(u_matrix.responders)}
    u_cats = np.stack(
        [
            u_matrix.categories[row_of[r]]
            if r in row_of
            else np.full(u_matrix.n_cases, MISSING, np.int8)
            for r in readers
        ]
    )
    u_boot = metrics_from_counts(responder_counts(u_cats, weights), params)
    a_boot = metrics_from_counts(responder_counts(a_matrix.categories, weights), params)
    u_index = np.flatnonzero([r in unaided_pool for r in u_matrix.responders])
    u_pool = pool_counts(case_contributions(u_matrix.categories[u_index]), weights)
    a_pool = pool_counts(case_contributions(a_matrix.categories[aided_members]), weights)
    up_boot = metrics_from_counts(u_pool, params)
    ap_boot = metrics_from_counts(a_pool, params)
    for metric in AID_METRICS:
        low, high = percentile_ci(a_boot[metric] - u_boot[metric])
        p_low, p_high = percentile_ci((ap_boot[metric] - up_boot[metric])[:, None])
        lows = [*low.tolist(), float(p_low[0])]
        highs = [*high.tolist(), float(p_high[0])]
        for entry, lo, hi in zip(entries, lows, highs, strict=True):
            entry[f"{metric}_diff_ci_low"], entry[f"{metric}_diff_ci_high"] = lo, hi


SWITCH_COLUMNS: Final = (
    "responder",
    "group",
    "case_id",
    "aid_run",
    "model_correct",
    "model_likert",
    "unaided_correct",
    "unaided_likert",
    "aided_correct",
    "aided_likert",
    "switch",
)
# (unaided correct, aided correct, model correct) -> what the aided step did
_SWITCH_NAMES: Final = {
    (True, False, False): "harmful",  # a right answer given up to a wrong model
    (False, True, True): "helpful",  # a wrong answer turned right by a right model
    (True, False, True): "lost",  # a right answer given up, the model was right too
    (False, True, False): "gained",  # turned right although the model was wrong
    (True, True, True): "kept_correct",
    (True, True, False): "kept_correct",
    (False, False, True): "kept_not_correct",
    (False, False, False): "kept_not_correct",
}


def switch_table(
    data: pd.DataFrame | Iterable[Mapping[str, Any]], *, case_ids: Sequence[str] | None = None
) -> pd.DataFrame:
    """One row per (reader, aided case): the model's, the unaided and the aided outcome
    and the ``switch`` (harmful, helpful, lost, gained, kept_correct, kept_not_correct);
    "correct" as in SCORING.md section 10. Empty (with the columns) without aided rows."""
    raw = data if isinstance(data, pd.DataFrame) else pd.DataFrame(list(data))
    unaided_raw, aided_raw = split_arms(raw)
    if len(aided_raw) == 0:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in SWITCH_COLUMNS})
    unaided_frame, aided_frame = validate_frame(unaided_raw), validate_frame(aided_raw)
    cases = (
        list(case_ids)
        if case_ids is not None
        else sorted({*unaided_frame["case_id"], *aided_frame["case_id"]})
    )
    u_matrix, a_matrix = build_matrix(unaided_frame, cases), build_matrix(aided_frame, cases)
    runs = _aid_run_matrix(aided_frame, aided_raw, a_matrix)
    cells = aid_cells(u_matrix, a_matrix, runs)
    mc, uc, ac = _correct(cells.model), _correct(cells.unaided), _correct(cells.aided)
    out = pd.DataFrame(
        {
            "responder": [a_matrix.responders[r] for r in cells.reader],
            "group": [a_matrix.groups[r] for r in cells.reader],
            "case_id": [cases[c] for c in cells.case],
            "aid_run": runs[cells.reader, cells.case],
            "model_correct": mc,
            "model_likert": pd.Series(_likert(cells.model)).astype("Int64"),
            "unaided_correct": uc,
            "unaided_likert": pd.Series(_likert(cells.unaided)).astype("Int64"),
            "aided_correct": ac,
            "aided_likert": pd.Series(_likert(cells.aided)).astype("Int64"),
            "switch": [
                _SWITCH_NAMES[(bool(u), bool(a), bool(m))]
                for u, a, m in zip(uc, ac, mc, strict=True)
            ],
        }
    )
    return out.sort_values(["responder", "case_id"], ignore_index=True)
