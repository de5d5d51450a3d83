"""SCORING.md section 9: the causal grounding audit's figures, hand-derived."""

from __future__ import annotations

import math

import pytest

from scoring import AuditParams, audit_report, category_of
from scoring.frame import FrameError

CASES = ["1", "2", "3", "4"]


def _rows(
    correct: dict[str, set[str]], held: dict[str, set[str]] | None = None
) -> list[dict[str, object]]:
    held = held or {}
    return [
        {"arm": arm, "case_id": c, "correct": int(c in ok), "likert": 3 if c == "1" else 4}
        for arm, ok in correct.items()
        for c in sorted(held.get(arm, set(CASES)))
    ]


WORKED = {
    "original": {"1", "2", "3"},
    "occlude_relevant": {"3"},
    "occlude_irrelevant": {"1", "2", "3"},
    "swap": {"1", "2"},
    "text_only": {"3"},
}


def test_the_worked_example_of_section_9() -> None:
    report = audit_report(_rows(WORKED), CASES, AuditParams(n_boot=0))
    assert report["k"] == 3
    assert report["keep"]["occlude_relevant"]["value"] == pytest.approx(1 / 3)
    assert report["keep"]["occlude_irrelevant"]["value"] == 1.0
    assert report["keep"]["swap"]["value"] == pytest.approx(2 / 3)
    assert report["occlusion_effect"]["value"] == pytest.approx(2 / 3)
    assert report["stability"]["value"] == pytest.approx(2 / 3)
    assert report["category"] == "unstable"  # S = 2/3 < 0.8
    assert report["arms"]["original"] | {"ci": None} == {
        "n": 4,
        "correct": 3,
        "accuracy": 0.75,
        "ci": None,
    }
    assert report["arms"]["text_only"]["accuracy"] == 0.25
    assert report["text_gap"]["value"] == pytest.approx(0.5)
    # of K = {1, 2, 3}, case 3 stays correct occluded (Likert 4), 1 and 2 do not (3 and 4)
    confidence = report["confidence"]
    assert confidence["not_image_dependent"] == {"n": 1, "mean_likert": 4.0}
    assert confidence["image_dependent"] == {"n": 2, "mean_likert": 3.5}


def test_categories_at_the_thresholds() -> None:
    assert category_of(0.2, 0.8) == "uses the image"
    assert category_of(0.19, 0.8) == "ignores the image"
    assert category_of(1.0, 0.79) == "unstable"
    assert category_of(math.nan, 1.0) == "n/a"
    assert category_of(0.5, 0.9, AuditParams(tau_effect=0.6)) == "ignores the image"


def test_a_model_that_reads_the_lesion_and_one_that_reads_the_history() -> None:
    seeing = {
        "original": set(CASES),
        "occlude_relevant": set(),
        "occlude_irrelevant": set(CASES),
        "swap": set(CASES),
        "text_only": set(),
    }
    report = audit_report(_rows(seeing), CASES, AuditParams(n_boot=200))
    assert report["occlusion_effect"]["value"] == 1.0
    assert report["occlusion_effect"]["ci"] == [1.0, 1.0]  # every resample of K agrees
    assert report["category"] == "uses the image"
    assert report["text_gap"]["value"] == 1.0
    blind = {arm: set(CASES) for arm in seeing}
    report = audit_report(_rows(blind), CASES, AuditParams(n_boot=200))
    assert report["occlusion_effect"]["value"] == 0.0
    assert report["category"] == "ignores the image"
    assert report["text_gap"]["value"] == 0.0


def test_swap_without_partner_and_empty_k_are_nan() -> None:
    held = {"swap": {"1"}}
    report = audit_report(_rows(WORKED, held), CASES, AuditParams(n_boot=0))
    assert report["arms"]["swap"] == {"n": 1, "correct": 1, "accuracy": 1.0, "ci": [math.nan] * 2}
    assert report["keep"]["swap"]["n"] == 1
    none_right: dict[str, set[str]] = {arm: set() for arm in WORKED}
    report = audit_report(_rows(none_right), CASES, AuditParams(n_boot=50))
    assert math.isnan(report["occlusion_effect"]["value"])
    assert all(math.isnan(x) for x in report["occlusion_effect"]["ci"])
    assert report["category"] == "n/a"


def test_the_bootstrap_pairs_arms_on_one_resample() -> None:
    """keep_I - keep_R on the same resample of K: with R always 0 and I always 1 the
    effect cannot move, though each keep alone would vary on unpaired resamples."""
    rows = _rows({**WORKED, "occlude_relevant": set(), "occlude_irrelevant": {"1", "2", "3"}})
    report = audit_report(rows, CASES, AuditParams(n_boot=500, seed=3))
    low, high = report["arms"]["original"]["ci"]
    assert 0.0 <= low < 0.75 < high <= 1.0
    assert report["occlusion_effect"]["ci"] == [1.0, 1.0]


def test_bad_input_is_named() -> None:
    with pytest.raises(FrameError, match="unknown arm"):
        audit_report([{"arm": "blur", "case_id": "1", "correct": 1}], CASES)
    with pytest.raises(FrameError, match="outside the audited set"):
        audit_report([{"arm": "swap", "case_id": "9", "correct": 1}], CASES)
    with pytest.raises(FrameError, match="two rows"):
        audit_report([{"arm": "swap", "case_id": "1", "correct": 1}] * 2, CASES)
