"""scoring/repeats.py: run-to-run agreement of repeat runs, by hand and by property."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring import FrameError, score_responses
from scoring.categories import CORRECT_0, IDK, INVALID, MISSING, WRONG_0
from scoring.repeats import agreement, repeat_groups, repeat_members

# a cell: correct or wrong at Likert 0..4, IDK, invalid or missing
CELLS = st.sampled_from(
    [CORRECT_0 + level for level in range(5)]
    + [WRONG_0 + level for level in range(5)]
    + [IDK, INVALID, MISSING]
)


@settings(max_examples=60, deadline=None)
@given(st.lists(CELLS, min_size=2, max_size=30), st.integers(2, 5))
def test_identical_repeats_agree_fully(cells: list[int], k: int) -> None:
    categories = np.tile(np.asarray(cells, dtype=np.int8), (k, 1))
    out = agreement(categories)
    if out["cases_rated_by_all"]:
        assert out["identical_share"] == 1.0
    if out["cases_answered_by_all"]:
        assert out["likert_identical_share"] == 1.0
    kappa = out["outcome_kappa"]
    assert np.isnan(kappa) or kappa == pytest.approx(1.0)  # NaN: one outcome throughout


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(CELLS, min_size=6, max_size=6), min_size=2, max_size=4), st.randoms())
def test_the_order_of_the_repeats_does_not_matter(rows: list[list[int]], rnd) -> None:  # type: ignore[no-untyped-def]
    categories = np.asarray(rows, dtype=np.int8)
    order = list(range(len(rows)))
    rnd.shuffle(order)
    a, b = agreement(categories), agreement(categories[order])
    for key in a:
        assert (np.isnan(a[key]) and np.isnan(b[key])) or a[key] == pytest.approx(b[key])


def test_two_repeats_by_hand() -> None:
    # case 0 correct L3 / correct L3; case 1 wrong L2 / IDK; case 2 invalid / correct L1
    categories = np.asarray(
        [[CORRECT_0 + 3, WRONG_0 + 2, INVALID], [CORRECT_0 + 3, IDK, CORRECT_0 + 1]],
        dtype=np.int8,
    )
    out = agreement(categories)
    # rated by both: cases 0 and 1; identical: case 0 -> 1/2
    assert out["cases_rated_by_all"] == 2 and out["identical_share"] == 0.5
    # answered by both: case 0 only, Likert 3 and 3 -> 1/1; ICC needs two cases: NaN
    assert out["cases_answered_by_all"] == 1 and out["likert_identical_share"] == 1.0
    assert np.isnan(out["likert_icc"])
    # Fleiss over cases with two ratings (0 and 1): counts (2,0,0) (0,1,1);
    # P_i = 1, 0 -> 1/2; p = (2/4, 1/4, 1/4), P_e = 3/8; kappa = (1/2 - 3/8) / (5/8) = 1/5
    assert out["outcome_kappa"] == pytest.approx(0.2)


def _frame(rows: list[tuple[str, str, int, str, int | None, int | None]]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "responder": who,
                "kind": "model",
                "run_group": group,
                "repeat": repeat,
                "case_id": case,
                "diagnosis": "x" if correct is not None else "I don't know",
                "likert": likert,
                "correct": correct,
            }
            for who, group, repeat, case, likert, correct in rows
        ]
    )


def test_groups_mean_and_sd_from_the_frame() -> None:
    frame = _frame(
        [
            ("m #1", "m", 1, "a", 4, 1),  # +5
            ("m #1", "m", 1, "b", 0, 0),  # -1  -> sum 4 over N = 2: C = 1000 (1 + 4/10) = 1400
            ("m #2", "m", 2, "a", 4, 1),  # +5
            ("m #2", "m", 2, "b", None, None),  # IDK -> sum 5: C = 1500
        ]
    )
    report = score_responses(frame.drop(columns=["run_group", "repeat"]))
    (group,) = repeat_groups(frame, report["responders"])
    assert [r["radle_c"] for r in group["repeats"]] == [1400.0, 1500.0]
    # mean 1450, SD sqrt((50^2 + 50^2) / 1) = 70.71
    assert group["radle_c_mean"] == 1450.0
    assert group["radle_c_sd"] == pytest.approx(50 * np.sqrt(2))


def test_a_responder_in_two_groups_or_two_runs_of_one_repeat_are_refused() -> None:
    clash = _frame([("m #1", "m", 1, "a", 4, 1), ("m #2", "m", 1, "a", 4, 1)])
    with pytest.raises(FrameError, match="same repeat"):
        repeat_members(clash)
    twice = _frame([("m #1", "m", 1, "a", 4, 1), ("m #1", "n", 1, "b", 4, 1)])
    with pytest.raises(FrameError, match="more than one"):
        repeat_members(twice)
    assert repeat_members(_frame([("m", "", 1, "a", 4, 1)])) == {}
