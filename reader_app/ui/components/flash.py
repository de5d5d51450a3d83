"""A message set in a widget callback and shown once, on the rerun that follows.

``show_notice`` draws a notice (what the last action did) in the page's flow, where
the page is at: never a floating toast, so it never covers another notice or a
heading (issue 38: a toast of "Saved your answer to practice case 1" lay over
"Practice is over" and the practice's "Reference answer").

A callback runs before the page is drawn again, so what it has to say
(saved, refused and why) is kept in ``st.session_state`` under the page's own
key and shown at the top of the page by ``show_flash``, then forgotten. The
message goes through ``escape_markdown``: it often quotes an exception, which
can quote a file name, a code or an answer.
"""

from __future__ import annotations

from typing import Literal

import streamlit as st

from reader_app.ui.components.safe_text import escape_markdown

FlashKind = Literal["success", "info", "error"]


def _key(page: str) -> str:
    return f"_flash_{page}"


def flash(page: str, kind: FlashKind, message: str) -> None:
    """Keep ``message`` for the next run of ``page`` (the latest one wins)."""
    st.session_state[_key(page)] = (kind, message)


def show_flash(page: str) -> None:
    """Show and forget the message kept for ``page``, if any."""
    kept = st.session_state.pop(_key(page), None)
    if kept is None:
        return
    kind, message = kept
    show = {"error": st.error, "info": st.info}.get(kind, st.success)
    show(escape_markdown(message))


def show_notice(notice: str | None) -> None:
    """What the last action did, in the page's flow (a green line for "Saved ...").

    ``notice`` is one of the exam's own sentences ("Saved your answer to case 3."), as
    the toast it replaces showed it: never an answer, a file name or an exception, so it
    is shown as written (escaping would put invisible marks into "case 3.")."""
    if not notice:
        return
    show = st.success if notice.startswith("Saved") else st.info
    show(notice)
