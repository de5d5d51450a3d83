"""scoring.mrmc: Gallas' U-statistic (iMRMC's uStat11.conditionalD, kernelFlag = 1)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from scoring import (
    ScoringParams,
    build_matrix,
    model_vs_pool,
    normal_test,
    u_stat11,
    validate_frame,
)
from scoring.mrmc import Z_975
from tests.support.shared_data import shared_data

ONES_2X2 = np.ones((2, 2))


def test_two_readers_two_cases_by_hand() -> None:
    # cases x readers: reader 1 has (1, 1), reader 2 has (0, 1); mean 3/4.
    # Moments (c = same case?, r = same reader?):
    #   c1r1 = mean of k^2 per reader = (1 + 1/2) / 2 = 3/4
    #   c0r1 = same reader, other case: reader 1 1*1, reader 2 0*1 -> 1/2
    #   c1r0 = same case, other reader: case 1 1*0, case 2 1*1 -> 1/2
    #   c0r0 = other case and reader: k11 k22 = 1, k21 k12 = 0 -> 1/2
    # Coefficients (R = C = 2): 1/(RC) = 1/4, (1/R)(1 - 1/C) = 1/4, (1 - 1/R)/C = 1/4,
    #   (1 - 1/R)(1 - 1/C) - 1 = -3/4.
    # var = 3/16 + 1/8 + 1/8 - 3/8 = 1/16.
    human = np.array([[1.0, 0.0], [1.0, 1.0]])
    # The model (fixed, so one column repeated): (1, 0); mean 1/2.
    #   its variance: c1r1 = 1/2, c0r1 = 1*0 = 0, c1r0 = (1 + 0)/2 = 1/2, c0r0 = 0
    #   -> 1/8 + 0 + 1/8 - 0 = 1/4 = sample variance (1/2) / 2 cases.
    # Covariance model x human, moments over the pairs (model copy r, human s):
    #   c1r1 = r = s, same case: reader 1 (1*1 + 0*1)/2, reader 2 (1*0 + 0*1)/2 -> 1/4
    #   c0r1 = r = s, other case: reader 1 (1*1 + 0*1)/2, reader 2 (1*1 + 0*0)/2 -> 1/2
    #   c1r0 = r != s, same case: (1*0 + 0*1)/2 and (1*1 + 0*1)/2 -> 1/4
    #   c0r0 = r != s, other case: (1*1 + 0*0)/2 and (1*1 + 0*1)/2 -> 1/2
    #   cov = 1/16 + 1/8 + 1/16 - 3/8 = -1/8
    # var(model - human) = 1/4 + 1/16 + 2/8 = 9/16.
    model = np.array([[1.0, 1.0], [0.0, 0.0]])
    stat = u_stat11(model, ONES_2X2, human, ONES_2X2)
    assert stat.mean_a == pytest.approx(0.5) and stat.mean_b == pytest.approx(0.75)
    assert stat.mean_diff == pytest.approx(-0.25)
    assert stat.var_a == pytest.approx(0.25)
    assert stat.var_b == pytest.approx(1 / 16)
    assert stat.var_diff == pytest.approx(9 / 16)
    assert (stat.n_readers, stat.n_cases) == (2, 2)


def test_incomplete_design_matches_imrmc() -> None:
    """Readers missing cases and a model missing cases, against iMRMC 2.1.2 in R 4.2.2.

    The figures were printed by iMRMC's uStat11.conditionalD on the shared export with
    R01 missing cases 1-30, R07 every fifth case, R12 the cases above 150 and
    model-05 every ninth case, repeated under every reader's id, as docs/analysis.md's
    iMRMC recipe does:
      gone <- with(humans, (reader == "R01" & case <= 30) | (reader == "R07" & case %% 5 == 0) |
                           (reader == "R12" & case > 150))
      m <- subset(d, modality == "model:model-05" & case %% 9 != 0)
      uStat11.conditionalD(rbind(humans[!gone, ], <m under each reader>), c("human",
        "model:model-05"), kernelFlag = 1, keyColumns = c("reader", "case", "modality", y))
    """
    data = pd.read_csv(shared_data("mrmc_reference", "radle_scale_mrmc.csv"))
    humans = data[data["modality"] == "human"]
    gone = (
        ((humans["reader"] == "R01") & (humans["case"] <= 30))
        | ((humans["reader"] == "R07") & (humans["case"] % 5 == 0))
        | ((humans["reader"] == "R12") & (humans["case"] > 150))
    )
    humans = humans[~gone]
    model = data[(data["modality"] == "model:model-05") & (data["case"] % 9 != 0)]
    readers = sorted(humans["reader"].unique())
    cases = sorted(data["case"].unique())
    imrmc = {  # mean human, mean model, var human, var model, var(human - model)
        "score": (
            0.67543859649122806,
            0.58426966292134819,
            0.0010351049615293373,
            0.0013723086096673609,
            0.0018482588096003782,
        ),
        "points": (
            2.1039473684210526,
            1.3146067415730338,
            0.039506448358671453,
            0.065777376451212788,
            0.088732284143492768,
        ),
    }
    for column, expected in imrmc.items():
        wide = humans.pivot(index="case", columns="reader", values=column)
        wide = wide.reindex(index=cases, columns=readers)
        per_case = model.set_index("case")[column].reindex(cases)
        stat = u_stat11(
            wide.fillna(0).to_numpy(),
            wide.notna().to_numpy(dtype=float),
            np.repeat(per_case.fillna(0).to_numpy()[:, None], len(readers), axis=1),
            np.repeat(per_case.notna().to_numpy(dtype=float)[:, None], len(readers), axis=1),
        )
        got = (stat.mean_a, stat.mean_b, stat.var_a, stat.var_b, stat.var_diff)
        assert got == pytest.approx(expected, abs=1e-12, rel=0)


def test_readers_with_one_or_two_cases_match_imrmc() -> None:
    """R3 read one case (no "other case" of its own), R4 two, the model misses case 6.

    iMRMC 2.1.2 (R 4.2.2) on the same rows, the model repeated under R1-R4:
      h <- data.frame(reader = c(rep("R1", 6), rep("R2", 5), "R3", "R4", "R4"),
                      case = c(1:6, 1:5, 3, 2, 6), modality = "human",
                      score = c(1, 0, 1, 1, 0, 1,  0, 0, 1, 1, 1,  1,  0, 1))
      model scores on cases 1-5: 1, 1, 0, 1, 0
    printed means 0.64285714285714279, 0.59999999999999998 and variances
    0.018698699259923762, 0.059999999999999998, 0.13059283420454723. A reader
    with no other case leaves its terms out of the different-case moments; treating
    those terms as 0 instead gives a negative variance for the readers here.
    """
    kernel, design = np.zeros((6, 4)), np.zeros((6, 4))
    rows = [(0, case, s) for case, s in enumerate([1, 0, 1, 1, 0, 1])]
    rows += [(1, case, s) for case, s in enumerate([0, 0, 1, 1, 1])]
    rows += [(2, 2, 1), (3, 1, 0), (3, 5, 1)]  # (reader, case, score), 0-based
    for reader, case, score in rows:
        kernel[case, reader], design[case, reader] = score, 1
    model = np.repeat(np.array([1.0, 1, 0, 1, 0, 0])[:, None], 4, axis=1)
    model_design = np.repeat(np.array([1.0, 1, 1, 1, 1, 0])[:, None], 4, axis=1)
    stat = u_stat11(kernel, design, model, model_design)
    got = (stat.mean_a, stat.mean_b, stat.var_a, stat.var_b, stat.var_diff)
    expected = (
        0.64285714285714279,
        0.59999999999999998,
        0.018698699259923762,
        0.059999999999999998,
        0.13059283420454723,
    )
    assert got == pytest.approx(expected, abs=1e-14, rel=0)


def test_readers_without_observations_change_nothing() -> None:
    # A reader (column) with no observation in either arm has weight 0.
    rng = np.random.default_rng(3)
    human = rng.integers(0, 2, (6, 3)).astype(float)
    model = np.repeat(rng.integers(0, 2, (6, 1)).astype(float), 3, axis=1)
    ones = np.ones((6, 3))
    base = u_stat11(model, ones, human, ones)
    pad = np.zeros((6, 1))
    wider = u_stat11(
        np.hstack([model, pad]),
        np.hstack([ones, pad]),
        np.hstack([human, pad]),
        np.hstack([ones, pad]),
    )
    assert (wider.var_a, wider.var_b, wider.var_diff) == pytest.approx(
        (base.var_a, base.var_b, base.var_diff), abs=1e-15
    )
    assert wider.n_readers == 3


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="one shape"):
        u_stat11(np.ones((2, 2)), np.ones((2, 2)), np.ones((2, 3)), np.ones((2, 3)))
    with pytest.raises(ValueError, match="holds 0"):
        u_stat11(ONES_2X2, ONES_2X2 * 2, ONES_2X2, ONES_2X2)
    with pytest.raises(ValueError, match="finite"):
        u_stat11(np.full((2, 2), np.nan), ONES_2X2, ONES_2X2, ONES_2X2)
    # NaN where the design is 0 is no observation, and allowed
    kernel = np.array([[1.0, np.nan], [0.0, 1.0]])
    assert math.isfinite(u_stat11(kernel, np.array([[1, 0], [1, 1]]), ONES_2X2, ONES_2X2).var_a)
    empty = u_stat11(ONES_2X2, np.zeros((2, 2)), ONES_2X2, ONES_2X2)
    assert math.isnan(empty.mean_a) and math.isnan(empty.var_diff)


scores = arrays(
    np.float64,
    st.tuples(st.integers(2, 7), st.integers(2, 5)),
    elements=st.sampled_from([0.0, 1.0]),
)


@settings(max_examples=60, deadline=None)
@given(scores, st.data())
def test_fixed_model_has_case_variance_only(human: np.ndarray, data: st.DataObject) -> None:
    # A model column repeated under every reader: its variance is the unbiased case
    # variance over n cases, var(x, ddof=1) / n, and A - A has variance 0.
    n_cases, n_readers = human.shape
    col = np.array(
        data.draw(
            st.lists(st.sampled_from([0.0, 1.0, 2.0, -3.0]), min_size=n_cases, max_size=n_cases)
        )
    )
    model = np.repeat(col[:, None], n_readers, axis=1)
    ones = np.ones_like(human)
    stat = u_stat11(model, ones, human, ones)
    assert stat.var_a == pytest.approx(np.var(col, ddof=1) / n_cases, abs=1e-12)
    same = u_stat11(human, ones, human, ones)
    assert same.var_diff == pytest.approx(0.0, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(scores)
def test_order_of_readers_and_cases_does_not_matter(human: np.ndarray) -> None:
    n_cases, n_readers = human.shape
    rng = np.random.default_rng(n_cases * 31 + n_readers)
    design = (rng.random(human.shape) < 0.8).astype(float)
    design[0, :] = 1.0  # every reader keeps a case
    model = np.repeat(rng.integers(0, 2, (n_cases, 1)).astype(float), n_readers, axis=1)
    ones = np.ones_like(human)
    base = u_stat11(model, ones, human, design)
    rows, cols = rng.permutation(n_cases), rng.permutation(n_readers)
    moved = u_stat11(model[rows][:, cols], ones, human[rows][:, cols], design[rows][:, cols])
    got = (moved.mean_diff, moved.var_a, moved.var_b, moved.var_diff)
    assert got == pytest.approx(
        (base.mean_diff, base.var_a, base.var_b, base.var_diff), abs=1e-12, nan_ok=True
    )


def _brute_force_var(a: np.ndarray, b: np.ndarray) -> float:
    """Cov(mean a, mean b) of a complete design from the definitions, by loops:
    the four moments (same / other case, same / other reader) averaged over every
    pair, with coefficients 1/(RC), (C-1)/(RC), (R-1)/(RC), (R-1)(C-1)/(RC) - 1."""
    n_cases, n_readers = a.shape
    sums = {key: [0.0, 0] for key in ("c1r1", "c0r1", "c1r0", "c0r0")}
    for i in range(n_cases):
        for r in range(n_readers):
            for j in range(n_cases):
                for q in range(n_readers):
                    key = f"c{int(i == j)}r{int(r == q)}"
                    sums[key][0] += a[i, r] * b[j, q]
                    sums[key][1] += 1
    m = {k: total / count for k, (total, count) in sums.items()}
    rc = n_readers * n_cases
    return (
        m["c1r1"] / rc
        + (n_cases - 1) / rc * m["c0r1"]
        + (n_readers - 1) / rc * m["c1r0"]
        + ((n_readers - 1) * (n_cases - 1) / rc - 1) * m["c0r0"]
    )


ratings = arrays(
    np.float64,
    st.tuples(st.integers(2, 5), st.integers(2, 4)),
    elements=st.floats(-5, 5, allow_nan=False).map(lambda v: round(v, 2)),
)


@settings(max_examples=40, deadline=None)
@given(ratings, st.data())
def test_complete_design_equals_the_definitions(a: np.ndarray, data: st.DataObject) -> None:
    b = data.draw(arrays(np.float64, a.shape, elements=st.sampled_from([0.0, 1.0, 4.0])))
    ones = np.ones_like(a)
    stat = u_stat11(a, ones, b, ones)
    var_a, var_b, cov = _brute_force_var(a, a), _brute_force_var(b, b), _brute_force_var(a, b)
    assert stat.var_a == pytest.approx(var_a, abs=1e-9)
    assert stat.var_b == pytest.approx(var_b, abs=1e-9)
    assert stat.var_diff == pytest.approx(var_a + var_b - 2 * cov, abs=1e-9)


def test_normal_test() -> None:
    # diff = 1.959964 se -> the interval touches 0 and p = 0.05
    se, low, high, p = normal_test(Z_975 * 0.1, 0.01)
    assert se == pytest.approx(0.1) and low == pytest.approx(0.0, abs=1e-15)
    assert high == pytest.approx(2 * Z_975 * 0.1) and p == pytest.approx(0.05, abs=1e-12)
    assert normal_test(0.0, 0.0) == (0.0, 0.0, 0.0, 1.0)
    assert normal_test(0.3, 0.0)[3] == 0.0
    assert all(math.isnan(v) for v in normal_test(0.3, -1e-6))


def _frame(rows: list[tuple[str, str, str, int | None, int | None]]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "responder": who,
                "kind": kind,
                "group": None,
                "case_id": case,
                "status": None,
                "diagnosis": "x" if correct is not None else "I don't know",
                "likert": likert,
                "correct": correct,
            }
            for who, kind, case, likert, correct in rows
        ]
    )


def test_model_vs_pool_from_a_response_matrix() -> None:
    # The 2 x 2 example above as responses: r1 right on both cases, r2 right on c2;
    # the model right on c1 and without a row on c2 (which counts as wrong, 0 points).
    # Likert 4 everywhere: points +5 / -5 (L+1), so C = 1000 (1 + mean s / 5).
    frame = _frame(
        [
            ("r1", "human", "c1", 4, 1),
            ("r1", "human", "c2", 4, 1),
            ("r2", "human", "c1", 4, 0),
            ("r2", "human", "c2", 4, 1),
            ("m", "model", "c1", 4, 1),
        ]
    )
    matrix = build_matrix(validate_frame(frame))
    assert matrix.responders == ("m", "r1", "r2")  # sorted: the readers are rows 1 and 2
    out = {e["metric"]: e for e in model_vs_pool(matrix, [1, 2], ScoringParams())}
    a = out["radle_a"]
    # model 1/2 - pool 3/4; var 9/16 from the hand example
    assert a["diff"] == pytest.approx(-0.25) and a["mrmc_se"] == pytest.approx(0.75)
    assert a["mrmc_ci_low"] == pytest.approx(-0.25 - Z_975 * 0.75)
    assert a["mrmc_p"] == pytest.approx(math.erfc(0.25 / 0.75 / math.sqrt(2)))
    assert a["model_mrmc_se"] == pytest.approx(0.5) and a["pool_mrmc_se"] == pytest.approx(0.25)
    assert (a["model"], a["mrmc_readers"], a["mrmc_cases"]) == ("m", 2, 2)
    # points: human (5, -5; 5, 5) = 5 * (2k - 1) in the example's k; model (5, 0).
    # C of the model = 1000 (1 + 2.5 / 5) = 1500; pool mean s = 2.5 -> 1500; diff 0.
    c = out["radle_c"]
    assert c["model_value"] == pytest.approx(1500.0) and c["pool_value"] == pytest.approx(1500.0)
    assert c["diff"] == pytest.approx(0.0, abs=1e-9)
    # the human kernel is 10 k - 5, so its variance is 100 * 1/16 and C's is 200^2 times that
    assert c["pool_mrmc_se"] == pytest.approx(200 * math.sqrt(100 / 16))
    assert c["mrmc_p"] == pytest.approx(1.0)


def test_one_reader_gives_no_mrmc_figures() -> None:
    frame = _frame(
        [
            ("r1", "human", "c1", 4, 1),
            ("r1", "human", "c2", 4, 0),
            ("m", "model", "c1", 4, 1),
            ("m", "model", "c2", 4, 1),
        ]
    )
    entry = model_vs_pool(build_matrix(validate_frame(frame)), [1])[0]  # rows: m, r1
    assert entry["diff"] == pytest.approx(0.5)
    assert all(math.isnan(entry[k]) for k in ("mrmc_se", "mrmc_ci_low", "mrmc_p", "pool_mrmc_se"))
    none = model_vs_pool(build_matrix(validate_frame(frame)), [])[0]
    assert math.isnan(none["diff"]) and math.isnan(none["mrmc_se"])
