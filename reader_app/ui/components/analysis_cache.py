"""The analyst pages' shared glue: scoring controls and the shared scored study.

Loading the tidy frame and scoring it with the bootstrap are the expensive
steps; both come from reader_app.analysis.scored_study's ``SHARED``, which
computes them once per study and data version (answers, grades, parameters)
for every session of the server. A page run that finds them there reads the
data version (a few aggregate queries) and nothing else. The controls live in
the sidebar of every analyst page and keep their values across pages.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import pandas as pd
import streamlit as st

from reader_app.analysis.case_matrix import CaseMatrix
from reader_app.analysis.data import NotScorable, StudyData, check_scorable
from reader_app.analysis.leaderboard import Leaderboard
from reader_app.analysis.leaderboard_view import text_table_html
from reader_app.analysis.scored_study import SHARED, params_key, shared_study_data
from reader_app.core.auth import AuthError
from reader_app.ui.components.column_labels import column_label
from reader_app.ui.components.safe_text import escape_markdown
from reader_app.ui.context import SignedIn, db_session, load_reader
from scoring import ScoringParams

# RadLE-H's two definitions (SCORING.md section 3), as the sidebar names them
H_VARIANTS = {"v2": "v2 (default)", "v1": "v1 (earlier)"}

DEFAULTS: dict[str, Any] = {
    "an_boot": 2000,
    "an_min_completion": 1.0,
    "an_idk": 0.0,
    "an_seed": 0,
    "an_h_variant": ScoringParams().h_variant,  # the library's default, v2
    "an_readers": True,
    "an_graded_only": False,
}


def _keep(key: str) -> None:
    st.session_state[f"_{key}"] = st.session_state[key]


def kept(key: str, default: Any, options: Sequence[Any] | None = None) -> dict[str, Any]:
    """The arguments that make widget ``key`` keep its value while it is not drawn (another
    page, another tab): Streamlit forgets a widget's state in a run that skips it. The
    value is restored before the widget is drawn, unless ``options`` no longer hold it."""
    state = st.session_state
    value = state.setdefault(f"_{key}", default)
    if options is None or value in options:
        state[key] = value
    return {"key": key, "on_change": _keep, "args": (key,)}


def open_tab(labels: Sequence[str], key: str) -> tuple[str, Any]:
    """Tabs of which only the open one is computed and drawn: its label and container.

    A tab switch reruns the page (``on_change``), and the page draws that tab alone: a
    page that drew every tab made the browser lay out every chart and table on every
    visit (issue 43, second visits). The open tab is kept across pages (:func:`kept`)."""
    tabs = st.tabs(list(labels), **kept(key, labels[0], labels))
    opened = [(label, tab) for label, tab in zip(labels, tabs, strict=True) if tab.open]
    return opened[0] if opened else (labels[0], tabs[0])


@dataclass(frozen=True)
class Controls:
    params: ScoringParams
    readers: bool  # show individual readers
    graded_only: bool  # score the fully graded cases when some answers wait for grading


def scoring_controls() -> Controls:
    """Sidebar widgets for the scoring parameters; values survive page switches."""
    state = st.session_state
    with st.sidebar:
        st.subheader("Scoring")
        st.number_input(
            "Bootstrap replicates (B)",
            min_value=0,
            max_value=20000,
            step=500,
            **kept("an_boot", DEFAULTS["an_boot"]),
            help="Paired case bootstrap for the 95% CIs; also the number of sign-flip "
            "permutations. 0 turns CIs and p-values off.",
        )
        st.slider(
            "Pool: minimum completion",
            min_value=0.0,
            max_value=1.0,
            step=0.05,
            **kept("an_min_completion", DEFAULTS["an_min_completion"]),
            help="Readers need this share of the cases to enter the human pool.",
        )
        st.number_input(
            "Points for “I don't know”",
            min_value=-5.0,
            max_value=5.0,
            step=1.0,
            **kept("an_idk", DEFAULTS["an_idk"]),
        )
        st.number_input("Seed", min_value=0, step=1, **kept("an_seed", DEFAULTS["an_seed"]))
        st.selectbox(
            "RadLE-H definition",
            list(H_VARIANTS),
            format_func=lambda k: H_VARIANTS[str(k)],
            **kept("an_h_variant", DEFAULTS["an_h_variant"]),
            help="v2: the harmonic mean of R, coverage and the share of wrong answers "
            "handed over; it reproduces the one H RadLE published. v1: the earlier geometric "
            "mean, counting IDK, failures and missing cases as handed-over errors (SCORING.md "
            "section 3). Every table, export and report records which was used.",
        )
        st.toggle("Show individual readers", **kept("an_readers", DEFAULTS["an_readers"]))
        st.toggle(
            "Score fully graded cases only",
            **kept("an_graded_only", DEFAULTS["an_graded_only"]),
            help="While some answers wait for grading, score the cases whose answers are "
            "all graded (N shrinks; the page says so).",
        )
    params = ScoringParams(
        idk_score=float(state["an_idk"]),
        min_completion=float(state["an_min_completion"]),
        n_boot=int(state["an_boot"]),
        seed=int(state["an_seed"]),
        h_variant=str(state["an_h_variant"]),
    )
    return Controls(params, bool(state["an_readers"]), bool(state["an_graded_only"]))


def load_data(user: SignedIn) -> StudyData:
    with db_session() as session:
        actor, _ = load_reader(session, user)
        try:
            return shared_study_data(session=session, actor=actor)
        except AuthError as exc:
            st.error(escape_markdown(str(exc)))
            st.stop()
            raise  # unreachable: st.stop raises


def case_set(data: StudyData, controls: Controls) -> tuple[str, ...] | None:
    """The cases to score, or None after showing why nothing can be scored yet."""
    cases = data.graded_cases() if controls.graded_only and data.n_pending else None
    try:
        chosen = check_scorable(data, cases)
    except NotScorable as exc:
        st.info(escape_markdown(str(exc)))
        return None
    if len(chosen) < len(data.case_ids):
        st.warning(
            f"Scored on the {len(chosen)} fully graded case(s) of {len(data.case_ids)}: "
            f"{data.n_pending} answer(s) still wait for grading."
        )
    return chosen


def _spinner_text(params: ScoringParams) -> str:
    if params.n_boot:
        return f"Scoring with {params.n_boot} paired bootstrap resamples…"
    return "Scoring…"


def leaderboard(data: StudyData, cases: Sequence[str], params: ScoringParams) -> Leaderboard:
    with st.spinner(_spinner_text(params)):
        return SHARED.leaderboard(data, cases, params)


def leaderboard_first_paint(
    data: StudyData,
    cases: Sequence[str],
    params: ScoringParams,
    paint: Callable[[Leaderboard], None],
) -> Leaderboard:
    """The leaderboard with its bootstrap; when it is not computed yet, ``paint`` draws the
    point estimates (a scoring without the bootstrap, milliseconds) while it is, and the
    drawing is removed once the full board is there."""
    if not params.n_boot or SHARED.has_leaderboard(data, cases, params):
        return SHARED.leaderboard(data, cases, params)
    placeholder = st.empty()
    with placeholder.container():
        paint(SHARED.leaderboard(data, cases, replace(params, n_boot=0)))
    try:
        return leaderboard(data, cases, params)
    finally:
        placeholder.empty()


def reader_groups(
    data: StudyData, cases: Sequence[str], params: ScoringParams, *, merge: bool
) -> pd.DataFrame:
    with st.spinner(_spinner_text(params)):
        return SHARED.group_split(data, cases, params, merge=merge)


def per_case(data: StudyData, cases: Sequence[str], params: ScoringParams) -> CaseMatrix:
    with st.spinner("Building the per-case matrix…"):
        return SHARED.case_matrix(data, cases, params)


def reading_times(data: StudyData) -> pd.DataFrame:
    """Median active seconds per case of each reader (analysis.timing), once per data
    version, off the readers' process where the worker holds the version."""
    with db_session() as session:
        return SHARED.reading_times(data, session=session)


def export_refusal(what: str, data: StudyData, params: ScoringParams) -> str | None:
    """Why an export cannot be made yet (exports.export_refusal), once per data version."""
    from reader_app.analysis import exports  # pyarrow: the Exports page's alone

    return SHARED.computed(
        data,
        "export_refusal",
        (what, params_key(params)),
        lambda: exports.export_refusal(what, data.frame, params, slug=data.slug),
    )


def metrics_table(frame: pd.DataFrame, *, key: str) -> None:
    """A leaderboard-style table of display text, drawn as the leaderboard is (HTML):
    ``st.dataframe``'s grid made the analyst's sign-in load 1.3 MB more JavaScript
    (the grid and Arrow), about 0.3 s of a 1.8 s sign-in (issue 43)."""
    headers = [column_label(c) for c in frame.columns]
    with st.container(key=key):
        st.html(text_table_html(frame, headers, key=key))
