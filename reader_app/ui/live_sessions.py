"""Streamlit's live sessions, found by id for the doors in front of it (uploads, the exam)."""

from __future__ import annotations

from typing import Any


def live_session(session_id: str) -> Any:
    """The live AppSession of this id, or None (Streamlit keeps no public accessor)."""
    from streamlit.runtime import Runtime

    if not Runtime.exists():
        return None
    manager = getattr(Runtime.instance(), "_session_mgr", None)
    info = manager.get_active_session_info(session_id) if manager is not None else None
    return info.session if info is not None else None


def state_value(session: Any, key: str) -> Any:
    """``session_state[key]`` of a live session, or None (absent, or the state mid-change)."""
    try:
        return session.session_state[key]
    except Exception:  # KeyError, or the session's state being replaced: nothing there
        return None
