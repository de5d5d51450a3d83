"""The leaderboard: the human pool, its group pools, every reader and every model run.

All numbers come from one call of ``scoring.score_responses`` (the function
behind ``readerstudy score``) on the study's tidy frame, so the page, the
report and the command line agree to the last digit for the same data,
case set and parameters. This module only arranges the report dict in rows.

When the study has cases with a reference region, ``scoring.grounding_report``
runs on the same frame, cases and parameters (so on the same bootstrap
resamples) and every arm gains G, GA and U with their CIs (SCORING.md section
8); the report dict carries it as ``report["grounding"]``, as the score JSON
does. Group pools have no grounding figures (n/a).

Model runs with a cohort (``ModelRun.cohort``: frontier, open-weight, medical,
RadLE's access/domain) carry it, and each cohort gets a pooled row beside the
human pool (``cohort_table``; the score JSON's ``cohort_pools``). ``arms``
filters by cohort; the charts, which take ``arms()`` without cohort pools, are
unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import pandas as pd

from scoring import (
    GROUNDING_METRICS,
    SCORING_SPEC_VERSION,
    ScoringParams,
    grounding_report,
    score_responses,
)

METRICS: Final = ("radle_c", "radle_a", "radle_r", "radle_s", "radle_h")
LABELS: Final = {
    "radle_c": "RadLE-C",
    "radle_a": "A (accuracy)",
    "radle_r": "R (reliability)",
    "radle_s": "S (safety)",
    "radle_h": "H (handover)",
}
SHORT: Final = {"radle_c": "C", "radle_a": "A", "radle_r": "R", "radle_s": "S", "radle_h": "H"}
DIGITS: Final = {"radle_c": 1, "radle_a": 3, "radle_r": 3, "radle_s": 1, "radle_h": 1}
ARMS: Final = ("pool", "group pool", "cohort pool", "model", "reader")
POOL_LABEL: Final = "Human pool"
GROUNDING_LABELS: Final = {
    "grounding_rate": "G (grounding rate)",
    "grounded_accuracy": "GA (grounded accuracy)",
    "ungrounded_correct_share": "U (ungrounded correct share)",
}
GROUNDING_SHORT: Final = {
    "grounding_rate": "G",
    "grounded_accuracy": "GA",
    "ungrounded_correct_share": "U",
}


@dataclass(frozen=True)
class Leaderboard:
    report: dict[str, Any]  # what score_responses returned
    table: pd.DataFrame  # one row per arm: pool, group pools, models, readers
    differences: pd.DataFrame  # one row per model run: model minus pool
    params: ScoringParams
    case_ids: tuple[str, ...]
    notes: list[str] = field(default_factory=list)
    grounded_case_ids: tuple[str, ...] = ()  # the scored cases with a reference region
    # one row per cohort of model runs, pooled (table's columns); empty without cohorts
    cohort_table: pd.DataFrame = field(default_factory=pd.DataFrame)
    # one row per model run: model minus pool with readers and cases random (scoring.mrmc)
    mrmc: pd.DataFrame = field(default_factory=pd.DataFrame)

    @property
    def cohorts(self) -> tuple[str, ...]:
        """The model runs' cohorts, sorted (none: no run has one)."""
        found = {r.get("cohort") for r in self.report["responders"] if r["kind"] == "model"}
        return tuple(sorted(c for c in found if c))

    @property
    def has_grounding(self) -> bool:
        """Whether G, GA and U were scored (some scored case carries a reference region)."""
        return "grounding" in self.report

    @property
    def spec_version(self) -> str:
        return SCORING_SPEC_VERSION

    @property
    def pool_value(self) -> float:
        """The pooled human RadLE-C (NaN when no reader is in the pool)."""
        return float(self.report["human_pool"].get("radle_c", math.nan))

    def arms(
        self, *, readers: bool = True, cohort: str | None = None, cohort_pools: bool = False
    ) -> pd.DataFrame:
        """The table's rows (without readers if asked); the grounding columns only when
        grounding was scored, so a study without regions exports none. With
        ``cohort_pools`` the cohort pools follow the human pools; with ``cohort`` only
        that cohort's runs (and pool) are shown beside the human pools and readers."""
        shown = self.table
        if cohort_pools and len(self.cohort_table):
            pools = shown["arm"].isin(("pool", "group pool"))
            shown = pd.concat([shown[pools], self.cohort_table, shown[~pools]], ignore_index=True)
        if not readers:
            shown = shown[shown["arm"] != "reader"]
        if cohort is not None:
            keep = ~shown["arm"].isin(("model", "cohort pool")) | (shown["cohort"] == cohort)
            shown = shown[keep]
        if self.has_grounding:
            return shown
        return shown.drop(columns=[c for c in shown.columns if c.startswith(GROUNDING_METRICS)])


def pool_name(group: str | None) -> str:
    return POOL_LABEL if group is None else f"Pool: {group}"


def _metric_cells(row: dict[str, Any], grounding: dict[str, Any] | None = None) -> dict[str, float]:
    out: dict[str, float] = {}
    for m in GROUNDING_METRICS:
        g = grounding or {}
        out[m] = _num(g.get(m))
        out[f"{m}_ci_low"] = _num(g.get(f"{m}_ci_low"))
        out[f"{m}_ci_high"] = _num(g.get(f"{m}_ci_high"))
    for m in METRICS:
        out[m] = _num(row.get(m))
        out[f"{m}_ci_low"] = _num(row.get(f"{m}_ci_low"))
        out[f"{m}_ci_high"] = _num(row.get(f"{m}_ci_high"))
    return out


def _num(value: Any) -> float:
    return math.nan if value is None else float(value)


def _grounding_of(report: dict[str, Any], responder: str | None) -> dict[str, Any] | None:
    """A responder's grounding row (``None``: the overall pool's), if grounding was scored."""
    grounding = report.get("grounding")
    if not grounding:
        return None
    if responder is None:
        pool: dict[str, Any] = grounding["human_pool"]
        return pool
    return next((r for r in grounding["responders"] if r["responder"] == responder), None)


def _pool_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    pool = report["human_pool"]
    rows = []
    for arm, row in [("pool", pool), *(("group pool", g) for g in pool.get("by_group", []))]:
        if not row.get("n_readers"):
            continue
        rows.append(
            {
                "arm": arm,
                "name": pool_name(row.get("group")),
                "responder": "human_pool",
                "group": row.get("group"),
                "cohort": None,
                "n_cases": int(row["n_cases"]),
                "n_readers": int(row["n_readers"]),
                "completion": math.nan,
                "in_pool": True,
                **_metric_cells(row, _grounding_of(report, None) if arm == "pool" else None),
            }
        )
    return rows


def cohort_name(cohort: str) -> str:
    return f"Cohort: {cohort}"


def _cohort_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The pooled model runs of each cohort (no grounding figures: n/a)."""
    return [
        {
            "arm": "cohort pool",
            "name": cohort_name(str(row["cohort"])),
            "responder": "cohort_pool",
            "group": None,
            "cohort": row["cohort"],
            "n_cases": int(row["n_cases"]),
            "n_readers": int(row["n_runs"]),  # the pooled runs
            "completion": math.nan,
            "in_pool": False,
            **_metric_cells(row),
        }
        for row in report.get("cohort_pools", [])
    ]


def _responder_rows(report: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    arm = "model" if kind == "model" else "reader"
    rows = [
        {
            "arm": arm,
            "name": r["responder"],
            "responder": r["responder"],
            "group": r.get("group"),
            "cohort": r.get("cohort"),
            "n_cases": int(r["n_cases"]),
            "n_readers": 1 if kind == "human" else 0,
            "completion": float(r["completion"]),
            "in_pool": bool(r.get("in_pool", False)),
            **_metric_cells(r, _grounding_of(report, r["responder"])),
        }
        for r in report["responders"]
        if r["kind"] == kind
    ]
    return sorted(rows, key=lambda r: (-_sortable(r["radle_c"]), r["name"]))


def _sortable(value: float) -> float:
    return -math.inf if math.isnan(value) else value


def _differences(report: dict[str, Any]) -> pd.DataFrame:
    rows = []
    for r in report["responders"]:
        if r["kind"] != "model" or "radle_c_diff_vs_pool" not in r:
            continue
        row: dict[str, Any] = {
            "name": r["responder"],
            "group": r.get("group"),
            "cohort": r.get("cohort"),
        }
        for m in METRICS:
            row[f"{m}_diff"] = _num(r.get(f"{m}_diff_vs_pool"))
            row[f"{m}_diff_ci_low"] = _num(r.get(f"{m}_diff_vs_pool_ci_low"))
            row[f"{m}_diff_ci_high"] = _num(r.get(f"{m}_diff_vs_pool_ci_high"))
        row["perm_p"] = _num(r.get("perm_p_vs_pool"))
        g = _grounding_of(report, r["responder"]) or {}
        row["grounding_rate_diff"] = _num(g.get("grounding_rate_diff_vs_pool"))
        row["grounding_rate_diff_ci_low"] = _num(g.get("grounding_rate_diff_vs_pool_ci_low"))
        row["grounding_rate_diff_ci_high"] = _num(g.get("grounding_rate_diff_vs_pool_ci_high"))
        row["grounding_perm_p"] = _num(g.get("grounding_rate_perm_p_vs_pool"))
        rows.append(row)
    columns = ["name", "group", "cohort"]
    for m in METRICS:
        columns += [f"{m}_diff", f"{m}_diff_ci_low", f"{m}_diff_ci_high"]
    columns += ["perm_p", "grounding_rate_diff", "grounding_rate_diff_ci_low"]
    columns += ["grounding_rate_diff_ci_high", "grounding_perm_p"]
    out = pd.DataFrame(rows, columns=columns)
    out["group"] = pd.Series([r["group"] for r in rows], index=out.index, dtype=object)
    out["cohort"] = pd.Series([r["cohort"] for r in rows], index=out.index, dtype=object)
    return out


MRMC_METRICS_SHOWN: Final = ("radle_c", "radle_a")
MRMC_FIGURES: Final = ("diff", "mrmc_ci_low", "mrmc_ci_high", "mrmc_p", "mrmc_se")


def _mrmc(report: dict[str, Any]) -> pd.DataFrame:
    """The report's ``comparisons`` as one row per model run: ``radle_c_diff``,
    ``radle_c_mrmc_ci_low`` ... ``radle_a_mrmc_se``."""
    rows: dict[str, dict[str, Any]] = {}
    for entry in report.get("comparisons", []):
        if entry["metric"] not in MRMC_METRICS_SHOWN:
            continue
        row = rows.setdefault(entry["model"], {"name": entry["model"]})
        for key in MRMC_FIGURES:
            row[f"{entry['metric']}_{key}"] = _num(entry.get(key))
    columns = ["name", *(f"{m}_{k}" for m in MRMC_METRICS_SHOWN for k in MRMC_FIGURES)]
    return pd.DataFrame(list(rows.values()), columns=columns)


def _p_text(p: float) -> str:
    return "n/a" if math.isnan(p) else ("< 0.0001" if p < 0.0001 else f"{p:.4f}")


def display_mrmc(board: Leaderboard) -> pd.DataFrame:
    """Model minus pool with readers and cases random: ``Δ C [95% CI]`` and its p, the same
    for A, one row per model run (empty without model runs)."""
    d = board.mrmc
    out = pd.DataFrame({"model run": d["name"] if len(d) else []})
    for m in MRMC_METRICS_SHOWN:
        out[f"Δ {SHORT[m]}"] = [
            fmt(v, DIGITS[m], lo, hi)
            for v, lo, hi in zip(
                d[f"{m}_diff"], d[f"{m}_mrmc_ci_low"], d[f"{m}_mrmc_ci_high"], strict=True
            )
        ]
        out[f"p ({SHORT[m]})"] = [_p_text(p) for p in d[f"{m}_mrmc_p"]]
    return out.reset_index(drop=True)


def _notes(report: dict[str, Any], params: ScoringParams, n_cases: int) -> list[str]:
    pool = report["human_pool"]
    humans = [r for r in report["responders"] if r["kind"] == "human"]
    models = [r for r in report["responders"] if r["kind"] == "model"]
    notes = []
    if not humans:
        notes.append("No human reader has answered yet: there is no human baseline.")
    elif not pool.get("n_readers"):
        notes.append(
            f"No reader has completed {params.min_completion:.0%} of the {n_cases} cases, so "
            "the human pool is empty. Lower the pool's completion threshold to include "
            "partial readers."
        )
    elif pool["n_readers"] == 1:
        notes.append("The pool has one reader: its figures are that reader's.")
    if pool.get("excluded_readers"):
        notes.append(
            f"{len(pool['excluded_readers'])} reader(s) below the completion threshold "
            f"({params.min_completion:.0%}) are shown but not pooled: "
            + ", ".join(pool["excluded_readers"])
        )
    if not models:
        notes.append("No model runs yet: there is nothing to compare with the pool.")
    if params.n_boot == 0:
        notes.append("The bootstrap is off (B = 0): no confidence intervals or p-values.")
    return notes


def on_cases(frame: pd.DataFrame, case_ids: Sequence[str]) -> pd.DataFrame:
    """Rows on the scored cases only (scoring would drop the others; here an ungraded
    answer on a case left out must not stop the scoring of the rest)."""
    return frame[frame["case_id"].isin(set(case_ids))]


def build_leaderboard(
    frame: pd.DataFrame,
    case_ids: Sequence[str],
    params: ScoringParams,
    grounded_case_ids: Sequence[str] = (),
) -> Leaderboard:
    """Score the frame on ``case_ids`` and arrange it as the leaderboard; with
    ``grounded_case_ids`` (and the frame's ``hit`` column), grounding too."""
    cases = tuple(case_ids)
    scored = on_cases(frame, cases)
    report = score_responses(scored, params, case_ids=list(cases))
    grounded = tuple(c for c in grounded_case_ids if c in set(cases))
    if grounded and "hit" in frame.columns:
        report["grounding"] = grounding_report(scored, grounded, params, case_ids=list(cases))
    rows = [
        *_pool_rows(report),
        *_responder_rows(report, "model"),
        *_responder_rows(report, "human"),
    ]
    seen: set[str] = set()
    for row in rows:  # a reader code may equal a run name: keep chart labels unique
        if row["name"] in seen:
            row["name"] = f"{row['name']} ({row['arm']})"
        seen.add(row["name"])
    columns = ["arm", "name", "responder", "group", "cohort", "n_cases", "n_readers"]
    columns += ["completion", "in_pool"]
    columns += [k for m in METRICS for k in (m, f"{m}_ci_low", f"{m}_ci_high")]
    columns += [k for m in GROUNDING_METRICS for k in (m, f"{m}_ci_low", f"{m}_ci_high")]

    def frame_of(rows: list[dict[str, Any]]) -> pd.DataFrame:
        out = pd.DataFrame(rows, columns=columns)
        for text in ("group", "cohort"):
            out[text] = pd.Series([r[text] for r in rows], index=out.index, dtype=object)
        return out

    table = frame_of(rows)
    return Leaderboard(
        report=report,
        table=table,
        differences=_differences(report),
        params=params,
        case_ids=cases,
        notes=_notes(report, params, len(cases)),
        grounded_case_ids=grounded if "grounding" in report else (),
        cohort_table=frame_of(_cohort_rows(report)),
        mrmc=_mrmc(report),
    )


def column_label(metric: str) -> str:
    """A metric's short column header: RadLE-C, A, R, S, H, G, GA, U."""
    return "RadLE-C" if metric == "radle_c" else {**SHORT, **GROUNDING_SHORT}[metric]


def fixed(value: float, digits: int) -> str:
    """``value`` with ``digits`` decimals; what rounds to zero prints as 0, never -0."""
    text = f"{value:.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def fmt(value: float, digits: int, low: float = math.nan, high: float = math.nan) -> str:
    """``1234.5 [1100.2, 1300.0]``; ``n/a`` for an undefined value (e.g. R with nothing at L>=3)."""
    if value is None or math.isnan(value):
        return "n/a"
    text = fixed(value, digits)
    if not (math.isnan(low) or math.isnan(high)):
        text += f" [{fixed(low, digits)}, {fixed(high, digits)}]"
    return text


def display_table(
    board: Leaderboard, *, readers: bool = True, cohort: str | None = None
) -> pd.DataFrame:
    """The leaderboard as text cells, ``value [95% CI]``, for a page or the report
    (columns RadLE-C, A accuracy, R reliability, S safety, H handover readiness); the
    cohort pools follow the human pools, and a ``cohort`` column appears with cohorts."""
    shown = board.arms(readers=readers, cohort=cohort, cohort_pools=True)
    out = pd.DataFrame(
        {
            "arm": shown["arm"],
            "name": shown["name"],
            "group": shown["group"].fillna(""),
            **({"cohort": shown["cohort"].fillna("")} if board.cohorts else {}),
            "N": shown["n_cases"],
            "readers": [
                str(n) if a in ("pool", "group pool", "cohort pool") else ""
                for a, n in zip(shown["arm"], shown["n_readers"], strict=True)
            ],
            "completion": ["" if math.isnan(c) else f"{c:.0%}" for c in shown["completion"]],
        }
    )
    metrics = [*METRICS, *(GROUNDING_METRICS if board.has_grounding else ())]
    for m in metrics:
        out[column_label(m)] = [
            fmt(v, DIGITS.get(m, 3), lo, hi)
            for v, lo, hi in zip(shown[m], shown[f"{m}_ci_low"], shown[f"{m}_ci_high"], strict=True)
        ]
    return out.reset_index(drop=True)


def display_differences(board: Leaderboard) -> pd.DataFrame:
    d = board.differences
    out = pd.DataFrame({"model run": d["name"]})
    for m in METRICS:
        out[f"Δ {SHORT[m]}"] = [
            fmt(v, DIGITS[m], lo, hi)
            for v, lo, hi in zip(
                d[f"{m}_diff"], d[f"{m}_diff_ci_low"], d[f"{m}_diff_ci_high"], strict=True
            )
        ]
    out["p (sign-flip, points)"] = ["n/a" if math.isnan(p) else f"{p:.4f}" for p in d["perm_p"]]
    if board.has_grounding:
        out["Δ G"] = [
            fmt(v, 3, lo, hi)
            for v, lo, hi in zip(
                d["grounding_rate_diff"],
                d["grounding_rate_diff_ci_low"],
                d["grounding_rate_diff_ci_high"],
                strict=True,
            )
        ]
        out["p (sign-flip, hits)"] = [
            "n/a" if math.isnan(p) else f"{p:.4f}" for p in d["grounding_perm_p"]
        ]
    return out.reset_index(drop=True)
