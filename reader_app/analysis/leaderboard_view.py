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
from collections.abc import Sequence
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
from reader_app.charts.palette import GROUP_POOLS, GROUP_POOLS_DARK, POOL, POOL_DARK
from reader_app.charts.theme import DARK_BACKGROUND, DARK_MUTED, DARK_TEXT
from scoring import GROUNDING_METRICS

ARM_COLORS: Final = {  # the charts' families (reader_app/charts/palette.py), as on paper
    "pool": POOL,
    "group pool": GROUP_POOLS[0],
    "cohort pool": "#ba3d03",
    "model": "#d95f02",
    "reader": "#2171b5",
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

# The page is dark (the app's theme) and paper is light (a printed static report): every
# colour below is named for both, and each text keeps 4.5:1 on its own row's background
# (tests/reader_app/analysis/test_leaderboard_contrast.py, and in Chromium).
DARK: Final = {
    "bg": DARK_BACKGROUND, "fg": DARK_TEXT, "muted": DARK_MUTED, "head": "#1c212b",
    "pool": "#1d3557", "group-pool": "#172338", "cohort-pool": "#2a1d14", "line": "#30363f",
    "edge-pool": POOL_DARK, "edge-group-pool": GROUP_POOLS_DARK[0],
}  # fmt: skip
LIGHT: Final = {
    "bg": "#ffffff", "fg": "#111111", "muted": "#555555", "head": "#eef0f3",
    "pool": "#dce8f7", "group-pool": "#eef4fb", "cohort-pool": "#fdf4ec", "line": "#cccccc",
    "edge-pool": POOL, "edge-group-pool": GROUP_POOLS[0],
}  # fmt: skip


def _palette(colours: dict[str, str]) -> str:
    return " ".join(f"--lb-{k}: {v};" for k, v in colours.items())


EDGES: Final = "\n".join(
    f".rs-lb tr.{k.replace(' ', '-')} td:first-child "
    f"{{ box-shadow: inset {6 if k == 'pool' else 4}px 0 0 {edge}; }}"
    for k, edge in {
        "pool": "var(--lb-edge-pool)",
        "group pool": "var(--lb-edge-group-pool)",
        "cohort pool": ARM_COLORS["cohort pool"],
        "model": ARM_COLORS["model"],
        "reader": ARM_COLORS["reader"],
    }.items()
)
CSS: Final = f"""
<style>
.rs-lb {{ {_palette(DARK)} color: var(--lb-fg); background: var(--lb-bg);
  max-height: {ROWS_IN_VIEW * ROW_PX + 40}px; overflow: auto; border: 1px solid var(--lb-line);
  border-radius: 6px; max-width: 100%; }}
.rs-lb.light {{ {_palette(LIGHT)} }}
@media print {{ .rs-lb {{ {_palette(LIGHT)} max-height: none; overflow: visible; }} }}
.rs-lb table {{ border-collapse: separate; border-spacing: 0; width: 100%; font-size: 13px;
  font-variant-numeric: tabular-nums; line-height: 1.15; color: var(--lb-fg); }}
.rs-lb thead th {{ position: sticky; top: 0; z-index: 1; background: var(--lb-head);
  color: var(--lb-fg); text-align: right; padding: 6px 8px;
  border-bottom: 1px solid var(--lb-line); font-weight: 600; white-space: nowrap; }}
.rs-lb thead th.txt {{ text-align: left; }}
.rs-lb td {{ padding: 3px 8px; border-bottom: 1px solid var(--lb-line); text-align: right;
  white-space: nowrap; vertical-align: top; background: var(--lb-bg); }}
.rs-lb td.txt {{ text-align: left; white-space: normal; max-width: 16em;
  overflow-wrap: anywhere; }}
.rs-lb td .ci {{ display: block; font-size: 11px; color: var(--lb-muted); }}
.rs-lb td .tag {{ display: block; font-size: 11px; color: var(--lb-muted); }}
.rs-lb tr.pool td {{ font-weight: 700; background: var(--lb-pool); }}
.rs-lb tr.group-pool td {{ background: var(--lb-group-pool); }}
.rs-lb tr.cohort-pool td {{ background: var(--lb-cohort-pool); }}
.rs-lb td.rank {{ color: var(--lb-muted); width: 2em; }}
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


def text_table_html(frame: pd.DataFrame, headers: Sequence[str], *, key: str) -> str:
    """A frame of display text (model minus pool, model vs reader panel) in the
    leaderboard's box, colours and sticky header: every cell escaped text, the first
    column to the left. ``key`` names the box (``data-testid``)."""
    head = "".join(
        f'<th class="txt">{escape(h)}</th>' if i == 0 else f"<th>{escape(h)}</th>"
        for i, h in enumerate(headers)
    )
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="txt">{escape(str(v))}</td>' if i == 0 else f"<td>{escape(str(v))}</td>"
            for i, v in enumerate(row)
        )
        + "</tr>"
        for row in frame.itertuples(index=False)
    )
    return (
        f'{CSS}<div class="rs-lb" data-testid="{escape(key)}"><table><thead><tr>{head}</tr>'
        f"</thead><tbody>{body}</tbody></table></div>"
    )


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
