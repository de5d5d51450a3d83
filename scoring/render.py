"""Turn a report dict into JSON-safe data, a flat table (CSV) or text."""

from __future__ import annotations

import json
import math
from typing import Any, Final

import numpy as np
import pandas as pd

from scoring.score import COHORT_POOL_NAME, POOL_NAME

TABLE_COLUMNS: Final = (
    ("responder", "responder"),
    ("kind", "kind"),
    ("group", "group"),
    ("cohort", "cohort"),
    ("n_cases", "N"),
    ("radle_c", "RadLE-C"),
    ("radle_a", "A"),
    ("radle_r", "R"),
    ("radle_s", "S"),
    ("radle_h", "H"),
    ("idk_rate", "IDK"),
)
_NESTED: Final = ("by_group", "readers", "runs", "excluded_readers")
GROUNDING_TABLE_COLUMNS: Final = (
    ("grounding_rate", "G"),
    ("grounded_accuracy", "GA"),
    ("ungrounded_correct_share", "U"),
)
_WHO: Final = ("responder", "kind", "group", "cohort")
_GROUNDING_KEYS: Final = tuple(k for k, _ in GROUNDING_TABLE_COLUMNS)


def to_jsonable(value: Any) -> Any:
    """NaN and inf become None (JSON null); numpy scalars become Python ones."""
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def report_json(report: dict[str, Any], indent: int | None = 2) -> str:
    """Strict JSON (no NaN tokens) of a report."""
    return json.dumps(to_jsonable(report), indent=indent, allow_nan=False)


def report_frame(report: dict[str, Any]) -> pd.DataFrame:
    """One row per responder, then the overall pool, one row per group pool and one
    per cohort pool.

    Pool rows have responder ``human_pool`` and kind ``pool``; the overall
    pool has an empty group. Cohort pools have responder ``cohort_pool``, kind
    ``cohort`` and their cohort. Every row carries the parameters as columns.
    """
    rows = _rows_with_grounding(report)
    flat = []
    for row in rows:
        out = {k: v for k, v in row.items() if k not in _NESTED}
        for nested in ("readers", "runs"):
            if nested in row:
                out[nested] = "|".join(row[nested])
        flat.append(out)
    frame = pd.DataFrame(flat)
    for key, value in report["params"].items():
        frame[f"param_{key}"] = value
    return frame


def format_table(report: dict[str, Any]) -> str:
    """A fixed-width text table of the headline metrics, with CIs when present."""
    pool = report["human_pool"]
    rows = _rows_with_grounding(report)
    # a cohort column only when some run has a cohort (an empty one would read as a gap)
    hidden = set() if any(row.get("cohort") for row in rows) else {"cohort"}
    columns = tuple(c for c in TABLE_COLUMNS if c[0] not in hidden) + (
        GROUNDING_TABLE_COLUMNS if "grounding" in report else ()
    )
    header = [label for _, label in columns]
    body = [[_cell(row, key) for key, _ in columns] for row in rows]
    widths = [
        max(len(h), *(len(r[i]) for r in body)) if body else len(h) for i, h in enumerate(header)
    ]
    lines = [
        "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)),
        "  ".join("-" * w for w in widths),
    ]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in body]
    params = report["params"]
    notes = [
        f"pool: {pool.get('n_readers', 0)} reader(s) with completion >= {params['min_completion']}",
        "R is n/a when nothing was answered at Likert >= tau_high; [a, b] = 95% bootstrap CI",
        *(
            [
                f"grounding over {report['grounding']['human_pool']['n_grounded']} case(s) with "
                "a reference region: G rate, GA grounded accuracy, U ungrounded correct share"
            ]
            if "grounding" in report
            else []
        ),
        "params: " + ", ".join(f"{k}={v}" for k, v in params.items()),
    ]
    return "\n".join([*lines, "", *notes])


def _rows_with_grounding(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Responders, the pool and its group pools; with a ``grounding`` section (from
    ``scoring.grounding.grounding_report``), each responder and the overall pool
    carry its figures too (group pools have none)."""
    pool = report["human_pool"]
    rows = [*report["responders"], pool, *pool.get("by_group", []), *report.get("cohort_pools", [])]
    aided_pool = report.get("aided_pool")  # AI-aided arm (scoring/aid.py)
    if aided_pool:
        rows += [aided_pool, *aided_pool.get("by_group", [])]
    grounding = report.get("grounding")
    if not grounding:
        return rows
    extra = {r["responder"]: r for r in grounding["responders"]}
    out = []
    for row in rows:
        found = grounding["human_pool"] if row is pool else extra.get(row["responder"])
        if row["kind"] in ("pool", "cohort") and row is not pool:
            found = None
        more = {k: v for k, v in (found or {}).items() if k not in (*_WHO, "n_readers")}
        out.append({**row, **more})
    return out


def _cell(row: dict[str, Any], key: str) -> str:
    value = row.get(key)
    if key == "responder" and value == POOL_NAME and row.get("group"):
        return f"{POOL_NAME}[{row['group']}]"
    if key == "responder" and value == COHORT_POOL_NAME and row.get("cohort"):
        return f"{COHORT_POOL_NAME}[{row['cohort']}]"
    if value is None:
        return "" if key in ("group", "cohort") else "n/a"
    if isinstance(value, float):
        if math.isnan(value):
            return "n/a"
        digits = 3 if key in ("radle_a", "radle_r", "idk_rate", *_GROUNDING_KEYS) else 1
        text = f"{value:.{digits}f}"
        low, high = row.get(f"{key}_ci_low"), row.get(f"{key}_ci_high")
        if isinstance(low, float) and isinstance(high, float) and math.isfinite(low):
            text += f" [{low:.{digits}f}, {high:.{digits}f}]"
        return text
    return str(value)
