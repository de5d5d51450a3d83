"""One blinded report to grade on the 0-40 rubric (SCORING.md section 6).

Stable keys: ``rubric_score``, ``rubric_note``, ``rubric_save`` (shortcut G),
``rubric_skip`` (shortcut S).
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from reader_app.grading.rubric import RubricItem
from reader_app.grading.rubric_grades import RUBRIC_MAX, RUBRIC_TIERS
from reader_app.ui.components.adjudication_item import reveal_controls, show_images

TIER_HELP = " · ".join(f"{name} {low}-{high}" for name, low, high in RUBRIC_TIERS)


def rubric_panel(item: RubricItem, on_save: Callable[[], None]) -> None:
    left, right = st.columns([3, 2], gap="large")
    with left:
        show_images(item.images, item.case_kind)
    with right:
        st.caption("Reference diagnosis")
        st.text(reveal_controls(item.reference) or "—")
        st.caption("Findings")
        with st.container(border=True, key="rubric_findings"):
            st.text(reveal_controls(item.findings) or "—")
        st.caption("Impression")
        with st.container(border=True, key="rubric_impression"):
            st.text(reveal_controls(item.impression) or "—")
        st.number_input(
            f"Grade (0-{RUBRIC_MAX})",
            min_value=0,
            max_value=RUBRIC_MAX,
            step=1,
            value=None,
            key="rubric_score",
            help=TIER_HELP,
        )
        st.text_input("Note (optional)", key="rubric_note", max_chars=2000)
        save, skip = st.columns(2)
        with save:
            st.button(
                "Save grade",
                key="rubric_save",
                type="primary",
                shortcut="G",
                on_click=on_save,
                width="stretch",
            )
        with skip:
            st.button(
                "Skip",
                key="rubric_skip",
                shortcut="S",
                on_click=_skip,
                args=(item.item_id,),
                width="stretch",
            )


def _skip(item_id: str) -> None:
    skipped: list[str] = st.session_state.setdefault("_rubric_skipped", [])
    if item_id not in skipped:
        skipped.append(item_id)


def skipped_reports() -> tuple[str, ...]:
    return tuple(st.session_state.get("_rubric_skipped", []))


def clear_rubric_form() -> None:
    st.session_state["rubric_score"] = None
    st.session_state["rubric_note"] = ""
