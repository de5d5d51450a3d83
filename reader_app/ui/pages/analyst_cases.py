"""The per-case matrix: which cases humans get and models miss, and the reverse.

Difficulty comes from the human pool (reader_app.analysis.case_matrix). At 200
cases the matrix is shown a page at a time (hardest first, equal difficulty in
numeric case-id order), with a filter for the cases where the pool and a model
disagree; every cell names its case and responder on hover. Beside it, the case
lists and, for a study with reference regions or located answers, where each
responder looked on a case (reader_app.analysis.case_grounding), drawn on the
image. One tab each, only the open one computed and drawn (analysis_cache.open_tab):
the matrix above three 200-row tables made every visit wait for the browser (issue
43, second visits). Every choice on a tab is kept while another tab is open.
"""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from reader_app.analysis.case_detail import case_detail
from reader_app.analysis.case_grounding import analyst_case_grounding, thumbnails
from reader_app.analysis.case_matrix import FILTERS, SPLITS, CaseMatrix
from reader_app.analysis.data import StudyData
from reader_app.charts import case_matrix_chart
from reader_app.core.csv_safe import spreadsheet_csv
from reader_app.ui.components.analysis_cache import (
    Controls,
    case_set,
    kept,
    load_data,
    open_tab,
    per_case,
    scoring_controls,
)
from reader_app.ui.components.charts import figure_downloads
from reader_app.ui.components.matrix_view import matrix_view, picked_case
from reader_app.ui.components.safe_text import escape_markdown, show_table
from reader_app.ui.context import SignedIn, asset_bytes, db_session, load_reader, staff_user

PAGE_SIZES = (50, 100, 200)


def _open_clicked() -> None:
    """A click on a cell of the matrix opens its case below it."""
    case = picked_case("pc_matrix_view")
    if case:
        st.session_state["_pc_open"] = case


def matrix_tab(data: StudyData, matrix: CaseMatrix, controls: Controls, user: SignedIn) -> None:
    show, model_col, size, number = st.columns([3, 2, 1, 1])
    which = str(
        show.selectbox(
            "Show",
            list(FILTERS),
            format_func=lambda k: FILTERS[str(k)],
            **kept("pc_filter", next(iter(FILTERS)), list(FILTERS)),
        )
        or "all"
    )
    model = None
    if which == "disagree":
        runs = ["any model run", *data.responders("model")]
        picked = model_col.selectbox(
            "Model run", runs, help="whose answers to compare", **kept("pc_model", runs[0], runs)
        )
        model = None if picked in (None, "any model run") else str(picked)
    per_page = int(
        size.selectbox("Cases per page", PAGE_SIZES, **kept("pc_size", PAGE_SIZES[0], PAGE_SIZES))
        or PAGE_SIZES[0]
    )
    chosen = matrix.chosen(which, model)
    pages = max(1, math.ceil(len(chosen) / per_page))
    state = st.session_state
    if int(state.get("_pc_page", 1)) > pages:  # a narrower filter has fewer pages
        state["_pc_page"] = pages
    at = int(
        number.number_input("Page", min_value=1, max_value=pages, step=1, **kept("pc_page", 1))
    )
    at = min(at, pages)
    shown = chosen.iloc[(at - 1) * per_page : at * per_page]
    st.caption(
        f"{len(chosen)} of {len(matrix.cases)} case(s) · page {at} of {pages}: cases "
        f"{(at - 1) * per_page + 1 if len(shown) else 0}-{(at - 1) * per_page + len(shown)}"
    )
    cells = matrix.page(shown)
    if not controls.readers:
        cells = cells[cells["kind"] == "model"]
    if shown.empty:
        st.info("No case matches this filter.")
    else:
        with st.container(key="pc_matrix"):
            matrix_view(cells, shown, key="pc_matrix_view", on_open=_open_clicked)
            figure_downloads(
                lambda: case_matrix_chart(cells, shown),
                cells,
                key="pc_matrix",
                file_stem=f"{data.slug}-per-case" + ("" if which == "all" else f"-{which}"),
            )

        st.subheader("Open a case")
        st.caption(
            "Click a cell of the matrix, or choose a case: its images, key and every answer."
        )
        order = [str(c) for c in chosen["case_id"]]
        # a case kept from another filter is none of these: Streamlit opens none
        opened = st.selectbox("Case", order, index=None, width=320, **kept("pc_open", None, order))
        if opened:
            with db_session() as session:
                actor, _ = load_reader(session, user)
                detail = case_detail(
                    session=session, actor=actor, frame=data.frame, source_id=str(opened)
                )
            if detail is not None:
                with st.container(key="pc_case"):
                    st.caption(
                        f"Case {escape_markdown(detail.source_id)} · {detail.kind} · "
                        f"{len(detail.images)} image(s) · {len(detail.answers)} answer(s)"
                    )
                    left, right = st.columns([2, 3], gap="large")
                    with left:
                        for col, sha in zip(
                            st.columns(min(len(detail.images), 3) or 1), detail.images, strict=False
                        ):
                            col.image(asset_bytes(sha), output_format="PNG")
                        if len(detail.images) > 3:
                            st.caption(f"{len(detail.images)} images; the first 3 are shown.")
                    with right:
                        st.caption("Reference diagnosis (answer key)")
                        st.text(detail.reference or "—")
                        if detail.synonyms:
                            st.caption(
                                "Also accepted: " + escape_markdown(" · ".join(detail.synonyms))
                            )
                        if detail.history:
                            st.caption("Clinical history")
                            st.text(detail.history)
                    show_table(detail.answers, key="pc_case_answers")
                    st.download_button(
                        "Answers to this case (CSV)",
                        data=spreadsheet_csv(detail.answers),
                        file_name=f"{data.slug}-case-{detail.source_id}-answers.csv",
                        mime="text/csv",
                        key="pc_case_csv",
                        on_click="ignore",
                    )


def lists_tab(data: StudyData, matrix: CaseMatrix) -> None:
    counts = matrix.cases["split"].value_counts()
    cols = [*st.columns(3), *st.columns(3)]  # five in a row cut their labels at 1024 px
    for col, name in zip(cols[:4], SPLITS[:4], strict=True):
        col.metric(name, int(counts.get(name, 0)))
    cols[4].metric("pool and a model disagree", int((matrix.cases["models_disagreeing"] > 0).sum()))
    if not data.responders("model"):
        st.info("No model runs yet: every case is listed as “no model runs”.")
    for name in SPLITS[:2]:
        st.subheader(name.capitalize())
        rows = matrix.split(name)
        if rows.empty:
            st.caption("None.")
        else:
            show_table(rows.drop(columns=["split"]), key=f"pc_{SPLITS.index(name)}")
    st.subheader("All cases, hardest first")
    show_table(matrix.cases, key="pc_all")


def grounding_tab(user: SignedIn) -> None:
    with db_session() as session:
        actor, _ = load_reader(session, user)
        grounded, view = analyst_case_grounding(
            session=session, actor=actor, source_id=st.session_state.get("_pc_ground_case")
        )
    if view is None:
        st.info("No case has a reference region or a located answer yet.")
    else:
        st.selectbox(
            "Case", grounded, width=320, **kept("pc_ground_case", view.source_id, grounded)
        )
        region = "no reference region" if view.reference is None else "reference region in green"
        tolerance = f", grown by {view.tolerance:g} px (light green)" if view.tolerance else ""
        st.caption(
            f"{region}{tolerance} · readers: blue discs · model runs: orange diamonds, hollow "
            "when the run was sent no image (text only). The region is ground truth: analysts "
            "and coordinators only."
        )
        shots = thumbnails(view, asset_bytes)
        with st.container(key="pc_ground_images"):
            for col, shot in zip(st.columns(min(len(shots), 3) or 1), shots, strict=False):
                where = "image" if shot.slice_no is None else f"slice {shot.slice_no}"
                # PNG as drawn: "auto" would make a JPEG and blur the one-pixel outlines
                col.image(
                    shot.png, caption=f"{where} · {shot.n_markers} marker(s)", output_format="PNG"
                )
        elsewhere = sum(
            1
            for m in view.marks
            if m.location is not None and m.location.slice not in {s.slice_no for s in shots}
        )
        if elsewhere:
            st.caption(f"{elsewhere} marker(s) on other slices (not drawn).")
        marks = pd.DataFrame(
            [
                {
                    "responder": m.responder,
                    "kind": "model (text only)" if m.text_only else m.kind,
                    "slice": None if m.location is None else m.location.slice,
                    "x": None if m.location is None else m.location.x,
                    "y": None if m.location is None else m.location.y,
                    "where": "no focal finding"
                    if m.no_focal_finding
                    else "—"
                    if m.location is None
                    else "point",
                    "hit": "" if m.hit is None else ("hit" if m.hit else "miss"),
                }
                for m in view.marks
            ]
        )
        if marks.empty:
            st.caption(f"Nobody has answered {escape_markdown(view.source_id)} yet.")
        else:
            show_table(marks, key="pc_ground_marks")


user = staff_user("analyst")
controls = scoring_controls()
data = load_data(user)

st.title("Per-case matrix")
cases = case_set(data, controls)
if cases is None:
    st.stop()
assert cases is not None
matrix = per_case(data, cases, controls.params)
st.caption(
    "Difficulty = 1 − the share of pooled readers who got the case right. Humans “get” a "
    "case when at least half the pooled readers are right; models, when at least half the "
    "model runs are. A model disagrees with the pool when it is right where the pool's "
    "majority is wrong, or the reverse."
)
LISTS, GROUNDING = "Case lists", "Where responders looked"
label, tab = open_tab(["Matrix", LISTS, GROUNDING], "pc_tab")
with tab:
    if label == LISTS:
        lists_tab(data, matrix)
    elif label == GROUNDING:
        grounding_tab(user)
    else:
        matrix_tab(data, matrix, controls, user)
