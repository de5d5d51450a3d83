"""The coordinator's progress page: who is stuck, how far grading is, the study's state.

Services: reader_app.analysis.coordinator (read-only) and
reader_app.study.admin (lock, reopen, close; audited).
"""

from __future__ import annotations

from datetime import timedelta

import streamlit as st

from reader_app.analysis.coordinator import (
    IMPORTED,
    grading_progress,
    progress_display,
    reader_counts,
    reader_progress,
)
from reader_app.analysis.invites import group_differences
from reader_app.core.auth import AuthError
from reader_app.core.csv_safe import spreadsheet_csv
from reader_app.study.admin import StudyStateError, allowed_states, set_study_state
from reader_app.ui.components.flash import flash, show_flash
from reader_app.ui.components.safe_text import show_table
from reader_app.ui.context import db_session, load_reader, staff_user

STATE_LABELS = {"open": "Reopen", "locked": "Lock (pause)", "closed": "Close for good"}
STATE_HELP = {
    "open": "Readers can answer.",
    "locked": "Paused: readers are told to come back later; nothing they send is stored.",
    "closed": "Over: no more answers, and it cannot be reopened.",
}

user = staff_user("coordinator")
state = st.session_state
PAGE = "coordinator"  # its flash messages


def _set_state(target: str) -> None:
    with db_session() as session:
        actor, _ = load_reader(session, user)
        try:
            set_study_state(session=session, actor=actor, state=target)
        except (StudyStateError, AuthError) as exc:
            flash(PAGE, "error", str(exc))
            return
    flash(PAGE, "success", f"The study is now {target}.")


def _close_for_good() -> None:
    state["_co_confirm_close"] = False
    _set_state("closed")


stall_hours = int(state.get("co_stall_hours", 48))
with db_session() as session:
    coordinator, study = load_reader(session, user)
    progress = reader_progress(
        session=session, actor=coordinator, stall_after=timedelta(hours=stall_hours)
    )
    grading = grading_progress(session=session, actor=coordinator)

st.title("Progress")
show_flash(PAGE)

st.subheader(f"Study: {study.state}")
st.caption(STATE_HELP.get(study.state, ""))
targets = allowed_states(study.state)
reversible = [t for t in targets if t != "closed"]
if reversible:
    cols = st.columns(len(reversible) + 1)
    for col, target in zip(cols, reversible, strict=False):
        col.button(
            STATE_LABELS[target],
            key=f"co_state_{target}",
            on_click=_set_state,
            args=(target,),
            type="secondary",
            help=STATE_HELP[target],
        )
if "closed" in targets:
    # Closing cannot be undone, so it sits apart and asks once more.
    if not state.get("_co_confirm_close"):
        st.button(
            STATE_LABELS["closed"] + "…",
            key="co_state_closed",
            on_click=lambda: state.update(_co_confirm_close=True),
            help=STATE_HELP["closed"],
        )
    else:
        st.warning(
            "Close this study for good? No reader can answer again and it can never be "
            "reopened, so the analysed data set stays as it is now."
        )
        yes, no = st.columns(2)
        yes.button(
            "Yes, close for good",
            key="co_close_confirm",
            type="primary",
            on_click=_close_for_good,
        )
        no.button(
            "Cancel",
            key="co_close_cancel",
            on_click=lambda: state.update(_co_confirm_close=False),
        )
if not targets:
    st.caption("A closed study stays closed, so the analysed data set cannot change.")

st.subheader("Readers")
counts = reader_counts(progress)
# two rows of three: six in a row cut "Imported, no sign-in" to "Import..." at 1024 px
metrics = [*st.columns(3), *st.columns(3)]
metrics[0].metric("Invited", counts["invited"], help="readers with a sign-in link")
metrics[1].metric(
    "Imported, no sign-in",
    counts["imported"],
    help="readers whose answers came in a file (import-run); they cannot sign in",
)
metrics[2].metric("Not started", counts["not started"])
metrics[3].metric("In progress", counts["in progress"])
metrics[4].metric("Finished", counts["finished"])
metrics[5].metric("Stalled", counts["stalled"])
st.number_input(
    "Flag a reader as stalled after this many hours without activity",
    min_value=1,
    max_value=24 * 60,
    value=stall_hours,
    key="co_stall_hours",
)
if progress.empty:
    st.info("No reader is invited yet: invite readers on the Invites page.")
else:
    waiting = progress.loc[
        (progress["status"] == "not started") & (progress["invited"] != IMPORTED), "reader"
    ].tolist()
    stalled = progress.loc[progress["stalled"], "reader"].tolist()
    with st.container(key="co_attention"):
        if waiting:
            st.text("Not started: " + ", ".join(waiting))
        if stalled:
            st.text(f"Stalled (no activity for {stall_hours} h): " + ", ".join(stalled))
        if differences := group_differences(progress, code="reader"):
            st.text(
                "Group answered in the profile differs from the invite's (scoring and exports "
                "use the invite's group): " + "; ".join(differences)
            )
    show_table(progress_display(progress), key="co_readers")
    st.download_button(
        "Progress CSV",
        data=spreadsheet_csv(progress),
        file_name=f"{study.slug}-progress.csv",
        mime="text/csv",
        key="co_progress_csv",
        on_click="ignore",
    )

st.subheader("Grading")
if grading.answers == 0:
    st.info("No answers to grade yet.")
else:
    st.progress(
        grading.pct_answers_graded / 100.0,
        text=f"{grading.graded_answers} of {grading.answers} answers graded "
        f"({grading.pct_answers_graded:.0f}%), mode: {grading.mode}",
    )
    g = [*st.columns(2), *st.columns(2)]  # four in a row cut labels at 1024 px
    g[0].metric("Distinct answers", grading.items)
    g[1].metric("Graded", grading.graded_items)
    g[2].metric("Waiting for an adjudicator", grading.waiting_items + grading.in_review_items)
    g[3].metric("Key will grade", grading.key_ready_items)
    if grading.by_source:
        st.caption("Graded by: " + ", ".join(f"{k} {v}" for k, v in grading.by_source.items()))
