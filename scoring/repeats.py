"""Repeat runs: the same model asked the same exam N times (``run-model --repeats N``).

A tidy frame marks repeat runs with two optional columns, ``run_group`` (the
base run name the repeats share) and ``repeat`` (1..N); the responses export
writes them. Per group this gives each repeat's scores, their mean and sample
SD (ddof 1), and run-to-run agreement:

- ``outcome_kappa``: Fleiss' kappa over the repeats as raters and the cases as
  subjects, on correct / wrong / IDK (scoring/agreement.py; invalid, failure
  and missing cells are not ratings and leave the case's count);
- ``identical_share``: of the cases every repeat rated (correct, wrong or
  IDK), the share where all repeats gave the same outcome;
- ``likert_identical_share`` and ``likert_icc``: of the cases every repeat
  answered (so each has a 0-4 confidence), the share with the same Likert in
  every repeat, and ICC(2,1) of the (cases x repeats) Likert table
  (scoring/rubric_agreement.py's; NaN below two such cases).

Pure: no app import.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import pandas as pd

from scoring.agreement import fleiss_kappa, outcome_table
from scoring.categories import CORRECT_0, IDK, N_LEVELS, WRONG_0, FloatArray
from scoring.frame import FrameError, validate_frame
from scoring.points import IntArray, build_matrix
from scoring.rubric_agreement import icc_2_1

REPEAT_COLUMNS: Final = ("run_group", "repeat")
# the scores whose mean and SD over the repeats are reported
REPEAT_METRICS: Final = ("radle_c", "radle_a", "radle_r", "radle_s", "radle_h")


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, float) and np.isnan(value)) or not str(value).strip()


def repeat_members(raw: pd.DataFrame) -> dict[str, list[tuple[int, str]]]:
    """``run_group`` -> [(repeat, responder)] sorted by repeat, from the optional columns;
    empty when the frame has none. FrameError when a responder has two groups or
    repeats, or two responders claim one (group, repeat)."""
    if any(c not in raw.columns for c in REPEAT_COLUMNS) or len(raw) == 0:
        return {}
    seen: dict[str, tuple[str, int]] = {}
    for who, group, repeat in zip(raw["responder"], raw["run_group"], raw["repeat"], strict=True):
        if _blank(group) or _blank(repeat):
            continue
        try:
            index = int(float(str(repeat)))
        except ValueError:
            raise FrameError(f"repeat must be a whole number, got {repeat!r}") from None
        key = (str(group).strip(), index)
        name = str(who).strip()
        if seen.setdefault(name, key) != key:
            raise FrameError(f"responder {name!r} has more than one run_group / repeat")
    groups: dict[str, list[tuple[int, str]]] = {}
    for name, (group, index) in seen.items():
        groups.setdefault(group, []).append((index, name))
    for group, members in groups.items():
        indexes = [i for i, _ in members]
        if len(set(indexes)) != len(indexes):
            raise FrameError(f"run group {group!r} has two runs with the same repeat")
        members.sort()
    return dict(sorted(groups.items()))


def _outcomes(categories: IntArray) -> npt.NDArray[np.int64]:
    """Category codes -> 0 correct, 1 wrong, 2 IDK, -1 no rating."""
    out = np.full(categories.shape, -1, dtype=np.int64)
    out[(categories >= CORRECT_0) & (categories < CORRECT_0 + N_LEVELS)] = 0
    out[(categories >= WRONG_0) & (categories < WRONG_0 + N_LEVELS)] = 1
    out[categories == IDK] = 2
    return out


def _likerts(categories: IntArray) -> FloatArray:
    """Category codes -> the Likert 0..4 of an answer, NaN otherwise."""
    answered = categories < WRONG_0 + N_LEVELS
    return np.where(answered, (categories % N_LEVELS).astype(np.float64), np.nan)


def _share(flags: npt.NDArray[np.bool_], among: int) -> float:
    return float(flags.sum()) / among if among else float("nan")


def agreement(categories: IntArray) -> dict[str, float | int]:
    """Run-to-run agreement of a (repeats x cases) category array (see the module)."""
    outcomes = _outcomes(categories)
    rated = (outcomes >= 0).all(axis=0)
    same = rated & (outcomes == outcomes[:1]).all(axis=0)
    likert = _likerts(categories)
    answered = ~np.isnan(likert).any(axis=0)
    same_likert = answered & (likert == likert[:1]).all(axis=0)
    return {
        "n_repeats": int(categories.shape[0]),
        "outcome_kappa": fleiss_kappa(outcome_table(categories)),
        "cases_rated_by_all": int(rated.sum()),
        "identical_share": _share(same, int(rated.sum())),
        "cases_answered_by_all": int(answered.sum()),
        "likert_identical_share": _share(same_likert, int(answered.sum())),
        "likert_icc": icc_2_1(likert[:, answered].T) if answered.any() else float("nan"),
    }


def _mean_sd(values: Sequence[float]) -> tuple[float, float]:
    x = np.asarray(values, dtype=np.float64)
    x = x[~np.isnan(x)]
    mean = float(x.mean()) if len(x) else float("nan")
    sd = float(x.std(ddof=1)) if len(x) >= 2 else float("nan")
    return mean, sd


def repeat_groups(
    raw: pd.DataFrame,
    responder_rows: Sequence[Mapping[str, Any]],
    *,
    case_ids: Sequence[str] | None = None,
) -> list[dict[str, Any]]:
    """One entry per run group: its repeats with their scores (from ``responder_rows``,
    the ``responders`` of ``score_responses``' report), each metric's mean and SD, and
    the agreement. Empty when the frame marks no repeat runs."""
    groups = repeat_members(raw)
    if not groups:
        return []
    matrix = build_matrix(validate_frame(raw, require_verdicts=False), case_ids)
    index = {name: i for i, name in enumerate(matrix.responders)}
    rows = {str(r["responder"]): r for r in responder_rows}
    out = []
    for group, members in groups.items():
        names = [name for _, name in members if name in index]
        repeats = [
            {
                "repeat": repeat,
                "responder": name,
                **{m: rows.get(name, {}).get(m, float("nan")) for m in REPEAT_METRICS},
            }
            for repeat, name in members
            if name in index
        ]
        summary: dict[str, Any] = {}
        for metric in REPEAT_METRICS:
            mean, sd = _mean_sd([float(r[metric]) for r in repeats])
            summary[f"{metric}_mean"] = mean
            summary[f"{metric}_sd"] = sd
        cats = matrix.categories[[index[n] for n in names]]
        out.append({"run_group": group, "repeats": repeats, **summary, **agreement(cats)})
    return out
