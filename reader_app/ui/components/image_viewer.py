"""A spot case: one large image, window presets, a full-resolution view.

Keyed widgets: ``window`` (preset), ``image`` (which image, if several), ``enlarge``.

Images are passed to ``st.image`` as the stored PNG bytes with
``output_format="PNG"``: ingest stores them at most 1460 px wide, so Streamlit
serves them byte for byte, never re-encoded per rerun.

:func:`prefetch_images` puts the images a case's viewer will show first on the
page, invisible, so the browser has fetched and decoded them before that case
is drawn: Streamlit names an image by a hash of its bytes, so the viewer's
``<img>`` then has the same URL and the browser takes it, decoded, from its
memory cache. "Invisible" is the CSS in ``case_viewer``: painted (an image that
is not painted is not decoded), but behind the page and 0.3 % opaque.
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from reader_app.exam.next_case import CaseView, ImageView
from reader_app.exam.windows import default_window, group_by_window, window_label
from reader_app.ui.context import asset_bytes


def reset_viewer(case: CaseView, preferred_windows: Sequence[str]) -> None:
    """Start a new case on its default window, first image and first slice."""
    names = list(group_by_window(case.reader_images))
    st.session_state["window"] = default_window(names, preferred_windows)
    st.session_state["image"] = 0
    st.session_state["slice"] = st.session_state["_slice_shown"] = 1
    st.session_state["_windows_seen"] = set()
    st.session_state["_enlarged"] = False


def first_images(case: CaseView, preferred_windows: Sequence[str]) -> list[ImageView]:
    """What the viewer shows when a case opens: its default window's first image, or
    for a strip that window's slices (the large one is the first slice)."""
    groups = group_by_window(case.reader_images)
    if not groups:
        return []
    shown = groups[default_window(list(groups), preferred_windows)]
    strip = case.kind == "strip" and len(case.reader_images) > 1
    return shown if strip else shown[:1]


def prefetch_images(case: CaseView, preferred_windows: Sequence[str]) -> None:
    """The first images of ``case``, invisible (see the module notes)."""
    images = first_images(case, preferred_windows)
    if images:
        with st.container(key="prefetch"):
            st.image([asset_bytes(img.sha256) for img in images], output_format="PNG")


def show_image(img: ImageView, *, caption: str | None = None) -> None:
    st.image(
        asset_bytes(img.sha256),
        caption=caption if caption is not None else (img.label or None),
        width="stretch",
        output_format="PNG",
    )


def window_picker(names: list[str]) -> str:
    """Preset buttons when the case has more than one window; returns the chosen one."""
    if st.session_state.get("window") not in names:
        st.session_state["window"] = names[0]
    if len(names) > 1:
        st.segmented_control(
            "Window",
            options=names,
            format_func=window_label,
            key="window",
            required=True,
            label_visibility="collapsed",
        )
    chosen = str(st.session_state["window"])
    st.session_state.setdefault("_windows_seen", set()).add(chosen)
    return chosen


def enlarge_button(img: ImageView) -> None:
    """Click to open the image at full resolution in a dialog."""
    if st.button(
        "Enlarge",
        key="enlarge",
        icon=":material/zoom_in:",
        shortcut="F",
    ):
        enlarge_dialog(img)


@st.dialog("Full resolution", width=1600)
def enlarge_dialog(img: ImageView) -> None:
    """The stored PNG itself (every pixel the case has), as large as the window allows."""
    st.session_state["_enlarged"] = True
    st.caption(
        f"{img.label + ' · ' if img.label else ''}{img.width} × {img.height} px · Esc closes"
    )
    with st.container(key="enlarged"):
        st.image(asset_bytes(img.sha256), width="stretch", output_format="PNG")


@st.fragment
def spot_viewer(case: CaseView) -> None:
    """One large image; presets and an image chooser only when the case has them."""
    groups = group_by_window(case.reader_images)
    with st.container(key="viewer"):
        tools, zoom = st.columns([5, 1], vertical_alignment="center")
        with tools:
            images = groups[window_picker(list(groups))]
            if len(images) > 1:
                st.segmented_control(
                    "Image",
                    options=list(range(len(images))),
                    format_func=lambda i: f"Image {i + 1}",
                    key="image",
                    required=True,
                    label_visibility="collapsed",
                )
        img = images[min(int(st.session_state.get("image") or 0), len(images) - 1)]
        with zoom:
            enlarge_button(img)
        show_image(img)
