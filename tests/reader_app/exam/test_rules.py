"""Pure exam rules: study settings, progress labels, window presets (no database)."""

from __future__ import annotations

import pytest

from reader_app.exam.next_case import CaseView, ImageView
from reader_app.exam.order import OrderSummary
from reader_app.exam.progress import progress_at
from reader_app.exam.windows import default_window, group_by_window, window_label
from reader_app.models import Study
from reader_app.study.config import DEFAULT_LIKERT, study_settings


def _study(config: str) -> Study:
    return Study(slug="s", title="Fallback title", config_json=config)


def test_config_defaults_when_keys_are_missing() -> None:
    config = study_settings(_study("{}"))
    assert config.title == "Fallback title"
    assert config.consent == ""
    assert config.practice_count is None
    assert config.allow_revisions is False
    assert config.likert_labels == DEFAULT_LIKERT
    assert config.default_windows == ()


def test_config_reads_every_key_and_ignores_malformed_values() -> None:
    good = study_settings(
        _study(
            '{"title": "Chest", "consent": " Agree? ", "practice_count": 2, '
            '"allow_revisions": true, "likert_labels": ["a","b","c","d","e"], '
            '"default_windows": ["lung", "bone"]}'
        )
    )
    assert (good.title, good.consent, good.practice_count, good.allow_revisions) == (
        "Chest",
        "Agree?",
        2,
        True,
    )
    assert good.likert_labels == ("a", "b", "c", "d", "e")
    assert good.default_windows == ("lung", "bone")
    bad = study_settings(
        _study(
            '{"practice_count": -1, "allow_revisions": "yes", "likert_labels": ["a","b"], '
            '"default_windows": "lung"}'
        )
    )
    assert bad.practice_count is None and bad.allow_revisions is False
    assert bad.likert_labels == DEFAULT_LIKERT
    assert bad.default_windows == ("lung",)


@pytest.mark.parametrize(
    ("slot", "label", "fraction", "practice"),
    [
        (0, "Practice 1 of 2", 0.0, True),
        (1, "Practice 2 of 2", 0.5, True),
        (2, "Case 1 of 4", 0.0, False),  # practice is not counted in "of 4"
        (5, "Case 4 of 4", 0.75, False),
        (None, "All 4 cases answered", 1.0, False),
    ],
)
def test_progress_labels(slot: int | None, label: str, fraction: float, practice: bool) -> None:
    progress = progress_at(slot, OrderSummary(total=6, practice=2, seed=1))
    assert (progress.label, progress.fraction, progress.practice) == (label, fraction, practice)


def test_progress_without_practice_reads_case_37_of_200() -> None:
    assert progress_at(36, OrderSummary(total=200, practice=0, seed=1)).label == "Case 37 of 200"


def _img(window: str | None, role: str = "slice", label: str = "") -> ImageView:
    return ImageView("0" * 64, label, window, role, 10, 10)


def test_windows_are_grouped_in_a_familiar_order() -> None:
    images = [_img("bone"), _img("custom"), _img("lung"), _img("lung"), _img("mediastinum")]
    groups = group_by_window(images)
    assert list(groups) == ["lung", "mediastinum", "bone", "custom"]
    assert len(groups["lung"]) == 2
    assert list(group_by_window([_img(None)])) == [""]
    assert [window_label(n) for n in ("lung", "file", "auto", "", "custom")] == [
        "Lung",
        "Original",
        "Full range",
        "Image",
        "Custom",
    ]


def test_default_window_prefers_the_studys_first_available() -> None:
    assert default_window(["lung", "bone"], ["mediastinum", "bone"]) == "bone"
    assert default_window(["lung", "bone"], []) == "lung"
    assert default_window([], ["lung"]) == ""


def test_reader_images_hide_the_montage_unless_it_is_all_there_is() -> None:
    slices = (_img("lung"), _img("lung"), _img("lung", role="montage"))
    case = CaseView("c1", "strip", False, None, 0, 1, slices)
    assert [i.role for i in case.reader_images] == ["slice", "slice"]
    only = CaseView("c2", "strip", False, None, 0, 1, (_img("lung", role="montage"),))
    assert len(only.reader_images) == 1
