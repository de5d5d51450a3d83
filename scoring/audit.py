"""The causal grounding audit (SCORING.md section 9): does a correct answer need the image?

Input: one row per (arm, case) the arm holds, with ``correct`` (1, 0, or empty:
IDK, failures and missing answers count as not correct) and, for the
``original`` arm, ``likert``. A case an arm does not hold (``swap`` without a
same-label partner) simply has no row in that arm.

    acc_X  = correct in X / cases in X
    K      = cases correct in original
    keep_X = #(correct in X, within K) / #(K held by X)
    E      = keep_occlude_irrelevant - keep_occlude_relevant        occlusion effect
    S      = min(keep_occlude_irrelevant, keep_swap)                 stability
    T      = acc_original - acc_text_only over the cases both hold   text gap
    category: "unstable" if S < tau_stable, else "uses the image" if E >= tau_effect,
              else "ignores the image" (point estimates; "n/a" when S or E is NaN)

CIs are the paired case bootstrap of section 5: keep rates, E and S resample
K; accuracies and T resample the N_g cases; every arm on the same resample.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Final

import numpy as np
import pandas as pd

from scoring.bootstrap import CASE_STREAM, percentile_ci, resample_weights, rng_for
from scoring.categories import FloatArray
from scoring.frame import FrameError
from scoring.status import parse_flag

ARMS: Final = ("original", "occlude_relevant", "occlude_irrelevant", "swap", "text_only")
INTERVENED: Final = ("occlude_relevant", "occlude_irrelevant", "swap")
CATEGORIES: Final = ("uses the image", "ignores the image", "unstable", "n/a")
KEEP_STREAM: Final = 3  # the resample of K, independent of the N_g cases' stream


@dataclass(frozen=True)
class AuditParams:
    tau_effect: float = 0.2
    tau_stable: float = 0.8
    n_boot: int = 2000
    seed: int = 0
    ci_level: float = 0.95

    def __post_init__(self) -> None:
        if self.n_boot < 0:
            raise ValueError(f"n_boot must be >= 0, got {self.n_boot}")
        if not 0 < self.ci_level < 1:
            raise ValueError(f"ci_level must lie in (0, 1), got {self.ci_level}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _ratio(num: FloatArray, den: FloatArray) -> FloatArray:
    with np.errstate(divide="ignore", invalid="ignore"):
        out: FloatArray = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
    return out


def category_of(effect: float, stability: float, params: AuditParams | None = None) -> str:
    """The audit's verdict on the point estimates; ``n/a`` when either is undefined."""
    params = params or AuditParams()
    if math.isnan(effect) or math.isnan(stability):
        return "n/a"
    if stability < params.tau_stable:
        return "unstable"
    return "uses the image" if effect >= params.tau_effect else "ignores the image"


@dataclass(frozen=True)
class _Vectors:
    """Per case (N_g, in ``cases`` order): which arms hold it, and which are correct."""

    cases: tuple[str, ...]
    held: dict[str, FloatArray]
    correct: dict[str, FloatArray]
    likert: FloatArray  # the original arm's Likert, NaN when none


def _vectors(frame: pd.DataFrame, cases: Sequence[str]) -> _Vectors:
    for column in ("arm", "case_id", "correct"):
        if column not in frame.columns:
            raise FrameError(f"the audit frame needs a `{column}` column")
    unknown = sorted(set(frame["arm"].astype(str)) - set(ARMS))
    if unknown:
        raise FrameError(f"unknown arm(s) {unknown}; the arms are {list(ARMS)}")
    index = {c: i for i, c in enumerate(cases)}
    stray = sorted(set(frame["case_id"].astype(str)) - set(index))
    if stray:
        raise FrameError(f"rows for case(s) outside the audited set: {stray[:20]}")
    n = len(cases)
    held = {arm: np.zeros(n) for arm in ARMS}
    correct = {arm: np.zeros(n) for arm in ARMS}
    likert = np.full(n, np.nan)
    seen: set[tuple[str, str]] = set()
    for row in frame.itertuples(index=False):
        arm, case = str(row.arm), str(row.case_id)
        if (arm, case) in seen:
            raise FrameError(f"two rows for case {case!r} in arm {arm!r}")
        seen.add((arm, case))
        i = index[case]
        held[arm][i] = 1.0
        try:
            flag = parse_flag(row.correct)
        except ValueError as exc:
            raise FrameError(f"case {case!r}, arm {arm!r}: `correct` {exc}") from exc
        correct[arm][i] = 1.0 if flag is True else 0.0
        value = getattr(row, "likert", None)
        if arm == "original" and value is not None and not pd.isna(value):
            likert[i] = float(value)
    return _Vectors(tuple(cases), held, correct, likert)


def _figures(v: _Vectors, w_cases: FloatArray, w_keep: FloatArray) -> dict[str, FloatArray]:
    """Every figure on (B x N_g) case weights and (B x N_g) weights over K (any leading shape)."""
    out: dict[str, FloatArray] = {}
    for arm in ARMS:
        h, c = v.held[arm], v.correct[arm]
        out[f"acc_{arm}"] = _ratio(w_cases @ (h * c), w_cases @ h)
    k = v.correct["original"] * v.held["original"]
    for arm in INTERVENED:
        h, c = v.held[arm] * k, v.correct[arm]
        out[f"keep_{arm}"] = _ratio(w_keep @ (h * c), w_keep @ h)
    out["occlusion_effect"] = out["keep_occlude_irrelevant"] - out["keep_occlude_relevant"]
    with np.errstate(invalid="ignore"):
        out["stability"] = np.fmin(out["keep_occlude_irrelevant"], out["keep_swap"])
        both_nan = np.isnan(out["keep_occlude_irrelevant"]) | np.isnan(out["keep_swap"])
        out["stability"] = np.where(both_nan, np.nan, out["stability"])
    both = v.held["original"] * v.held["text_only"]
    out["text_gap"] = _ratio(w_cases @ (both * v.correct["original"]), w_cases @ both) - _ratio(
        w_cases @ (both * v.correct["text_only"]), w_cases @ both
    )
    return out


def _keep_weights(k_index: np.ndarray, n_cases: int, n_boot: int, seed: int) -> FloatArray:
    """A with-replacement resample of K's cases, as (B x N_g) multiplicities (0 off K)."""
    out = np.zeros((n_boot, n_cases))
    out[:, k_index] = resample_weights(len(k_index), n_boot, rng_for(seed, KEEP_STREAM))
    return out


def _mean(values: FloatArray) -> float:
    finite = values[~np.isnan(values)]
    return float(finite.mean()) if finite.size else math.nan


def audit_report(
    data: pd.DataFrame | Iterable[Mapping[str, Any]],
    cases: Sequence[str],
    params: AuditParams | None = None,
) -> dict[str, Any]:
    """The audit of one model over the N_g ``cases`` (those with a reference region).

    Returns ``cases``, ``arms`` (each ``n``, ``correct``, ``accuracy`` with CI),
    ``keep`` (per intervened arm: ``n``, ``kept``, ``value``, CI), ``occlusion_effect``,
    ``stability``, ``text_gap`` (each ``value`` and ``ci``), ``category``,
    ``confidence`` and ``params``. NaN where a figure is undefined.
    """
    params = params or AuditParams()
    frame = data if isinstance(data, pd.DataFrame) else pd.DataFrame(list(data))
    if len(set(cases)) != len(cases):
        raise FrameError("the audited case list repeats a case")
    v = _vectors(frame, [str(c) for c in cases])
    n = len(v.cases)
    ones = np.ones(n)
    point = {name: float(value) for name, value in _figures(v, ones, ones).items()}
    ci: dict[str, tuple[float, float]] = {name: (math.nan, math.nan) for name in point}
    k = v.correct["original"] * v.held["original"]
    if params.n_boot > 0 and n > 0:
        w_cases = resample_weights(n, params.n_boot, rng_for(params.seed, CASE_STREAM))
        w_keep = _keep_weights(np.flatnonzero(k), n, params.n_boot, params.seed)
        boot = _figures(v, w_cases, w_keep)
        for name, samples in boot.items():
            low, high = percentile_ci(samples[:, None], params.ci_level)
            ci[name] = (float(low[0]), float(high[0]))
    arms = {
        arm: {
            "n": int(v.held[arm].sum()),
            "correct": int((v.held[arm] * v.correct[arm]).sum()),
            "accuracy": point[f"acc_{arm}"],
            "ci": list(ci[f"acc_{arm}"]),
        }
        for arm in ARMS
    }
    keep = {
        arm: {
            "n": int((v.held[arm] * k).sum()),
            "kept": int((v.held[arm] * k * v.correct[arm]).sum()),
            "value": point[f"keep_{arm}"],
            "ci": list(ci[f"keep_{arm}"]),
        }
        for arm in INTERVENED
    }
    stays = k * v.held["occlude_relevant"] * v.correct["occlude_relevant"]
    needs = k * v.held["occlude_relevant"] * (1 - v.correct["occlude_relevant"])
    effect, stability = point["occlusion_effect"], point["stability"]
    return {
        "cases": n,
        "k": int(k.sum()),
        "arms": arms,
        "keep": keep,
        "occlusion_effect": {"value": effect, "ci": list(ci["occlusion_effect"])},
        "stability": {"value": stability, "ci": list(ci["stability"])},
        "text_gap": {"value": point["text_gap"], "ci": list(ci["text_gap"])},
        "category": category_of(effect, stability, params),
        "confidence": {
            "not_image_dependent": {
                "n": int(stays.sum()),
                "mean_likert": _mean(np.where(stays > 0, v.likert, np.nan)),
            },
            "image_dependent": {
                "n": int(needs.sum()),
                "mean_likert": _mean(np.where(needs > 0, v.likert, np.nan)),
            },
        },
        "params": params.to_dict(),
    }
