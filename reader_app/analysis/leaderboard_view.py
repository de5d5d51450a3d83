"""The leaderboard as one compact HTML table: every RadLE metric of every arm in view.

Thirty-odd arms and five metrics with their CIs do not fit a grid of one-line
cells at 1440 px, so each metric cell holds the value on the first line and the
95% CI, smaller, on the second. The header stays on top while the box scrolls;
the box has room for 30 rows. Rows are sorted by RadLE-C (best first, undefined
values last) unless asked otherwise, and every arm carries its kind's colour
(the same as in the charts) as a bar on its left edge. A study with reference
regions adds G, GA and U (grounding, SCORING.md section 8) after H; group
pools have none (n/a). Model runs with a cohort show it under their name, each
cohort's pooled runs follow the human pools, and ``cohort`` narrows the table
to one cohort's runs beside the human arms.

Every piece of text from users (reader codes, run names, groups) is escaped.
No Streamlit here: the page passes the string to ``st.html``.
"""

from __future__ import annotations

import math
from html import escape
from typing import Final

import pandas as pd

from reader_app.analysis.leaderboard import (
    DIGITS,
    GROUNDING_LABELS,
    LABELS,
    METRICS,
    Leaderboard,
    column_label,
)
from scoring import GROUNDING_METRICS

ARM_COLORS: Final = {  # the charts use the same families (reader_app/charts/palette.py)
    "pool": "#08306b",
    "group pool": "#4a7fbf",
    "cohort pool": "#a63603",
    "model": "#d95f02",
    "reader": "#6baed6",
}
ARM_LABEL: Final = {
    "pool": "human pool",
    "group pool": "group pool",
    "cohort pool": "cohort pool",
    "model": "model run",
    "reader": "reader",
}
SORTS: Final = {
    **{m: LABELS[m] for m in METRICS},
    "arm": "kind (pools, models, readers)",
    "name": "name",
}
ROWS_IN_VIEW: Final = 30
ROW_PX: Final = 33

EDGES: Final = "\n".join(
    f".rs-lb tr.{k.replace(' ', '-')} td:first-child "
    f"{{ box-shadow: inset {6 if k == 'pool' else 4}px 0 0 {c}; }}"
    for k, c in ARM_COLORS.items()
)
CSS: Final = f"""
<style>
.rs-lb {{ max-height: {ROWS_IN_VIEW * ROW_PX + 40}px; overflow: auto; border: 1px solid #ddd;
  border-radius: 6px; max-width: 100%; }}
.rs-lb table {{ border-collapse: separate; border-spacing: 0; width: 100%; font-size: 13px;
  font-variant-numeric: tabular-nums; line-height: 1.15; }}
.rs-lb thead th {{ position: sticky; top: 0; z-index: 1; background: #f4f5f7; text-align: right;
  padding: 6px 8px; border-bottom: 1px solid #ccc; font-weight: 600; white-space: nowrap; }}
.rs-lb thead th.txt {{ text-align: left; }}
.rs-lb td {{ padding: 3px 8px; border-bottom: 1px solid #eee; text-align: right;
  white-space: nowrap; vertical-align: top; }}
.rs-lb td.txt {{ text-align: left; white-space: normal; max-width: 16em;
  overflow-wrap: anywhere; }}
.rs-lb td .ci {{ display: block; font-size: 11px; color: #666; }}
.rs-lb td .tag {{ display: block; font-size: 11px; color: #666; }}
.rs-lb tr.pool td {{ font-weight: 700; background: #eef3fa; }}
.rs-lb tr.group-pool td {{ background: #f6f9fd; }}
.rs-lb tr.cohort-pool td {{ background: #fdf4ec; }}
.rs-lb td.rank {{ color: #888; width: 2em; }}
{EDGES}
</style>
"""


def _sort_key(value: float) -> float:
    return math.inf if value is None or math.isnan(value) else -value


def sorted_arms(
    board: Leaderboard, *, readers: bool = True, by: str = "radle_c", cohort: str | None = None
) -> pd.DataFrame:
    """The leaderboard's arms in display order: by a metric (best first, n/a last), by
    kind (the leaderboard's own order) or by name; cohort pools included, and with
    ``cohort`` only that cohort's runs."""
    shown = board.arms(readers=readers, cohort=cohort, cohort_pools=True).reset_index(drop=True)
    if by == "arm":
        return shown
    if by == "name":
        return shown.sort_values("name", key=lambda s: s.str.lower(), kind="stable")
    if by not in METRICS:
        raise ValueError(f"sort by one of {', '.join(SORTS)}, not {by!r}")
    order = sorted(range(len(shown)), key=lambda i: (_sort_key(shown[by].iloc[i]), i))
    return shown.iloc[order].reset_index(drop=True)


def ci_text(low: float, high: float, digits: int) -> str:
    """``1180.2–1290.1`` (an en dash); empty when the bootstrap gave no interval."""
    if low is None or high is None or math.isnan(low) or math.isnan(high):
        return ""
    return f"{low:.{digits}f}–{high:.{digits}f}"


def _metric_cell(row: pd.Series, metric: str) -> str:
    value = row[metric]
    if value is None or math.isnan(value):
        return '<td title="undefined">n/a</td>'
    digits = DIGITS.get(metric, 3)
    ci = ci_text(row[f"{metric}_ci_low"], row[f"{metric}_ci_high"], digits)
    ci_html = f'<span class="ci">{ci}</span>' if ci else ""
    return f"<td>{value:.{digits}f}{ci_html}</td>"


def _name_cell(row: pd.Series) -> str:
    parts = [ARM_LABEL[str(row["arm"])]]
    group = row["group"]
    if row["arm"] == "reader" and isinstance(group, str) and group:
        parts.append(group)
    if row["arm"] == "model" and isinstance(group, str) and group:
        parts.append(group)
    cohort = row.get("cohort")
    if row["arm"] == "model" and isinstance(cohort, str) and cohort:
        parts.append(cohort)
    if row["arm"] in ("pool", "group pool"):
        parts.append(f"{int(row['n_readers'])} reader(s)")
    if row["arm"] == "cohort pool":
        parts.append(f"{int(row['n_readers'])} run(s)")
    completion = row["completion"]
    if row["arm"] == "reader" and not math.isnan(completion) and completion < 1.0:
        parts.append(f"{completion:.0%} done")
    tag = escape(" · ".join(parts))
    return f'<td class="txt">{escape(str(row["name"]))}<span class="tag">{tag}</span></td>'


def leaderboard_html(
    board: Leaderboard, *, readers: bool = True, by: str = "radle_c", cohort: str | None = None
) -> str:
    """The table (with its style), ready for ``st.html`` or a static report."""
    shown = sorted_arms(board, readers=readers, by=by, cohort=cohort)
    metrics = [*METRICS, *(GROUNDING_METRICS if board.has_grounding else ())]
    titles = {**LABELS, **GROUNDING_LABELS}
    head = '<th class="rank">#</th><th class="txt">responder</th><th>N</th>'
    for m in metrics:
        head += f'<th title="{escape(titles[m])}, 95% CI below">{column_label(m)}</th>'
    body = []
    for rank, (_, row) in enumerate(shown.iterrows(), start=1):
        cells = [
            f'<td class="rank">{rank}</td>',
            _name_cell(row),
            f"<td>{int(row['n_cases'])}</td>",
        ]
        cells += [_metric_cell(row, m) for m in metrics]
        kind = str(row["arm"]).replace(" ", "-")
        body.append(
            f'<tr class="{kind}" data-name="{escape(str(row["name"]))}">{"".join(cells)}</tr>'
        )
    return (
        f'{CSS}<div class="rs-lb" data-testid="rs-leaderboard"><table><thead><tr>{head}</tr>'
        f"</thead><tbody>{''.join(body)}</tbody></table></div>"
    )
