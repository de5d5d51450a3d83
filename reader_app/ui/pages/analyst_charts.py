"""The analyst's figures: response profile, reliability, risk-coverage, reader groups,
reading time and, for a study with reference regions, accuracy against grounding rate.

One tab a figure, only the open one computed and drawn (analysis_cache.open_tab): five
charts on one page made each visit wait for the browser to lay out all of them (issue
43, second visits). Each chart comes with PNG, SVG and the CSV behind it
(ui/components/charts.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pandas as pd
import streamlit as st

from reader_app.analysis.chart_data import (
    accuracy_grounding,
    reliability,
    response_profile,
    risk_coverage,
)
from reader_app.analysis.data import StudyData
from reader_app.analysis.leaderboard import LABELS, METRICS, Leaderboard
from reader_app.charts import (
    accuracy_grounding_chart,
    group_split_chart,
    reliability_chart,
    response_profile_chart,
    risk_coverage_chart,
)
from reader_app.charts.vl import Spec
from reader_app.ui.components.analysis_cache import (
    Controls,
    case_set,
    kept,
    leaderboard,
    load_data,
    open_tab,
    reader_groups,
    reading_times,
    scoring_controls,
)
from reader_app.ui.components.charts import chart_panel
from reader_app.ui.context import staff_user

HIGHLIGHT_FROM = 7  # past the six warm hues people tell apart at a glance
EVERYONE = ""  # no responder highlighted (a widget whose value is None shows no choice)


def _names(frame: pd.DataFrame, arm: str) -> list[str]:
    """The series of one kind, in the leaderboard's order."""
    return list(dict.fromkeys(str(n) for n in frame.loc[frame["arm"] == arm, "name"]))


def response_profile_tab(board: Leaderboard, readers: bool, stem: str) -> None:
    st.caption(
        "Share of the cases per outcome: wrong answers (✗, orange) by confidence, “I don't "
        "know” (?, grey), correct answers (✓, blue) by confidence; darker is more confident. "
        "Pools weigh each case once."
    )
    profile = response_profile(board, readers=readers)
    chart_panel(
        response_profile_chart(profile),
        profile,
        name="Response profile",
        key="ch_profile",
        file_stem=f"{stem}-response-profile",
    )


def highlighted(frame: pd.DataFrame) -> str | None:
    """The responder drawn in colour on the reliability and risk-coverage charts (one
    choice for both tabs). Sixteen model runs in warm hues were not told apart (issue
    42): one responder in colour, every other grey. From HIGHLIGHT_FROM model runs on,
    the leaderboard's first is chosen."""
    models = _names(frame, "model")
    options = [EVERYONE, *models, *_names(frame, "reader")]
    chosen = st.selectbox(
        "Responder in colour, the others grey (reliability and risk-coverage)",
        options,
        format_func=lambda name: (
            "none: every responder in its own colour" if name == EVERYONE else name
        ),
        **kept("ch_highlight", models[0] if len(models) >= HIGHLIGHT_FROM else EVERYONE, options),
    )
    return None if chosen in (None, EVERYONE) else str(chosen)


def highlighted_tab(
    caption: str,
    frame: pd.DataFrame,
    chart: Callable[..., Spec],
    *,
    name: str,
    key: str,
    file_stem: str,
) -> None:
    """A chart of every responder with one of them in colour (reliability, risk-coverage)."""
    st.caption(caption)
    chart_panel(
        chart(frame, highlight=highlighted(frame)), frame, name=name, key=key, file_stem=file_stem
    )


def grounding_tab(board: Leaderboard, readers: bool, stem: str, data: StudyData) -> None:
    st.caption(
        f"Over the {len(board.grounded_case_ids)} case(s) with a reference region: how often "
        "each responder's marker lies inside it (G) against how often it is right "
        "(RadLE-A, every scored case), with 95% CIs both ways. Above the dashed diagonal, "
        "right answers outrun looking in the right place. Humans in blue, model runs in "
        "orange; a hollow diamond is a text-only run (sent no image)."
    )
    grounding = accuracy_grounding(board, readers=readers, text_only=data.text_only_runs)
    chart_panel(
        accuracy_grounding_chart(grounding),
        grounding,
        name="Accuracy against grounding",
        key="ch_grounding",
        file_stem=f"{stem}-accuracy-grounding",
    )


def reader_groups_tab(data: StudyData, cases: Sequence[str], controls: Controls) -> None:
    left, right = st.columns(2)
    merge = left.toggle("Pool training years as “trainees”", **kept("ch_merge", True))
    chosen = right.selectbox(
        "Metric",
        list(METRICS),
        format_func=lambda m: LABELS[str(m)],
        **kept("ch_metric", METRICS[0], list(METRICS)),
    )
    metric = str(chosen or METRICS[0])
    groups = reader_groups(data, cases, controls.params, merge=merge)
    if groups.empty:
        st.info("No reader is in the pool yet: there are no groups to compare.")
        return
    chart_panel(
        group_split_chart(groups, metric),
        groups[groups["metric"] == metric],
        name="Reader groups",
        key="ch_groups",
        file_stem=f"{data.slug}-groups-{metric}",
    )


def reading_time_tab(data: StudyData) -> None:
    st.caption(
        "Median active seconds per case (the case page visible; pauses and hidden tabs "
        "excluded) for each reader, by group. The exports carry every response's time."
    )
    per_reader = reading_times(data)
    if per_reader.empty:
        st.info("No timed answers yet.")
        return
    st.dataframe(
        per_reader,
        hide_index=True,
        key="ch_time",
        column_config={
            "group": "Group",
            "responder": "Reader",
            "cases": "Cases",
            "median_s": st.column_config.NumberColumn("Median s per case", format="%.1f"),
        },
    )


user = staff_user("analyst")
controls = scoring_controls()
data = load_data(user)

st.title("Charts")
cases = case_set(data, controls)
if cases is None:
    st.stop()
assert cases is not None
board = leaderboard(data, cases, controls.params)
readers, stem = controls.readers, data.slug
GROUNDING = "Accuracy against grounding"
labels = [
    "Response profile",
    "Reliability",
    "Risk-coverage",
    *([GROUNDING] if board.has_grounding else []),
    "Reader groups",
    "Reading time",
]
label, tab = open_tab(labels, "ch_tab")
with tab:
    if label == "Response profile":
        response_profile_tab(board, readers, stem)
    elif label == "Reliability":
        highlighted_tab(
            "Accuracy at each confidence level; the dashed diagonal is p = L/4.",
            reliability(board, readers=readers),
            reliability_chart,
            name="Reliability",
            key="ch_rel",
            file_stem=f"{stem}-reliability",
        )
    elif label == "Risk-coverage":
        highlighted_tab(
            "Handing over every answer below a confidence threshold: how much is kept, and "
            "how often what is kept is wrong. Lower and further right is better.",
            risk_coverage(board, readers=readers),
            risk_coverage_chart,
            name="Risk-coverage",
            key="ch_rc",
            file_stem=f"{stem}-risk-coverage",
        )
    elif label == GROUNDING:
        grounding_tab(board, readers, stem, data)
    elif label == "Reader groups":
        reader_groups_tab(data, cases, controls)
    else:
        reading_time_tab(data)
