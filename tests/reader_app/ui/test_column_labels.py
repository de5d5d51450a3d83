"""Staff tables' headers: human words, derived by hand from the frames' column names."""

from __future__ import annotations

import pytest

from reader_app.ui.components.column_labels import column_label


@pytest.mark.parametrize(
    ("name", "label"),
    [
        ("completion_pct", "Completion %"),
        ("median_s_per_case", "Median s per case"),
        ("case_id", "Case"),
        ("pool_accuracy", "Pool accuracy"),
        ("models_disagreeing", "Models disagreeing"),
        ("judge_1_rubric", "Judge 1 rubric"),
        ("accuracy_ci_low", "Accuracy CI low"),
        ("profile_group", "Profile says"),
        ("radle_c", "RadLE-C"),
        ("grounding_rate", "G (grounding rate)"),
        ("reader", "Reader"),
        ("ICC(2,1)", "ICC(2,1)"),  # already for people
        ("Reports both scored", "Reports both scored"),
        ("N", "N"),
        ("p (sign-flip, points)", "p (sign-flip, points)"),  # a p-value: lower case
    ],
)
def test_column_label(name: str, label: str) -> None:
    assert column_label(name) == label


def test_no_label_is_snake_case() -> None:
    for name in ("last_activity", "invited_at", "keep_n", "occlusion_effect", "prompt_version"):
        assert "_" not in column_label(name) and column_label(name)[0].isupper()
