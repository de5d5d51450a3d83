"""The pages that have an uploader: who may upload there, and how much (web/upload_gate.py).

A page with ``st.file_uploader`` missing here gets every upload refused (403):
``tests/security/test_upload_pages.py`` keeps this table and the pages in step.
"""

from __future__ import annotations

from reader_app.core.upload_limits import KEY_UPLOAD_MB, RUN_UPLOAD_MB
from reader_app.ui.navigation import ANSWER_KEY, NEW_STUDY, RUNS
from reader_app.web.upload_gate import MB, UploadPage


def upload_pages(study_zip_mb: int) -> dict[str, UploadPage]:
    """By url path; the study ZIP's limit is the configured READERSTUDY_MAX_UPLOAD_MB."""
    return {
        ANSWER_KEY.url_path: UploadPage(("coordinator",), KEY_UPLOAD_MB * MB),
        NEW_STUDY.url_path: UploadPage(("coordinator",), study_zip_mb * MB),
        RUNS.url_path: UploadPage(("analyst",), RUN_UPLOAD_MB * MB),
    }
