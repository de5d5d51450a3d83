"""Case images: a large spot image, or a strip's labelled slices."""

from __future__ import annotations

import streamlit as st

from reader_app.exam.next_case import CaseView
from reader_app.ui.context import asset_bytes


def show_case_images(case: CaseView) -> None:
    images = [img for img in case.images if img.role != "montage"]
    if case.kind == "spot" or len(images) == 1:
        for img in images:
            st.image(asset_bytes(img.sha256), caption=img.label or None, width="stretch")
        return
    cols = st.columns(4)
    for i, img in enumerate(images):
        with cols[i % 4]:
            st.image(asset_bytes(img.sha256), caption=img.label or None, width="stretch")
