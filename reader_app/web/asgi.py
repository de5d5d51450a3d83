"""What ``readerstudy serve`` runs: Streamlit's ``st.App`` around main.py, behind our doors.

``streamlit run reader_app/web/asgi.py`` finds ``app`` (Streamlit's ASGI app
discovery) and serves it with uvicorn, honouring the same ``--server.*`` flags
and .streamlit/config.toml as ``streamlit run main.py``. In front of
Streamlit's own routes, outermost first:

- reader_app/web/security_headers.py: ``Referrer-Policy: no-referrer`` on every response;
- reader_app/web/origin_check.py: no websocket or upload from another web site;
- reader_app/web/browser_proof.py: every session bound to the browser that opened it;
- reader_app/web/upload_gate.py: uploads only from signed-in staff on a page with an
  uploader, within that page's limit; written to disk as they stream
  (reader_app/web/upload_spool.py, behind Streamlit's uploaded-file manager:
  reader_app/web/disk_uploads.py).

At start, a background thread imports what the first page runs import and scores the
latest studies for the analysts' sign-in (reader_app/web/prewarm.py).

Its lifespan sets TCP_NODELAY on the listening socket first (reader_app/web/tcp_nodelay.py:
Streamlit's own binding leaves every connection with Nagle's algorithm).

One route of ours beside Streamlit's: reader_app/web/exam_door.py, where the exam
panel posts its answer and its last draft, for the session that drew it, from its
browser.

Importing this module also runs the settings check (``load_settings``: the
cookie secrets included, and ``server.cookieSecret`` wherever Streamlit read it:
reader_app/web/server_secret.py), so a bad configuration stops the server at start.
"""

from __future__ import annotations

import sys
from pathlib import Path

import streamlit as st
from starlette.middleware import Middleware
from streamlit import config
from streamlit.util import calc_hash

from reader_app.core.logs import configure_logging
from reader_app.core.settings import SettingsError, load_settings
from reader_app.ui.navigation import ALL_PAGES
from reader_app.web.browser_proof import TRUSTED_USER_HEADERS, USER_KEY, BrowserProof
from reader_app.web.disk_uploads import reaper, with_disk_uploads, xsrf_ok
from reader_app.web.exam_door import exam_routes
from reader_app.web.live_sessions import live_session, state_value
from reader_app.web.origin_check import SameOrigin
from reader_app.web.prewarm import start_prewarm
from reader_app.web.security_headers import SecurityHeaders
from reader_app.web.server_secret import check_server_cookie_secret
from reader_app.web.streamlit_seams import (
    SeamMissing,
    check_seams,
    keep_upload_urls_across_runs,
    user_info,
)
from reader_app.web.tcp_nodelay import with_nodelay
from reader_app.web.upload_gate import UploadGate, UploadSession
from reader_app.web.upload_pages import upload_pages
from reader_app.web.upload_spool import UPLOADS, SpoolPut, UploadSpool

MAIN = Path(__file__).resolve().parent.parent / "main.py"
# st.Page's script hash is the hash of its url path (streamlit/navigation/page.py)
PAGE_BY_HASH = {calc_hash(spec.url_path): spec.url_path for spec in ALL_PAGES}


def upload_session(session_id: str) -> UploadSession | None:
    session = live_session(session_id)
    if session is None:
        return None
    info = user_info(session)
    signed_in = state_value(session, "_signed_in")  # reader_app.ui.context.SignedIn
    return UploadSession(
        browser=info.get(USER_KEY),
        role=getattr(signed_in, "role", None),
        page=PAGE_BY_HASH.get(session.page_script_hash),
    )


def _bind_sessions_to_browsers() -> None:
    """Streamlit resumes a session only for the same user info: put the proof in it."""
    current = config.get_option("server.trustedUserHeaders")
    wanted = {**(current if isinstance(current, dict) else {}), **TRUSTED_USER_HEADERS}
    if current != wanted:
        config.set_option("server.trustedUserHeaders", wanted)


try:  # every private Streamlit name we read is still there (web/streamlit_seams.py)
    check_seams()
except SeamMissing as exc:
    print(f"readerstudy: {exc}", file=sys.stderr)
    raise SystemExit(2) from exc
settings = load_settings()
try:  # server.cookieSecret from config.toml or a flag, too
    check_server_cookie_secret()
except SettingsError as exc:
    print(f"readerstudy: configuration error: {exc}", file=sys.stderr)
    raise SystemExit(2) from exc
_bind_sessions_to_browsers()
keep_upload_urls_across_runs()  # a file chosen as a rerun starts still uploads
spool = UploadSpool(settings.data_dir / UPLOADS)  # sweeps what dead servers left first
configure_logging()  # the lifespan logs before main.py first runs
app = st.App(
    MAIN,
    # TCP_NODELAY on the listener (web/tcp_nodelay.py), then the reaper, which removes
    # the files of sessions that expired
    lifespan=with_nodelay(reaper(spool)),
    routes=exam_routes(settings),  # the exam panel's answer and last draft
    middleware=[
        Middleware(SecurityHeaders),
        Middleware(SameOrigin, allowed=[settings.base_url]),
        Middleware(BrowserProof),
        Middleware(
            UploadGate,
            lookup=upload_session,
            pages=upload_pages(settings.max_upload_mb),
            keep_only=spool.keep_only,
            put_app=SpoolPut(spool, xsrf_ok),
        ),
    ],
)
with_disk_uploads(app, spool)  # its runtime keeps uploads on disk (not in memory)
# the first page runs' imports and the analyst's scored study, in a thread, before any
# visit (web/prewarm.py; READERSTUDY_PREWARM=off turns it off)
start_prewarm(settings.database_url)
