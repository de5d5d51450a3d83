"""Streamlit's uploaded-file manager over our disk spool (reader_app/web/upload_spool.py).

``st.App`` builds its runtime with a ``MemoryUploadedFileManager``: every uploaded
byte in memory for the session's life. ``with_disk_uploads`` has it build the same
runtime with ``DiskUploadedFileManager`` instead (``RuntimeConfig.uploaded_file_manager``,
Streamlit's own seam for it), so:

- the upload ``PUT`` is answered by ``SpoolPut`` behind reader_app/web/upload_gate.py
  (the bytes go to disk as they stream); Streamlit's own PUT route, which reads
  the whole body into memory, is never reached (``add_file`` refuses if it is);
- ``st.file_uploader`` still returns an ``UploadedFile`` with the name, but no
  bytes: a page reads the file on disk through ``stored_upload``
  (reader_app/ui/components/uploads.py, which asks the manager's ``stored``);
- the widget's ``DELETE`` and a session's end remove the file (Streamlit calls
  ``remove_file`` / ``remove_session_files``), and ``reap`` removes the files of
  sessions that expired unseen (Streamlit drops a disconnected session from its
  storage after ``server.disconnectedSessionTTL`` without ending it).

These rely on Streamlit internals of the pinned minor version (read through
reader_app/web/streamlit_seams.py, checked at start-up): ``App._create_runtime``
(copied below with one line changed, and replaced on the app), the runtime's
session manager, and the XSRF helpers of its Starlette server.
tests/security/test_disk_uploads.py fails loudly when any of them moves (README:
what to re-test when Streamlit moves).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from http.cookies import SimpleCookie
from typing import Any

import streamlit as st
from streamlit import config
from streamlit.runtime import Runtime, RuntimeConfig
from streamlit.runtime.stats import CACHE_MEMORY_FAMILY, CacheStat
from streamlit.runtime.uploaded_file_manager import (
    UploadedFileManager,
    UploadedFileRec,
    UploadFileUrlInfo,
)
from streamlit.web.server.starlette.starlette_routes import (
    BASE_ROUTE_MEDIA,
    BASE_ROUTE_UPLOAD_FILE,
)

from reader_app.web.browser_proof import header_value
from reader_app.web.security_headers import Scope
from reader_app.web.streamlit_seams import (
    on_script_error,
    replace_runtime_factory,
    script_path,
    session_manager,
)
from reader_app.web.upload_spool import StoredUpload, UploadSpool

log = logging.getLogger(__name__)

REAP_SECONDS = 2.0


class DiskUploadedFileManager(UploadedFileManager):
    """Streamlit's ``UploadedFileManager`` protocol, the files kept by ``UploadSpool``."""

    def __init__(self, spool: UploadSpool) -> None:
        self.spool = spool

    @property
    def stats_families(self) -> Sequence[str]:
        return (CACHE_MEMORY_FAMILY,)

    def get_files(self, session_id: str, file_ids: Sequence[str]) -> list[UploadedFileRec]:
        # data stays empty: the bytes are on disk (stored), never copied into memory
        return [
            UploadedFileRec(file_id=file_id, name=stored.name, type=stored.type, data=b"")
            for file_id in file_ids
            if (stored := self.spool.get(session_id, file_id)) is not None
        ]

    def stored(self, session_id: str, file_id: str) -> StoredUpload | None:
        """The file on disk (ui/components/uploads.stored_upload asks for it)."""
        return self.spool.get(session_id, file_id)

    def remove_session_files(self, session_id: str) -> None:
        self.spool.remove_session(session_id)

    def remove_file(self, session_id: str, file_id: str) -> None:
        self.spool.remove(session_id, file_id)

    def add_file(self, session_id: str, file: UploadedFileRec) -> None:
        raise RuntimeError("uploads go to disk through reader_app/web/upload_spool.py, not here")

    def get_upload_urls(
        self, session_id: str, file_names: Sequence[str]
    ) -> list[UploadFileUrlInfo]:
        urls = []
        for _ in file_names:
            url = f"/{BASE_ROUTE_UPLOAD_FILE}/{session_id}/{uuid.uuid4()}"
            urls.append(UploadFileUrlInfo(url.rsplit("/", 1)[1], url, url))
        return urls

    def get_stats(self, family_names: Sequence[str] | None = None) -> dict[str, list[CacheStat]]:
        # Streamlit's metrics count memory; these bytes are on disk: none held
        return {}


def xsrf_ok(scope: Scope) -> bool:
    """Streamlit's own check of the upload's XSRF header against its cookie."""
    from streamlit.web.server.server_util import is_xsrf_enabled
    from streamlit.web.server.starlette.starlette_app_utils import validate_xsrf_token
    from streamlit.web.server.starlette.starlette_server_config import XSRF_COOKIE_NAME

    if not is_xsrf_enabled():
        return True
    jar: SimpleCookie = SimpleCookie()
    jar.load(header_value(scope, b"cookie") or "")
    cookie = jar.get(XSRF_COOKIE_NAME)
    return validate_xsrf_token(
        header_value(scope, b"x-xsrftoken"), cookie.value if cookie is not None else None
    )


def _session_known(runtime: Runtime, session_id: str) -> bool:
    """Live, or disconnected and still resumable (within server.disconnectedSessionTTL)."""
    manager = session_manager(runtime)
    return manager is not None and manager.get_session_info(session_id) is not None


def reap(spool: UploadSpool) -> int:
    """Remove the files of sessions Streamlit no longer knows; how many sessions. Run it on
    the server's event loop: Streamlit touches its session storage only there."""
    if not Runtime.exists():
        return 0
    runtime = Runtime.instance()
    gone = [s for s in spool.sessions() if not _session_known(runtime, s)]
    for session_id in gone:
        spool.remove_session(session_id)
    return len(gone)


def reaper(spool: UploadSpool) -> Callable[[Any], AbstractAsyncContextManager[None]]:
    """An ``st.App`` lifespan that reaps ended sessions' files every few seconds."""

    @asynccontextmanager
    async def lifespan(_app: Any) -> AsyncIterator[None]:
        async def loop() -> None:
            while True:
                await asyncio.sleep(REAP_SECONDS)
                try:
                    reap(spool)
                except Exception:  # never let the reaper die
                    log.exception("reaping uploads of ended sessions failed")

        task = asyncio.create_task(loop())
        try:
            yield
        finally:
            task.cancel()

    return lifespan


def with_disk_uploads(app: st.App, spool: UploadSpool) -> None:
    """Have ``app`` build its runtime with our uploaded-file manager.

    ``streamlit run`` finds the app by reading the script for ``app = st.App(...)``
    (streamlit/web/server/app_discovery.py, by AST), so asgi.py builds a plain
    ``st.App`` and this replaces its runtime factory, before anything called it.
    """

    def create_runtime() -> Runtime:
        """Streamlit 1.67's ``App._create_runtime``, our uploaded-file manager in it."""
        from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
        from streamlit.runtime.memory_session_storage import MemorySessionStorage
        from streamlit.web.cache_storage_manager_config import (
            create_default_cache_storage_manager,
        )

        path = script_path(app)
        if not path.is_file():
            raise FileNotFoundError(f"Streamlit script not found: '{path}'.")
        return Runtime(
            RuntimeConfig(
                script_path=str(path),
                media_file_storage=MemoryMediaFileStorage(f"/{BASE_ROUTE_MEDIA}"),
                uploaded_file_manager=DiskUploadedFileManager(spool),  # the one change
                cache_storage_manager=create_default_cache_storage_manager(),
                is_hello=False,
                session_storage=MemorySessionStorage(
                    ttl_seconds=config.get_option("server.disconnectedSessionTTL")
                ),
                on_script_error=on_script_error(app),
            ),
        )

    replace_runtime_factory(app, create_runtime)


__all__ = [
    "DiskUploadedFileManager",
    "reap",
    "reaper",
    "with_disk_uploads",
    "xsrf_ok",
]
