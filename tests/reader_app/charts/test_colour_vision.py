"""Issue 42: correct and wrong were told apart by red against green alone, in the per-case
matrix and the response profile. Now blue against orange, checked as a person with each
dichromacy sees it (Machado 2009, tests/support/colour_vision.py), and each carries a
glyph, so colour is never the only cue."""

from __future__ import annotations

import itertools

import pandas as pd
import pytest

from reader_app.charts import case_matrix_chart, response_profile_chart
from reader_app.charts.builders import CELL_COLORS, GLYPHS, OUTCOME_COLORS, ink_on
from reader_app.charts.contrast import AA_TEXT, contrast
from reader_app.charts.rubric import TIER_COLORS
from reader_app.charts.series import OUTCOMES
from reader_app.charts.theme import DARK_SWAPS
from tests.support.colour_vision import delta_e

DEFICIENCIES = ("protanopia", "deuteranopia", "tritanopia")
APART = 40.0  # CIE76 Delta E: clearly different at a glance (2.3 is "just noticeable")
# the palette before issue 42: green for correct, red for wrong
OLD_CORRECT = ("#c7e9c0", "#a1d99b", "#74c476", "#31a354", "#006d2c")
OLD_WRONG = ("#fcae91", "#ef6548", "#d7301f", "#a50f15", "#67000d")


def test_the_simulation_matches_known_values() -> None:
    # grey stays grey for everyone; pure red and green collapse for a deuteranope
    assert delta_e("#808080", "#808080", "deuteranopia") == pytest.approx(0, abs=0.5)
    assert delta_e("#ff0000", "#00ff00") > 80
    assert delta_e("#ff0000", "#00ff00", "deuteranopia") < delta_e("#ff0000", "#00ff00") / 2


@pytest.mark.parametrize("deficiency", [None, *DEFICIENCIES])
def test_correct_and_wrong_stay_apart_at_every_confidence(deficiency: str | None) -> None:
    for level in range(5):
        right, wrong = OUTCOME_COLORS[f"correct · L{level}"], OUTCOME_COLORS[f"wrong · L{level}"]
        assert delta_e(right, wrong, deficiency) >= APART, (level, deficiency)
    assert delta_e(CELL_COLORS["correct"], CELL_COLORS["wrong"], deficiency) >= APART


@pytest.mark.parametrize("deficiency", ["protanopia", "deuteranopia"])
def test_the_old_red_green_palette_fails_this_check(deficiency: str) -> None:
    # what the test above would have said of the palette it replaces
    pairs = zip(OLD_CORRECT, OLD_WRONG, strict=True)
    assert min(delta_e(a, b, deficiency) for a, b in pairs) < APART
    assert delta_e("#31a354", "#d7301f", deficiency) < APART  # the old matrix cells


@pytest.mark.parametrize("deficiency", ["protanopia", "deuteranopia"])
def test_every_matrix_outcome_differs_from_every_other(deficiency: str) -> None:
    for a in CELL_COLORS:
        for b in CELL_COLORS:
            if a < b:
                assert delta_e(CELL_COLORS[a], CELL_COLORS[b], deficiency) >= 20, (a, b)


def test_every_outcome_has_its_own_glyph_readable_on_its_fill() -> None:
    shown = [g for g in GLYPHS.values() if g]
    assert len(shown) == len(set(shown)) == 5 and GLYPHS["missing"] == ""
    for fill in [*CELL_COLORS.values(), *OUTCOME_COLORS.values()]:
        assert contrast(ink_on(fill), fill) >= AA_TEXT, fill


def _text_layers(spec: dict) -> list[dict]:
    found = []
    for key in ("layer", "vconcat"):
        for part in spec.get(key, []):
            found += _text_layers(part)
    mark = spec.get("mark")
    if isinstance(mark, dict) and mark.get("type") == "text" and "glyph" in str(spec):
        found.append(spec)
    return found


def test_the_matrix_and_the_profile_draw_a_glyph_on_every_correct_and_wrong_mark() -> None:
    outcomes = ["correct", "wrong", "idk", "missing"]
    cells = pd.DataFrame(
        [
            {"responder": r, "kind": "human", "case_id": f"c{i}", "outcome": o, "likert": 2}
            for r in ("R01", "R02")
            for i, o in enumerate(outcomes)
        ]
    )
    cases = pd.DataFrame(
        {"case_id": [f"c{i}" for i in range(4)], "difficulty": 0.5, "pool_accuracy": 0.5}
    )
    matrix = case_matrix_chart(cells, cases)
    grid = matrix["vconcat"][1]
    drawn = {(r["outcome"], r["glyph"]) for r in grid["data"]["values"]}
    assert drawn == {("correct", "✓"), ("wrong", "✗"), ("idk", "?"), ("missing", "")}
    assert len(_text_layers(matrix)) == 1
    legend = grid["layer"][0]["encoding"]["color"]["legend"]["labelExpr"]
    assert '"✓ correct"' in legend and '"✗ wrong"' in legend

    profile = pd.DataFrame(
        [
            {"name": "R01", "segment": label, "order": i, "count": 1.0, "share": 1 / 14}
            for i, (label, _, _) in enumerate(OUTCOMES)
        ]
    )
    chart = response_profile_chart(profile)
    (glyphs,) = _text_layers(chart)
    # the glyphs' rows are the bars' (vl.layer sends shared rows once, on the layered chart)
    rows = (glyphs.get("data") or chart["data"])["values"]
    by_segment = {r["segment"]: r["glyph"] for r in rows}
    assert all(by_segment[f"correct · L{level}"] == "✓" for level in range(5))
    assert all(by_segment[f"wrong · L{level}"] == "✗" for level in range(5))
    assert '"✗ wrong · L4"' in chart["layer"][0]["encoding"]["color"]["legend"]["labelExpr"]


@pytest.mark.parametrize("deficiency", [None, *DEFICIENCIES])
def test_the_report_rubric_tiers_keep_good_and_poor_apart(deficiency: str | None) -> None:
    tiers = list(TIER_COLORS.values())  # best first
    for good in tiers[:3]:
        for poor in tiers[3:]:
            assert delta_e(good, poor, deficiency) >= 20, (good, poor, deficiency)
    for a, b in itertools.pairwise(tiers):  # neighbours too
        assert delta_e(a, b, deficiency) >= 10, (a, b, deficiency)


def test_the_dark_page_keeps_every_outcome_colour() -> None:
    """The app draws charts through ``for_dark``, which swaps the pool's navy for white:
    "correct · L4" in that navy showed as white, like "missing", in the app."""
    swapped = set(DARK_SWAPS)
    assert not swapped & set(OUTCOME_COLORS.values())
    assert swapped & set(CELL_COLORS.values()) == {"#ffffff"}  # missing: the empty page
    assert not swapped & set(TIER_COLORS.values())
