"""Every colour a chart or the leaderboard draws keeps WCAG AA on the background it is
drawn on: white paper (downloads, print) and the app's dark page (charts/theme.py)."""

from __future__ import annotations

import pytest

from reader_app.analysis.leaderboard_view import DARK, LIGHT
from reader_app.charts.contrast import AA_LARGE, AA_TEXT, contrast, luminance, rgb
from reader_app.charts.palette import (
    GROUP_POOLS,
    GROUP_POOLS_DARK,
    HUMANS,
    MODELS,
    POOL,
    POOL_DARK,
)
from reader_app.charts.theme import DARK_BACKGROUND, DARK_CONFIG, DARK_TEXT, for_dark
from tests.support.chart_colours import drawn_colours, spec_colours

PAPER = "#ffffff"


def test_contrast_matches_wcag_reference_values() -> None:
    # black on white is the maximum, (1 + 0.05) / (0 + 0.05) = 21
    assert contrast("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast("#777777", "#777777") == pytest.approx(1.0)
    # #767676 on white is the classic 4.54:1 (the lightest grey that passes AA)
    assert contrast("#767676", "white") == pytest.approx(4.54, abs=0.01)
    assert rgb("rgb(14, 17, 23)") == rgb("#0e1117") == (14, 17, 23)
    assert luminance("#fff") == pytest.approx(1.0)


@pytest.mark.parametrize("colour", [*HUMANS, *MODELS])
def test_every_responder_colour_keeps_3_to_1_on_paper_and_on_the_dark_page(colour: str) -> None:
    assert contrast(colour, PAPER) >= AA_LARGE
    assert contrast(colour, DARK_BACKGROUND) >= AA_LARGE


def test_the_pools_stand_out_from_every_responder_in_both_themes() -> None:
    responders = [*HUMANS, *MODELS]
    for pool, background in ((POOL, PAPER), (POOL_DARK, DARK_BACKGROUND)):
        assert contrast(pool, background) >= AA_TEXT
        # the strongest colour on its page: further from the background than any responder
        assert min(contrast(pool, c) for c in responders) >= 1.5
        assert all(contrast(pool, background) > contrast(c, background) for c in responders)
    for paper, dark in zip(GROUP_POOLS, GROUP_POOLS_DARK, strict=True):
        assert contrast(paper, PAPER) >= AA_LARGE
        assert contrast(dark, DARK_BACKGROUND) >= AA_LARGE


def test_the_dark_page_labels_axes_legends_and_titles_at_aa() -> None:
    for part in ("axis", "legend", "title"):
        # grid lines are decoration, kept faint on purpose; labels, axes and ticks are not
        labels = [c for k, c in spec_colours(DARK_CONFIG[part]) if "grid" not in k.lower()]
        assert labels and all(contrast(c, DARK_BACKGROUND) >= AA_LARGE for c in labels)
    assert contrast(DARK_TEXT, DARK_BACKGROUND) >= AA_TEXT


def test_for_dark_swaps_paper_colours_and_leaves_the_spec_alone() -> None:
    paper = {
        "layer": [
            {"mark": {"type": "rule", "color": "black"}},
            {"mark": {"type": "line"}, "encoding": {"color": {"field": "name", "scale": {
                "range": [POOL, HUMANS[0]]}}}},
        ]
    }  # fmt: skip
    dark = for_dark(paper)
    assert drawn_colours(dark) == {DARK_TEXT, POOL_DARK, HUMANS[0]}
    assert drawn_colours(paper) == {"black", POOL, HUMANS[0]}  # the paper spec unchanged
    assert dark["config"]["background"] == DARK_BACKGROUND


@pytest.mark.parametrize("theme", [DARK, LIGHT], ids=["dark", "light"])
def test_leaderboard_text_keeps_4_5_to_1_on_every_row(theme: dict[str, str]) -> None:
    for row in ("bg", "head", "pool", "group-pool", "cohort-pool"):
        for text in ("fg", "muted"):
            assert contrast(theme[text], theme[row]) >= AA_TEXT, (row, text)
    assert contrast(theme["edge-pool"], theme["pool"]) >= AA_LARGE  # the pool's edge bar
