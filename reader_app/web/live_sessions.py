"""Streamlit's live sessions, found by id for the doors in front of it (uploads, the exam)."""

from __future__ import annotations

from typing import Any

from reader_app.web.streamlit_seams import session_manager


def live_session(session_id: str, *, or_just_closed: bool = False) -> Any:
    """The live AppSession of this id, or None (Streamlit keeps no public accessor).

    ``or_just_closed``: also a session whose tab has just gone (Streamlit keeps it a
    while for a reconnect), for what that tab sends as it goes."""
    from streamlit.runtime import Runtime

    if not Runtime.exists():
        return None
    manager = session_manager(Runtime.instance())
    if manager is None:
        return None
    if or_just_closed:
        info = manager.get_session_info(session_id)
    else:
        info = manager.get_active_session_info(session_id)
    return info.session if info is not None else None


def state_value(session: Any, key: str) -> Any:
    """``session_state[key]`` of a live session, or None (absent, or the state mid-change)."""
    try:
        return session.session_state[key]
    except Exception:  # KeyError, or the session's state being replaced: nothing there
        return None
