"""Bench 2's ceiling (issue 40): every report case counts; "I don't know", failed,
invalid and missing reports score 0 (Fail); the judged reports alone are a labelled
secondary figure."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring import count_unjudged, rubric_scores

CASES = [f"ct-{i:02d}" for i in range(1, 11)]


def issue_frame() -> pd.DataFrame:
    # M: one report judged 40, nine "I don't know" (blank score, status idk).
    # H: 12 on all ten.
    rows = [("M", "model", "ct-01", 40, "answered")]
    rows += [("M", "model", c, None, "idk") for c in CASES[1:]]
    rows += [("H", "human", c, 12, "answered") for c in CASES]
    return pd.DataFrame(rows, columns=["responder", "kind", "case_id", "rubric", "status"])


def test_one_report_at_40_and_nine_idk_is_ten_percent_below_twelve_on_all() -> None:
    frame, pending = count_unjudged(issue_frame())
    assert pending == 0
    table = rubric_scores(frame, n_boot=50, n_perm=50).responders
    rows = table.set_index("responder")
    # M: 40 + 9 * 0 = 40 of 10 * 40 = 400 -> 10%, mean 4; nine Fails, one Exceptional
    assert (rows.loc["M", "total"], rows.loc["M", "ceiling"]) == (40, 400)
    assert rows.loc["M", "percent_of_ceiling"] == pytest.approx(10.0)
    assert rows.loc["M", "mean"] == pytest.approx(4.0)
    assert (rows.loc["M", "n_fail"], rows.loc["M", "n_exceptional"]) == (9, 1)
    # judged only, the secondary figure: 40 / 40, 100%
    assert (rows.loc["M", "n_judged"], rows.loc["M", "n_counted_fail"]) == (1, 9)
    assert (rows.loc["M", "judged_total"], rows.loc["M", "judged_ceiling"]) == (40, 40)
    assert rows.loc["M", "judged_percent_of_ceiling"] == pytest.approx(100.0)
    # H: 12 * 10 = 120 of 400 -> 30%; ten Poor (8-15)
    assert rows.loc["H", "total"] == 120 and rows.loc["H", "n_poor"] == 10
    assert rows.loc["H", "percent_of_ceiling"] == pytest.approx(30.0)
    # ranked by the share of the ceiling: the human pool (= H, 30%) and H above M
    assert list(table["responder"]).index("H") < list(table["responder"]).index("M")
    assert list(table["responder"])[-1] == "M"


def test_missing_failed_invalid_count_zero_pending_left_out() -> None:
    rows = [
        ("A", "human", "c1", 30, "answered"),
        ("A", "human", "c2", None, "failure"),
        ("A", "human", "c3", None, "invalid"),
        ("A", "human", "c4", None, "answered"),  # waits for its judges: left out
        ("B", "model", "c1", 20, "answered"),  # B has no row on c2, c3, c4: missing
    ]
    data = pd.DataFrame(rows, columns=["responder", "kind", "case_id", "rubric", "status"])
    frame, pending = count_unjudged(data)
    assert pending == 1
    got = {(r.responder, r.case_id): (r.rubric, r.counted_as) for r in frame.itertuples()}
    assert got == {
        ("A", "c1"): (30, "judged"),
        ("A", "c2"): (0, "failure"),
        ("A", "c3"): (0, "invalid"),
        ("B", "c1"): (20, "judged"),
        ("B", "c2"): (0, "missing"),
        ("B", "c3"): (0, "missing"),
        ("B", "c4"): (0, "missing"),
    }
    table = rubric_scores(frame, n_boot=10, n_perm=10).responders.set_index("responder")
    # A: 30 of 3 counted cases (c4 left out) -> 25%; B: 20 of 4 * 40 -> 12.5%
    assert table.loc["A", "percent_of_ceiling"] == pytest.approx(25.0)
    assert table.loc["B", "percent_of_ceiling"] == pytest.approx(12.5)
    # the pool (A alone) per case: 30, 0, 0 -> judged only: 30 of 40
    assert table.loc["human pool", "judged_total"] == pytest.approx(30.0)
    assert table.loc["human pool", "n_counted_fail"] == 2


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from("abcdef"), st.one_of(st.none(), st.integers(0, 40))),
        min_size=1,
        max_size=6,
        unique_by=lambda t: t[0],
    )
)
def test_counting_unjudged_never_raises_a_total(answers: list[tuple[str, int | None]]) -> None:
    # Against the judged reports alone, counting every case can only lower the share of
    # the ceiling (0s are added) and never changes the total.
    rows = [("R", "model", c, s, "answered" if s is not None else "idk") for c, s in answers]
    rows += [("X", "model", "f", 1, "answered")]  # a case R may not have: missing
    data = pd.DataFrame(rows, columns=["responder", "kind", "case_id", "rubric", "status"])
    frame, _ = count_unjudged(data)
    r = rubric_scores(frame, n_boot=1, n_perm=1).responders.set_index("responder").loc["R"]
    judged = [s for _, s in answers if s is not None]
    assert r["total"] == sum(judged) == r["judged_total"]
    assert r["n_cases"] == len({c for c, _ in answers} | {"f"})
    if judged:
        assert r["percent_of_ceiling"] <= r["judged_percent_of_ceiling"] + 1e-9
