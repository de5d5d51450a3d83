"""Templates a coordinator downloads to start a study: ``manifest.csv`` and ``study.toml``.

The manifest's header is the fixed contract (``manifest.COLUMNS``, DESIGN.md
section 4), so the template is built from it rather than typed out again; the
two example rows show a single image (``spot``) and a DICOM series folder
(``strip``). Both templates load with the importer's own parsers once their
example files exist (tests/reader_app/ingest/test_manifest_template.py).
"""

from __future__ import annotations

import csv
import io
from typing import Final

from reader_app.ingest.manifest import COLUMNS

EXAMPLE_ROWS: Final = (
    {
        "case_id": "case-001",
        "kind": "spot",
        "files": "images/case-001.dcm",
        "diagnosis": "Pneumothorax",
        "synonyms": "PTX|collapsed lung",
        "history": "Sudden shortness of breath.",
        "modality": "CR",
        "practice": "false",
        "windows": "",
        "reviewed_by": "",
    },
    {
        "case_id": "case-002",
        "kind": "strip",
        "files": "series/case-002",
        "diagnosis": "Subdural haematoma",
        "synonyms": "subdural hematoma|SDH",
        "history": "Fall, now drowsy.",
        "modality": "CT",
        "practice": "true",
        "windows": "brain|bone",
        "reviewed_by": "",
    },
)

STUDY_TOML_TEMPLATE: Final = """\
# study.toml: every key is optional (docs/ingestion.md, "study.toml", lists them all)
title = "My reader study"
consent = "I agree that my answers are used for this study."
practice_count = 1
allow_revisions = false
likert_labels = [
  "Not at all confident",
  "Slightly confident",
  "Moderately confident",
  "Very confident",
  "Completely confident",
]
report_fields = false
default_windows = []

[grading]
adjudication = "single"
"""


def manifest_template_csv() -> str:
    """The manifest header and the example rows, as CSV text."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(COLUMNS), lineterminator="\n")
    writer.writeheader()
    writer.writerows(EXAMPLE_ROWS)
    return out.getvalue()
