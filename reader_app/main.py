"""Streamlit entry point: page config, sign-in gate, role-based navigation.

A reader who has not yet consented or filled the profile is offered only that
step's page, at the app's root address, so a reload always lands on the step
they are at; then the exam.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from pathlib import Path

import streamlit as st

from reader_app.core.logs import configure_logging
from reader_app.exam.onboarding import onboarding_step
from reader_app.study.config import study_settings
from reader_app.ui.components.sign_in_panel import sign_in_panel
from reader_app.ui.components.staff_style import staff_style
from reader_app.ui.components.study_switcher import study_sidebar
from reader_app.ui.context import db_session, finish_sign_out, load_reader, sign_in
from reader_app.ui.navigation import PAGES_DIR, other_pages, pages_for

FAVICON = Path(__file__).resolve().parent / "ui" / "static" / "favicon.png"


@st.cache_resource(show_spinner=False)
def freeze_startup_heap() -> bool:
    """Hide the objects of the imported libraries from the garbage collector, once.

    Streamlit runs a full ``gc.collect(2)`` after every script run
    (``runner.postScriptGC``), holding the GIL while it walks every tracked object:
    with ~300,000 objects from streamlit, SQLAlchemy, pandas and friends that took
    250-500 ms on a loaded 2-core machine, twice per answer (the form's fragment run,
    then the page run), before the next case could reach the browser. Modules,
    classes and functions live as long as the process anyway; ``gc.freeze()`` moves
    them to the permanent generation, so each collection only walks what runs create.
    """
    gc.collect()
    gc.freeze()
    return True


# our own PNG, served by this server (RGBA: Streamlit would re-encode an RGB one as JPEG):
# an emoji favicon made Streamlit import its emoji catalogue on the first page run
# (0.03-0.08 s, issue 43), and a Material one made every browser fetch the icon from
# fonts.gstatic.com (no page of ours may call another host). A Path, not a str: a str is
# first checked as an emoji, with that same import
st.set_page_config(page_title="readerstudy", page_icon=FAVICON, layout="wide")
configure_logging()
freeze_startup_heap()

finish_sign_out()
user = sign_in()
if user is None:
    sign_in_panel()
    st.stop()
assert user is not None

step = st.session_state.get("_step")
if step != "exam":
    with db_session() as session:
        reader, study = load_reader(session, user)
        step = onboarding_step(reader, study_settings(study))
        st.session_state["_study_name"] = f"{study.title} ({study.slug})"
    st.session_state["_step"] = step
if user.role != "reader":  # staff always see which study they are working on, and switch
    study_sidebar(user, st.session_state.get("_study_name", ""))
    staff_style()  # AA text where Streamlit draws text in the primary colour

specs = pages_for(user.role, step)
if not specs:
    st.title("readerstudy")
    st.info(f"Signed in as {user.code} ({user.role}). No pages are available for this role yet.")
    st.stop()
pages = [
    st.Page(PAGES_DIR / s.file, title=s.title, icon=s.icon, url_path=s.url_path, default=(i == 0))
    for i, s in enumerate(specs)
]


def _redirect_to(page: st.Page) -> Callable[[], None]:
    def redirect() -> None:
        st.switch_page(page, query_params=st.query_params.to_dict())

    return redirect


# Another role's address (a staff URL opened by a reader, an onboarding step already
# done): a hidden page that sends the user to their own first page, instead of
# Streamlit's "Page not found" dialog.
redirects = [
    st.Page(_redirect_to(pages[0]), title=s.title, url_path=s.url_path, visibility="hidden")
    for s in other_pages(user.role, step)
]
st.navigation([*pages, *redirects], position="sidebar" if len(pages) > 1 else "hidden").run()
