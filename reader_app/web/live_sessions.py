"""Streamlit's live sessions, found by id for the doors in front of it (uploads, the exam)."""

from __future__ import annotations

from typing import Any

from reader_app.web.streamlit_seams import session_manager, user_info


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


def sessions_of_browser(browser: str, *, or_just_closed: bool = False) -> list[Any]:
    """The live AppSessions opened by this browser (its proof in the session's user info).

    ``or_just_closed`` as in :func:`live_session`. A check that needs no request body:
    the exam door refuses a browser with none of these before it reads a byte."""
    from streamlit.runtime import Runtime

    from reader_app.web.browser_proof import USER_KEY

    if not Runtime.exists():
        return []
    manager = session_manager(Runtime.instance())
    if manager is None:
        return []
    infos = manager.list_sessions() if or_just_closed else manager.list_active_sessions()
    return [info.session for info in infos if user_info(info.session).get(USER_KEY) == browser]


def state_value(session: Any, key: str) -> Any:
    """``session_state[key]`` of a live session, or None (absent, or the state mid-change)."""
    try:
        return session.session_state[key]
    except Exception:  # KeyError, or the session's state being replaced: nothing there
        return None
