"""How large an upload each page takes, in MB: read by the upload gate
(``reader_app/web/upload_gate.py``, per page) and by ``readerstudy serve`` (Streamlit's own cap).
"""

from __future__ import annotations

KEY_UPLOAD_MB = 4  # an answer key CSV: a few thousand rows of text
RUN_UPLOAD_MB = 16  # a model-run JSONL/CSV, a RadLE long-master CSV with replies


def largest_upload_mb(study_zip_mb: int) -> int:
    """Streamlit's own cap (server.maxUploadSize) must let the largest page limit through."""
    return max(study_zip_mb, KEY_UPLOAD_MB, RUN_UPLOAD_MB)


__all__ = ["KEY_UPLOAD_MB", "RUN_UPLOAD_MB", "largest_upload_mb"]
