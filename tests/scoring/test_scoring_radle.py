"""RadLE C, A, R, S, H: the worked example of SCORING.md section 7 and hand cases."""

from __future__ import annotations

import math

import numpy as np
import pytest

from scoring import ScoringParams, radle_metrics, responder_metrics, wilson_interval
from scoring.categories import CORRECT_0, FAILURE, IDK, MISSING, N_CATEGORIES, WRONG_0


def counts_of(**cells: float) -> np.ndarray:
    """Count vector from keywords like c4=1, w3=2, idk=1, missing=1."""
    vec = np.zeros(N_CATEGORIES)
    for key, n in cells.items():
        if key == "idk":
            vec[IDK] += n
        elif key == "missing":
            vec[MISSING] += n
        else:
            vec[(CORRECT_0 if key[0] == "c" else WRONG_0) + int(key[1])] += n
    return vec


WORKED = counts_of(c4=1, w3=1, idk=1, c0=1, w1=1)


def test_worked_example_section_7_exactly(worked_rows: list[dict]) -> None:
    # sum(s) = 5 - 4 + 0 + 1 - 2 = 0 -> C = 1000; A = 2/5; attempted 2/4;
    # R = 1/(1+1); E = 4 + 2 = 6 -> S = 100 (1 - 6/25) = 76;
    # H v2 (default): Cov = 2/5, D = (W - W>=3) / W = (2 - 1)/2 = 0.5,
    # H = 100 * 3 / (1/0.5 + 1/0.4 + 1/0.5) = 300 / 6.5 = 46.15
    row = responder_metrics(worked_rows, ScoringParams(n_boot=0)).iloc[0]
    assert row["radle_c"] == pytest.approx(1000.0)
    assert row["radle_a"] == pytest.approx(0.4)
    assert row["attempted_accuracy"] == pytest.approx(0.5)
    assert row["radle_r"] == pytest.approx(0.5)
    assert row["radle_s"] == pytest.approx(76.0)
    assert row["h_coverage"] == pytest.approx(0.4)
    assert row["h_deferral"] == pytest.approx(0.5)
    assert row["radle_h"] == pytest.approx(300 / 6.5)
    assert round(row["radle_h"], 2) == 46.15


def test_worked_example_section_7_with_h_v1(worked_rows: list[dict]) -> None:
    # v1: D = 1 - W>=3 / (N - C) = 1 - 1/3, H = 100 (0.5 * 0.4 * 2/3) ** (1/3) = 51.087...
    row = responder_metrics(worked_rows, ScoringParams(n_boot=0, h_variant="v1")).iloc[0]
    assert row["h_deferral"] == pytest.approx(2 / 3)
    assert row["radle_h"] == pytest.approx(100 * (0.5 * 0.4 * 2 / 3) ** (1 / 3))
    assert round(row["radle_h"], 2) == 51.09


def test_muse_spark_published_h_and_c() -> None:
    # Meta Muse Spark 1.1's 200 public rows (issue 40): correct 0, 0, 8, 14, 35 at L0-4;
    # wrong 0, 7, 62, 45, 28; one failure.
    # C: P = 8*3 + 14*4 + 35*5 = 255, E = 7*2 + 62*3 + 45*4 + 28*5 = 520,
    #    C = 1000 (1 + (255 - 520) / 1000) = 735.
    # H v2: R = 49/122, Cov = 122/200, D = (142 - 73)/142 = 69/142,
    #    H = 300 / (122/49 + 200/122 + 142/69) = 48.49 (RadLE published 48.5).
    muse = counts_of(c2=8, c3=14, c4=35, w1=7, w2=62, w3=45, w4=28)
    muse[FAILURE] += 1
    m = radle_metrics(muse, ScoringParams())
    assert m["radle_c"] == pytest.approx(735.0)
    assert m["radle_r"] == pytest.approx(49 / 122)
    assert m["h_coverage"] == pytest.approx(122 / 200)
    assert m["h_deferral"] == pytest.approx(69 / 142)
    assert m["radle_h"] == pytest.approx(300 / (122 / 49 + 200 / 122 + 142 / 69))
    assert round(float(m["radle_h"]), 2) == 48.49
    # v1 does not reproduce it: D = 1 - 73/143, geometric mean -> 49.3 (issue 40)
    v1 = radle_metrics(muse, ScoringParams(h_variant="v1"))["radle_h"]
    assert v1 == pytest.approx(100 * (49 / 122 * 122 / 200 * (1 - 73 / 143)) ** (1 / 3))
    assert round(float(v1), 1) == 49.3


def test_h_v2_zero_cases() -> None:
    # no wrong answer: D = 1; c3 x2 + idk x2: R = 1, Cov = 2/4 -> H = 3 / (1 + 2 + 1) = 75
    assert radle_metrics(counts_of(c3=2, idk=2), ScoringParams())["radle_h"] == pytest.approx(75)
    # every wrong answer given at L >= 3: D = 0 -> H = 0 (c4 x1, w3 x1)
    m = radle_metrics(counts_of(c4=1, w3=1), ScoringParams())
    assert m["h_deferral"] == 0.0 and m["radle_h"] == 0.0


def test_h_aggregates_on_worked_example() -> None:
    # v1 parts: R = 0.5, Cov = 0.4, D = 2/3.
    # harmonic: 3 / (1/0.5 + 1/0.4 + 1.5) = 3 / 6 = 0.5 -> 50
    # arithmetic: (0.5 + 0.4 + 0.6667) / 3 = 0.52222 -> 52.22
    v1 = {"h_variant": "v1"}
    harm = radle_metrics(WORKED, ScoringParams(h_aggregate="harmonic", **v1))["radle_h"]
    arit = radle_metrics(WORKED, ScoringParams(h_aggregate="arithmetic", **v1))["radle_h"]
    assert harm == pytest.approx(50.0)
    assert arit == pytest.approx(100 * (0.5 + 0.4 + 2 / 3) / 3)
    # v2 parts: R = 0.5, Cov = 0.4, D = 0.5. geometric: (0.1) ** (1/3) -> 46.42;
    # arithmetic: 1.4 / 3 -> 46.67
    geo = radle_metrics(WORKED, ScoringParams(h_aggregate="geometric"))["radle_h"]
    assert geo == pytest.approx(100 * 0.1 ** (1 / 3))
    arit = radle_metrics(WORKED, ScoringParams(h_aggregate="arithmetic"))["radle_h"]
    assert arit == pytest.approx(100 * 1.4 / 3)


def test_tau_high_4_on_worked_example() -> None:
    # At L >= 4 only case 1 (correct): R = 1, Cov = 1/5; W4 = 0 so D v2 = (2 - 0)/2 = 1
    # (v1: 1 - 0/3 = 1). H v2 = 100 * 3 / (1 + 5 + 1) = 42.86; v1 = 100 * 0.2 ** (1/3) = 58.48
    m = radle_metrics(WORKED, ScoringParams(tau_high=4))
    assert m["radle_r"] == pytest.approx(1.0)
    assert m["radle_h"] == pytest.approx(300 / 7)
    v1 = radle_metrics(WORKED, ScoringParams(tau_high=4, h_variant="v1"))["radle_h"]
    assert v1 == pytest.approx(100 * 0.2 ** (1 / 3))


def test_c_is_radle_score1000_plus_1000_for_200_cases() -> None:
    # 100 correct at L4 (+5 each) and 100 IDK: sum = 500;
    # RadLE Score1000 = 1000 * 500 / (5 * 200) = 500, so C = 1500.
    m = radle_metrics(counts_of(c4=100, idk=100), ScoringParams())
    assert m["radle_c"] == pytest.approx(1500.0)


@pytest.mark.parametrize(("idk_score", "expected"), [(0.0, 1000.0), (1.0, 1200.0)])
def test_all_idk(idk_score: float, expected: float) -> None:
    # sum = idk_score * N, so C = 1000 (1 + idk_score / 5).
    m = radle_metrics(counts_of(idk=7), ScoringParams(idk_score=idk_score))
    assert m["radle_c"] == pytest.approx(expected)
    assert math.isnan(m["radle_r"])  # nothing answered
    assert m["radle_s"] == pytest.approx(100.0)  # no wrong answer, no penalty
    assert m["radle_h"] == 0.0  # H = 0 when nothing answered at L >= 3
    assert math.isnan(m["attempted_accuracy"])


def test_all_correct_l4_and_all_wrong_l4() -> None:
    # correct: sum = 5N -> 2000; N == C so D = 1, R = Cov = 1, H = 100.
    good = radle_metrics(counts_of(c4=4), ScoringParams())
    assert good["radle_c"] == pytest.approx(2000.0)
    assert good["h_deferral"] == 1.0
    assert good["radle_h"] == pytest.approx(100.0)
    # wrong: sum = -5N -> 0; E = 5N -> S = 0; R = 0 so H = 0.
    bad = radle_metrics(counts_of(w4=4), ScoringParams())
    assert bad["radle_c"] == pytest.approx(0.0)
    assert bad["radle_s"] == pytest.approx(0.0)
    assert bad["radle_h"] == pytest.approx(0.0)


def test_r_undefined_when_nothing_at_or_above_tau() -> None:
    # Two correct answers at L2: A = 1 but R is n/a and H = 0 (no autonomous answer).
    m = radle_metrics(counts_of(c2=2), ScoringParams())
    assert m["radle_a"] == 1.0
    assert math.isnan(m["radle_r"])
    assert m["radle_h"] == 0.0
    # C = 1000 (1 + 6 / 10) = 1600
    assert m["radle_c"] == pytest.approx(1600.0)


def test_all_missing_responder() -> None:
    # Missing scores 0 and counts in N: C = 1000, A = 0, S = 100, H = 0, R n/a.
    m = radle_metrics(counts_of(missing=3), ScoringParams())
    assert (m["radle_c"], m["radle_a"], m["radle_s"], m["radle_h"]) == (1000.0, 0.0, 100.0, 0.0)
    assert math.isnan(m["radle_r"])


def test_no_cases_gives_nan_everywhere() -> None:
    m = radle_metrics(np.zeros(N_CATEGORIES), ScoringParams())
    assert all(math.isnan(float(v)) for v in m.values())


def test_wilson_interval_two_of_five() -> None:
    # p = 0.4, z^2 = 3.8415: denom = 1.76829, centre = (0.4 + 0.38415) / 1.76829 = 0.44345,
    # half = 1.95996 / 1.76829 * sqrt(0.048 + 0.038415) = 0.32583 -> [0.1176, 0.7693].
    low, high = wilson_interval(np.array(2.0), np.array(5.0))
    assert float(low) == pytest.approx(0.117621, abs=1e-5)
    assert float(high) == pytest.approx(0.769276, abs=1e-5)


def test_wilson_edges() -> None:
    # 0 of 10: lower bound 0; 10 of 10: upper bound 1; n = 0: NaN.
    low, high = wilson_interval(np.array([0.0, 10.0, 0.0]), np.array([10.0, 10.0, 0.0]))
    assert low[0] == pytest.approx(0.0, abs=1e-12)
    assert high[1] == pytest.approx(1.0)
    assert np.isnan(low[2]) and np.isnan(high[2])


def test_vectorised_over_leading_axes() -> None:
    stack = np.stack([WORKED, counts_of(c4=1), counts_of(w4=1)]).reshape(3, 1, N_CATEGORIES)
    c = radle_metrics(stack, ScoringParams())["radle_c"]
    assert c.shape == (3, 1)
    np.testing.assert_allclose(c[:, 0], [1000.0, 2000.0, 0.0])
