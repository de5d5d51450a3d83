"""What ``readerstudy serve`` runs: Streamlit's ``st.App`` around main.py, behind our doors.

``streamlit run reader_app/asgi.py`` finds ``app`` (Streamlit's ASGI app
discovery) and serves it with uvicorn, honouring the same ``--server.*`` flags
and .streamlit/config.toml as ``streamlit run main.py``. In front of
Streamlit's own routes, outermost first:

- reader_app/core/security_headers.py: ``Referrer-Policy: no-referrer`` on every response;
- reader_app/core/origin_check.py: no websocket or upload from another web site;
- reader_app/core/browser_proof.py: every session bound to the browser that opened it;
- reader_app/core/upload_gate.py: uploads only from signed-in staff on a page with an
  uploader, within that page's limit.

Importing this module also runs the settings check (``load_settings``: the
cookie secrets included), so a bad configuration stops the server at start.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import streamlit as st
from starlette.middleware import Middleware
from streamlit import config
from streamlit.util import calc_hash

from reader_app.core.browser_proof import TRUSTED_USER_HEADERS, USER_KEY, BrowserProof
from reader_app.core.origin_check import SameOrigin
from reader_app.core.security_headers import SecurityHeaders
from reader_app.core.settings import load_settings
from reader_app.core.upload_gate import UploadGate, UploadSession
from reader_app.ui.navigation import ALL_PAGES
from reader_app.ui.upload_pages import upload_pages

MAIN = Path(__file__).resolve().parent / "main.py"
# st.Page's script hash is the hash of its url path (streamlit/navigation/page.py)
PAGE_BY_HASH = {calc_hash(spec.url_path): spec.url_path for spec in ALL_PAGES}


def _session(session_id: str) -> Any:
    """The live AppSession of this id, or None (Streamlit keeps no public accessor)."""
    from streamlit.runtime import Runtime

    if not Runtime.exists():
        return None
    manager = getattr(Runtime.instance(), "_session_mgr", None)
    info = manager.get_active_session_info(session_id) if manager is not None else None
    return info.session if info is not None else None


def upload_session(session_id: str) -> UploadSession | None:
    session = _session(session_id)
    if session is None:
        return None
    user_info = getattr(session, "_user_info", None) or {}
    try:
        signed_in = session.session_state["_signed_in"]  # reader_app.ui.context.SignedIn
    except Exception:  # absent (KeyError), or the state mid-change: not signed in
        signed_in = None
    return UploadSession(
        browser=user_info.get(USER_KEY),
        role=getattr(signed_in, "role", None),
        page=PAGE_BY_HASH.get(session.page_script_hash),
    )


def keep_only(session_id: str, file_id: str) -> None:
    """Drop the session's other uploaded files: one file per session at a time."""
    from streamlit.runtime import Runtime

    manager: Any = Runtime.instance().uploaded_file_mgr  # a MemoryUploadedFileManager
    stored = getattr(manager, "file_storage", {}).get(session_id, {})
    for other in [f for f in list(stored) if f != file_id]:
        manager.remove_file(session_id, other)


def _bind_sessions_to_browsers() -> None:
    """Streamlit resumes a session only for the same user info: put the proof in it."""
    current = config.get_option("server.trustedUserHeaders")
    wanted = {**(current if isinstance(current, dict) else {}), **TRUSTED_USER_HEADERS}
    if current != wanted:
        config.set_option("server.trustedUserHeaders", wanted)


settings = load_settings()
_bind_sessions_to_browsers()
app = st.App(
    MAIN,
    middleware=[
        Middleware(SecurityHeaders),
        Middleware(SameOrigin, allowed=[settings.base_url]),
        Middleware(BrowserProof),
        Middleware(
            UploadGate,
            lookup=upload_session,
            pages=upload_pages(settings.max_upload_mb),
            keep_only=keep_only,
        ),
    ],
)
