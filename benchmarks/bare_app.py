"""The floor for the transition benchmark: a bare Streamlit page that swaps one PNG per click.

    BENCH_FLOOR_DIR=folder-of-PNGs streamlit run benchmarks/bare_app.py

Nothing but Streamlit's own round trip: a button (its click reruns the script),
then one ``st.image`` of the next stored PNG, passed as bytes with
``output_format="PNG"`` exactly as the exam's viewer does. The PNGs are the
same size as the exam's spot image and distinct (different bytes, so the browser
fetches and decodes each one anew). ``benchmarks/transition.py`` serves this
page next to the app, with the same ``.streamlit/config.toml``, and clicks both
in turn.
"""

from __future__ import annotations

import os
from pathlib import Path

import streamlit as st

FOLDER = Path(os.environ.get("BENCH_FLOOR_DIR", "."))


@st.cache_resource
def _names() -> list[Path]:
    return sorted(FOLDER.glob("*.png"))


@st.cache_data(max_entries=64, show_spinner=False)
def _png(path: str) -> bytes:
    return Path(path).read_bytes()


def _next() -> None:
    st.session_state["i"] = st.session_state.get("i", 0) + 1


st.set_page_config(page_title="floor", layout="wide")  # the exam page's layout
st.html("<style>.st-key-floor img { max-height: 62vh; object-fit: contain; }</style>")
names = _names()
i = int(st.session_state.get("i", 0))
left, right = st.columns([3, 2], gap="large")  # the image at the exam viewer's width
with right:
    st.button("Next", key="next", on_click=_next)
with left, st.container(key="floor"):
    st.image(_png(str(names[i % len(names)])), width="stretch", output_format="PNG")
