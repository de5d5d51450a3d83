"""The file on disk behind an ``st.file_uploader`` value (pages read uploads through this).

The served app keeps uploads on disk, never in memory: its uploaded-file manager
(``reader_app/web/disk_uploads.py``, one layer above the pages) answers ``stored`` with
the spooled file. Pages ask here, so they need nothing of the web layer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol, runtime_checkable

from streamlit.runtime import Runtime
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx
from streamlit.runtime.uploaded_file_manager import UploadedFile


class OnDisk(Protocol):
    """An uploaded file on disk (``reader_app.web.upload_spool.StoredUpload``)."""

    @property
    def path(self) -> Path: ...

    @property
    def size(self) -> int: ...


@runtime_checkable
class DiskFiles(Protocol):
    """An uploaded-file manager that keeps the files on disk."""

    def stored(self, session_id: str, file_id: str) -> OnDisk | None: ...


def stored_upload(upload: UploadedFile) -> OnDisk:
    """The file on disk behind an ``st.file_uploader`` value of this session."""
    ctx = get_script_run_ctx()
    manager = Runtime.instance().uploaded_file_mgr
    stored = (
        manager.stored(ctx.session_id, upload.file_id)
        if ctx is not None and isinstance(manager, DiskFiles)
        else None
    )
    if stored is None:
        raise FileNotFoundError("the uploaded file is gone; choose it again")
    return stored


__all__ = ["DiskFiles", "OnDisk", "stored_upload"]
