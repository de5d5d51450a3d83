"""The case bank, for the coordinator only: every case with a thumbnail and its details.

Case ids and histories are coordinator data; they never reach a reader. The
previews are small PNGs re-made from the content-addressed images the study
already stores (the first image, or a strip's montage): no file name, no DICOM
header, nothing the reader would not see.
"""

from __future__ import annotations

import math

import streamlit as st

from reader_app.analysis.coordinator import case_bank, thumbnail
from reader_app.ui.components.safe_text import escape_markdown
from reader_app.ui.context import asset_bytes, db_session, load_reader, staff_user
from reader_app.ui.navigation import NEW_STUDY

PER_PAGE = 24
COLUMNS = 4

user = staff_user("coordinator")


@st.cache_data(max_entries=1024, show_spinner=False)
def _thumb(sha256: str) -> bytes:
    return thumbnail(asset_bytes(sha256))


with db_session() as session:
    coordinator, study = load_reader(session, user)
    cards = case_bank(session=session, actor=coordinator)

st.title("Case bank")
if not cards:
    with st.container(key="cb_empty"):
        st.info(
            "This study has no cases yet, so there is nothing to preview. Add cases on the "
            "New study page (a ZIP with a manifest), or with `readerstudy import MANIFEST`."
        )
        st.page_link(f"ui/pages/{NEW_STUDY.file}", label="Set up or add cases")
    st.stop()
scored = sum(1 for c in cards if not c.practice)
st.caption(f"{len(cards)} case(s): {scored} scored, {len(cards) - scored} practice.")
pages = max(math.ceil(len(cards) / PER_PAGE), 1)
page = st.number_input("Page", min_value=1, max_value=pages, value=1, key="cb_page")
shown = cards[(page - 1) * PER_PAGE : page * PER_PAGE]
for start in range(0, len(shown), COLUMNS):
    cols = st.columns(COLUMNS)
    for col, card in zip(cols, shown[start : start + COLUMNS], strict=False):
        with col.container(border=True, key=f"cb_case_{card.case_id}"):
            if card.thumbnail_sha256:
                st.image(_thumb(card.thumbnail_sha256), width="stretch")
            else:  # a case without a stored image (e.g. its import was cut short)
                st.caption("No image stored for this case: nothing to preview.")
            st.text(card.source_id)
            details = [card.kind, card.modality or "", "practice" if card.practice else ""]
            summary = " · ".join(d for d in details if d)
            st.caption(
                escape_markdown(summary) + f" · {card.n_images} image(s) · {card.answers} answer(s)"
            )
            if card.history:
                st.text(card.history)
