"""docs/exam.md stays true: shortcuts, study settings and stored fields are documented."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

from reader_app.study.config import StudyConfig
from reader_app.ui.components.case_panel import SUBMIT_SHORTCUT

DOC = (Path(__file__).resolve().parents[3] / "docs" / "exam.md").read_text()


def test_shortcuts_are_documented() -> None:
    assert f"| {SUBMIT_SHORTCUT} |" in DOC


def test_every_study_setting_the_exam_reads_is_documented() -> None:
    for field in fields(StudyConfig):
        if field.name != "title":
            assert f"| `{field.name}` |" in DOC, field.name


def test_stored_meta_fields_are_documented() -> None:
    names = ("shown_at", "first_shown_at", "active_ms", "submitted_at", "image_sha256")
    for name in (*names, "paused_s", "windows", "enlarged"):
        assert f"`{name}`" in DOC, name
