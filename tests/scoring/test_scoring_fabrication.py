"""``scoring.fabrication.fabrication_rates``: the share of judged reports flagged, per responder."""

from __future__ import annotations

import math

import pandas as pd

from scoring.fabrication import FABRICATION_COLUMNS, fabrication_rates


def test_rates_per_responder_leave_unknown_flags_out() -> None:
    frame = pd.DataFrame(
        {
            "responder": ["m1", "R01", "m1", "m1", "R01", "R02"],
            "fabrication": pd.array([True, False, False, None, False, None], dtype="boolean"),
        }
    )
    rates = fabrication_rates(frame)
    assert list(rates.columns) == list(FABRICATION_COLUMNS)
    got = {
        r.responder: (r.n_judged, r.n_fabricated, r.fabrication_rate) for r in rates.itertuples()
    }
    assert got["m1"] == (2, 1, 0.5)  # the unknown flag counts in neither
    assert got["R01"] == (2, 0, 0.0)
    assert got["R02"][:2] == (0, 0)
    assert math.isnan(rates.set_index("responder")["fabrication_rate"].astype(float)["R02"])
    assert list(rates["responder"]) == ["m1", "R01", "R02"]  # first-seen order


def test_an_empty_frame_gives_an_empty_table() -> None:
    rates = fabrication_rates(pd.DataFrame({"responder": [], "fabrication": []}))
    assert rates.empty and list(rates.columns) == list(FABRICATION_COLUMNS)
