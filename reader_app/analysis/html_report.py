"""A one-file HTML report of a study: tables and charts, readable with no server.

The file has no script, no stylesheet link, no font or image from anywhere:
CSS is inline and every chart is an SVG (rendered offline by vl-convert)
embedded as a base64 ``data:`` image, so it opens from a USB stick, a mail
attachment or an air-gapped laptop. Every piece of user text (study title,
reader codes, run names, case ids) goes through ``html.escape``; SVG inside
``<img>`` cannot run script even if a chart label were hostile.
"""

from __future__ import annotations

import base64
import html
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

import pandas as pd

from reader_app.analysis.case_matrix import SPLITS, case_matrix
from reader_app.analysis.chart_data import (
    accuracy_grounding,
    group_split,
    metric_bars,
    reliability,
    response_profile,
    risk_coverage,
)
from reader_app.analysis.data import NotScorable, StudyData, check_scorable
from reader_app.analysis.leaderboard import (
    Leaderboard,
    build_leaderboard,
    display_differences,
    display_mrmc,
    display_table,
)
from reader_app.analysis.report_scores import (
    ReportBoard,
    display_comparisons,
    display_reports,
    tier_counts,
)
from reader_app.charts import (
    accuracy_grounding_chart,
    case_matrix_chart,
    chart_svg,
    group_split_chart,
    metric_bars_chart,
    reliability_chart,
    response_profile_chart,
    risk_coverage_chart,
)
from reader_app.charts.audit import audit_arms_chart
from reader_app.charts.rubric import tier_distribution_chart
from reader_app.charts.vl import Spec
from reader_app.grounding_audit.view import audit_caption, chart_frame, summary_table
from reader_app.models import utcnow
from scoring import SCORING_SPEC_VERSION, ScoringParams

CSS: Final = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:2rem auto;
max-width:1100px;color:#1b1b1b;padding:0 1rem}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{margin-top:2.2rem;border-bottom:1px solid #ddd}
.table{max-width:100%;overflow-x:auto}
table{border-collapse:collapse;margin:.6rem 0;font-size:13px}
th,td{border:1px solid #ccc;padding:.25rem .5rem;text-align:left;vertical-align:top}
th{background:#f3f5f9}td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.muted{color:#595959}.note{background:#fff8e1;border-left:4px solid #f0b400;padding:.4rem .8rem}
figure{margin:1rem 0}img.chart{max-width:100%;height:auto}
@page{margin:14mm}
@media print{body{margin:0;max-width:none;padding:0;font-size:11px}table{font-size:10px}
.table{overflow:visible}th,td{padding:.15rem .3rem}tr,figure,img.chart{break-inside:avoid}
h2,h3{break-after:avoid}}
"""
# column names a person reads (the frames keep their names for the CSV exports)
HEADERS: Final = {
    "arm": "kind",
    "name": "responder",
    "case_id": "case",
    "pool_accuracy": "human pool accuracy",
    "models_correct": "model runs right",
    "model_runs": "model runs",
}


@dataclass(frozen=True)
class Figure:
    title: str
    chart: Spec


def esc(text: object) -> str:
    return html.escape("" if text is None else str(text), quote=True)


def _cell(value: object) -> str:
    if isinstance(value, float) and value == 0:
        value = 0.0  # never "-0.0"
    return esc("" if pd.isna(value) else value)  # type: ignore[call-overload]


def table_html(frame: pd.DataFrame) -> str:
    head = "".join(f"<th>{esc(HEADERS.get(str(c), c))}</th>" for c in frame.columns)
    body = []
    for row in frame.itertuples(index=False):
        cells = []
        for value in row:
            cls = ' class="num"' if isinstance(value, int | float) else ""
            cells.append(f"<td{cls}>{_cell(value)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return (
        f'<div class="table"><table><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )


def svg_img(chart: Spec, alt_text: str) -> str:
    svg = chart_svg(chart).encode("utf-8")
    data = base64.b64encode(svg).decode("ascii")
    return f'<img class="chart" alt="{esc(alt_text)}" src="data:image/svg+xml;base64,{data}">'


def figures(data: StudyData, board: Leaderboard, *, readers: bool) -> list[Figure]:
    cases = board.case_ids
    matrix = case_matrix(data.frame, cases, board.params)
    profile = response_profile(board, readers=readers)
    grounding = (
        [
            Figure(
                "Accuracy against grounding",
                accuracy_grounding_chart(
                    accuracy_grounding(board, readers=readers, text_only=data.text_only_runs)
                ),
            )
        ]
        if board.has_grounding
        else []
    )
    return [
        Figure("RadLE-C", metric_bars_chart(metric_bars(board, "radle_c", readers=readers))),
        Figure("Response profile", response_profile_chart(profile)),
        Figure("Reliability diagram", reliability_chart(reliability(board, readers=readers))),
        Figure("Risk-coverage", risk_coverage_chart(risk_coverage(board, readers=readers))),
        Figure(
            "Reader groups",
            group_split_chart(group_split(data.frame, cases, board.params), "radle_c"),
        ),
        Figure("Per-case matrix", case_matrix_chart(matrix.cells, matrix.cases)),
        *grounding,
    ]


def _params_table(params: ScoringParams) -> str:
    frame = pd.DataFrame([{"parameter": k, "value": v} for k, v in params.to_dict().items()])
    return table_html(frame)


def _splits_html(data: StudyData, board: Leaderboard) -> str:
    matrix = case_matrix(data.frame, board.case_ids, board.params)
    parts = []
    for name in SPLITS[:2]:
        rows = matrix.split(name)
        parts.append(f"<h3>{esc(name.capitalize())}: {len(rows)} case(s)</h3>")
        if len(rows):
            shown = rows[["case_id", "pool_accuracy", "models_correct", "model_runs"]].copy()
            shown["pool_accuracy"] = [f"{v:.0%}" for v in shown["pool_accuracy"]]
            parts.append(table_html(shown))
    return "".join(parts)


def _grounding_note(board: Leaderboard) -> str:
    if not board.has_grounding:
        return ""
    return (
        f'<p class="muted">Grounding over the {len(board.grounded_case_ids)} case(s) with a '
        "reference region: G grounding rate (the marker inside the region), GA grounded "
        "accuracy (right and inside), U the share of right answers whose marker was not "
        "inside; group pools have none (n/a).</p>"
    )


def audits_html(audits: list[dict[str, Any]] | None, human: dict[str, float]) -> str:
    """The causal grounding audit's section (none when the study has no audit)."""
    if not audits:
        return ""
    chart = audit_arms_chart(chart_frame(audits, human))
    return (
        "<h2>Causal grounding audit</h2>"
        f'<p class="muted">{esc(audit_caption(human))}</p>'
        f"{table_html(summary_table(audits))}"
        f"<figure><figcaption><b>Accuracy by audit arm</b></figcaption>"
        f"{svg_img(chart, 'Accuracy by audit arm beside the human readers G and GA')}</figure>"
    )


def reports_html(reports: ReportBoard | None) -> str:
    """The Reports section (Bench 2 rubric); empty when the study has no graded report."""
    if reports is None or reports.empty:
        return ""
    comparisons = (
        table_html(display_comparisons(reports))
        if len(reports.scores.comparisons)
        else '<p class="muted">No model run and human pool to compare.</p>'
    )
    chart = tier_distribution_chart(tier_counts(reports))
    return (
        "<h2>Reports (rubric 0-40)</h2>"
        '<p class="muted">Per responder: total of the ceiling (40 per report), mean and '
        "percent of the ceiling [95% paired case-bootstrap CI], SD, median, range and the "
        "count per tier (Exceptional 38-40, Strong 32-37, Solid 24-31, Mixed 16-23, Poor "
        "8-15, Fail 0-7). The human pool averages the readers' scores per case.</p>"
        f"{table_html(display_reports(reports))}"
        "<h3>Model minus human pool</h3>"
        '<p class="muted">Mean difference on the reports both have [95% CI]; p from the '
        "paired sign-flip permutation test on per-case scores.</p>"
        f"{comparisons}<figure><figcaption><b>Tier distribution</b></figcaption>"
        f"{svg_img(chart, 'Report rubric tiers')}</figure>"
    )


def render_report(
    data: StudyData,
    params: ScoringParams,
    *,
    case_ids: tuple[str, ...] | None = None,
    readers: bool = True,
    generated_at: datetime | None = None,
    reports: ReportBoard | None = None,
    audits: list[dict[str, Any]] | None = None,
    audit_humans: dict[str, float] | None = None,
) -> str:
    """The whole report as one HTML document (a clear message where data is missing).
    ``audits`` (``grounding_audit.view.study_audits``) adds the grounding audit section."""
    when = (generated_at or utcnow()).strftime("%Y-%m-%d %H:%M UTC")
    humans, models = data.responders("human"), data.responders("model")
    head = (
        f"<h1>{esc(data.title)}</h1>"
        f'<p class="muted">Study <b>{esc(data.slug)}</b> ({esc(data.state)}) · '
        f"generated {esc(when)} · scoring spec {esc(SCORING_SPEC_VERSION)}</p>"
        f"<p>{len(data.case_ids)} scored case(s) · {len(humans)} reader(s) · "
        f"{len(models)} model run(s) · {data.n_verdicts} graded answer(s) · "
        f"{data.n_pending} waiting for grading</p>"
    )
    try:
        cases = check_scorable(data, case_ids)
    except NotScorable as exc:
        body = f'<p class="note">{esc(exc)}</p>'
    else:
        board = build_leaderboard(data.frame, cases, params, data.grounded_case_ids)
        notes = "".join(f'<p class="note">{esc(n)}</p>' for n in board.notes)
        if len(cases) < len(data.case_ids):
            notes += (
                f'<p class="note">Scored on the {len(cases)} fully graded case(s) of '
                f"{len(data.case_ids)}.</p>"
            )
        diffs = (
            table_html(display_differences(board))
            if len(board.differences)
            else '<p class="muted">No model runs: no differences to show.</p>'
        )
        mrmc = (
            table_html(display_mrmc(board))
            if len(board.mrmc)
            else '<p class="muted">No model runs: nothing to compare.</p>'
        )
        charts = "".join(
            f"<figure><figcaption><b>{esc(f.title)}</b></figcaption>"
            f"{svg_img(f.chart, f.title)}</figure>"
            for f in figures(data, board, readers=readers)
        )
        body = (
            f"{notes}<h2>Leaderboard</h2>"
            '<p class="muted">RadLE-C confidence-weighted index (0-2000), A accuracy, R '
            "reliability, S safety (0-100), H handover readiness (0-100); each cell is value "
            "[95% paired case-bootstrap CI]; R is n/a when nothing was answered at Likert "
            "&ge; tau_high.</p>"
            f"{_grounding_note(board)}"
            f"{table_html(display_table(board, readers=readers))}"
            "<h2>Model minus human pool</h2>"
            '<p class="muted">Difference [95% CI]; p from the paired sign-flip permutation '
            "test on per-case points (RadLE-C).</p>"
            f"{diffs}<h2>Model vs reader panel</h2>"
            '<p class="muted">Model minus human pool [95% CI] and two-sided p with the '
            "readers and the cases random and the model fixed (Gallas' U-statistic, as iMRMC "
            "computes it).</p>"
            f"{mrmc}<h2>Charts</h2>{charts}"
            f"<h2>Cases that split humans and models</h2>{_splits_html(data, board)}"
        )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{esc(data.title)}: readerstudy report</title><style>{CSS}</style></head>"
        f"<body>{head}{body}{audits_html(audits, audit_humans or {})}{reports_html(reports)}"
        f"<h2>Scoring parameters</h2>{_params_table(params)}"
        '<p class="muted">Made by readerstudy. This file loads nothing from the network.</p>'
        "</body></html>"
    )
