"""The downloadable templates load with the importer's own parsers."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from reader_app.ingest.manifest import COLUMNS, load_manifest
from reader_app.ingest.manifest_template import STUDY_TOML_TEMPLATE, manifest_template_csv
from reader_app.ingest.study_config import load_study_config


def test_the_manifest_template_has_the_contract_header_and_loads(tmp_path: Path) -> None:
    text = manifest_template_csv()
    rows = list(csv.reader(io.StringIO(text)))
    assert tuple(rows[0]) == COLUMNS  # DESIGN.md section 4, in its order
    assert len(rows) == 3  # the header and two examples
    (tmp_path / "images").mkdir()
    (tmp_path / "images" / "case-001.dcm").write_bytes(b"")
    (tmp_path / "series" / "case-002").mkdir(parents=True)
    manifest = tmp_path / "manifest.csv"
    manifest.write_text(text, encoding="utf-8")
    loaded = load_manifest(manifest)
    assert [(e.case_id, e.kind, e.practice) for e in loaded.entries] == [
        ("case-001", "spot", False),
        ("case-002", "strip", True),
    ]
    assert loaded.entries[1].windows == ("brain", "bone")


def test_the_study_toml_template_parses(tmp_path: Path) -> None:
    path = tmp_path / "study.toml"
    path.write_text(STUDY_TOML_TEMPLATE, encoding="utf-8")
    config = load_study_config(path, title="slug", practice_cases=1)
    assert config.title == "My reader study" and config.practice_count == 1
    assert config.grading.adjudication == "single"
