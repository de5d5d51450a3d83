"""The tables behind the charts: each chart plots one of these, and offers it as CSV.

Everything is read from the leaderboard's scoring report (count vectors,
accuracy per Likert level, risk-coverage points), never recomputed here.
Pools carry weighted counts (each case weighs 1 split over its readers), so
profiles are shown as shares of N, which puts pools, readers and models on
one scale.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Final

import pandas as pd

from reader_app.analysis.leaderboard import (
    METRICS,
    Leaderboard,
    build_leaderboard,
    pool_name,
)
from reader_app.charts.series import GROUNDING_SERIES, OUTCOMES
from scoring import ScoringParams

if TYPE_CHECKING:
    from reader_app.analysis.data import StudyData

LEVELS: Final = (0, 1, 2, 3, 4)
THRESHOLDS: Final = (4, 3, 2, 1, 0)
TRAINEE_GROUP = re.compile(r"^(pgy\s*\d+|trainee|resident|registrar|fellow)$", re.IGNORECASE)


def _arms(board: Leaderboard, readers: bool) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(arm, name, scoring-report row) in leaderboard order."""
    pool = board.report["human_pool"]
    pools = {None: pool, **{g["group"]: g for g in pool.get("by_group", [])}}
    by_name = {r["responder"]: r for r in board.report["responders"]}
    for arm, name, responder, group in zip(
        board.table["arm"],
        board.table["name"],
        board.table["responder"],
        board.table["group"],
        strict=True,
    ):
        if arm == "reader" and not readers:
            continue
        if arm in ("pool", "group pool"):
            yield arm, name, pools[None if arm == "pool" else group]
        else:
            yield arm, name, by_name[responder]


def _f(value: Any) -> float:
    return math.nan if value is None else float(value)


def metric_bars(
    board: Leaderboard, metric: str = "radle_c", *, readers: bool = True
) -> pd.DataFrame:
    """One bar per arm with its 95% CI, and the pooled human value as the reference."""
    shown = board.arms(readers=readers)
    return pd.DataFrame(
        {
            "name": shown["name"],
            "arm": shown["arm"],
            "metric": metric,
            "value": shown[metric],
            "ci_low": shown[f"{metric}_ci_low"],
            "ci_high": shown[f"{metric}_ci_high"],
            "pool_value": _f(board.report["human_pool"].get(metric)),
        }
    ).reset_index(drop=True)


def response_profile(board: Leaderboard, *, readers: bool = True) -> pd.DataFrame:
    """Correct and wrong answers per Likert level, IDK, invalid, failure, missing; per arm."""
    rows = []
    for arm, name, row in _arms(board, readers):
        n = float(row["n_cases"]) or math.nan
        for order, (label, outcome, level) in enumerate(OUTCOMES):
            key = f"n_{outcome}" if level is None else f"n_{outcome}_l{level}"
            count = _f(row.get(key))
            rows.append(
                {
                    "name": name,
                    "arm": arm,
                    "segment": label,
                    "outcome": outcome,
                    "likert": level,
                    "count": count,
                    "share": count / n,
                    "order": order,
                }
            )
    frame = pd.DataFrame(rows)
    if not frame.empty:
        frame["likert"] = frame["likert"].astype("Int64")
    return frame


def reliability(board: Leaderboard, *, readers: bool = True) -> pd.DataFrame:
    """Accuracy at each Likert level (p = L/4 is perfect calibration), with the count behind it."""
    rows = []
    for arm, name, row in _arms(board, readers):
        for level in LEVELS:
            n = _f(row.get(f"n_correct_l{level}")) + _f(row.get(f"n_wrong_l{level}"))
            rows.append(
                {
                    "name": name,
                    "arm": arm,
                    "likert": level,
                    "stated": level / 4.0,
                    "accuracy": _f(row.get(f"accuracy_l{level}")),
                    "n": n,
                }
            )
    return pd.DataFrame(rows)


def risk_coverage(board: Leaderboard, *, readers: bool = True) -> pd.DataFrame:
    """Coverage and selective risk when answers below each Likert threshold are handed over."""
    rows = []
    for arm, name, row in _arms(board, readers):
        for t in THRESHOLDS:
            rows.append(
                {
                    "name": name,
                    "arm": arm,
                    "threshold": t,
                    "coverage": _f(row.get(f"rc_coverage_l{t}")),
                    "risk": _f(row.get(f"rc_risk_l{t}")),
                    "aurc": _f(row.get("aurc")),
                }
            )
    return pd.DataFrame(rows)


def accuracy_grounding(
    board: Leaderboard, *, readers: bool = True, text_only: Collection[str] = ()
) -> pd.DataFrame:
    """Accuracy (RadLE-A) against grounding rate G, with both 95% CIs, for the human
    pool, the readers and the model runs (group pools have no G). ``text_only`` names
    the runs sent no image (``ModelRun.no_images``): their own series. Empty when the
    study has no case with a reference region."""
    columns = ["name", "arm", "series", "text_only", "n_grounded"]
    for m in ("accuracy", "grounding_rate"):
        columns += [m, f"{m}_ci_low", f"{m}_ci_high"]
    if not board.has_grounding:
        return pd.DataFrame(columns=columns)
    shown = board.arms(readers=readers)
    shown = shown[shown["arm"] != "group pool"]
    only = set(text_only)
    rows = []
    for _, r in shown.iterrows():
        flag = r["arm"] == "model" and r["responder"] in only
        series = {"pool": "human pool", "reader": "reader"}.get(str(r["arm"]), "model run")
        rows.append(
            {
                "name": r["name"],
                "arm": r["arm"],
                "series": "model run · text only" if flag else series,
                "text_only": bool(flag),
                "n_grounded": len(board.grounded_case_ids),
                "accuracy": r["radle_a"],
                "accuracy_ci_low": r["radle_a_ci_low"],
                "accuracy_ci_high": r["radle_a_ci_high"],
                "grounding_rate": r["grounding_rate"],
                "grounding_rate_ci_low": r["grounding_rate_ci_low"],
                "grounding_rate_ci_high": r["grounding_rate_ci_high"],
            }
        )
    return pd.DataFrame(rows, columns=columns)


def seniority(group: Any) -> Any:
    """``PGY1``..``PGY8`` (and trainee/resident/registrar/fellow) -> ``trainees``."""
    if group is None or (isinstance(group, float) and math.isnan(group)):
        return group
    return "trainees" if TRAINEE_GROUP.match(str(group).strip()) else group


def group_split(
    frame: pd.DataFrame,
    case_ids: tuple[str, ...],
    params: ScoringParams,
    *,
    merge_trainees: bool = True,
) -> pd.DataFrame:
    """Every metric of each reader-group pool (trainees vs board-certified...), with CIs.

    With ``merge_trainees`` the training years are pooled as one ``trainees``
    group; the figures then come from a second scoring run on that grouping
    (same cases, same parameters, same seed).
    """
    data = frame.copy()
    if merge_trainees:
        humans = data["kind"] == "human"
        data.loc[humans, "group"] = data.loc[humans, "group"].map(seniority)
    return groups_from_board(build_leaderboard(data, case_ids, params))


def groups_from_board(board: Leaderboard) -> pd.DataFrame:
    """Every metric of the board's human pool and group pools, with CIs: one row each."""
    pools = board.table[board.table["arm"].isin(("pool", "group pool"))]
    rows = []
    for _, row in pools.iterrows():
        for m in METRICS:
            rows.append(
                {
                    "name": row["name"],
                    "group": row["group"] if row["arm"] == "group pool" else "all readers",
                    "n_readers": int(row["n_readers"]),
                    "metric": m,
                    "value": row[m],
                    "ci_low": row[f"{m}_ci_low"],
                    "ci_high": row[f"{m}_ci_high"],
                }
            )
    return pd.DataFrame(
        rows, columns=["name", "group", "n_readers", "metric", "value", "ci_low", "ci_high"]
    )


def merged_group_split(
    data: StudyData, cases: Sequence[str], params: ScoringParams
) -> pd.DataFrame:
    """The group split with training years as one "trainees" group: the readers alone
    scored again (a pool's bootstrap draws depend on the seed and the cases alone)."""
    humans = data.frame[data.frame["kind"] == "human"]
    return group_split(humans, tuple(cases), params, merge_trainees=True)


__all__ = [
    "GROUNDING_SERIES",
    "OUTCOMES",
    "accuracy_grounding",
    "group_split",
    "groups_from_board",
    "merged_group_split",
    "metric_bars",
    "pool_name",
    "reliability",
    "response_profile",
    "risk_coverage",
    "seniority",
]
