"""Bootstrap: vectorised results equal a plain per-replicate loop; CI helpers."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from scoring import (
    ScoringParams,
    bootstrap_counts,
    build_matrix,
    build_pools,
    count_vectors,
    percentile_ci,
    resample_weights,
    responder_counts,
    score_responses,
    two_way_pool_counts,
    validate_frame,
)
from scoring.bootstrap import CASE_STREAM, READER_STREAM, rng_for
from scoring.categories import MISSING, N_CATEGORIES
from scoring.pool import case_contributions


def random_matrix(seed: int, n_resp: int = 6, n_cases: int = 9) -> np.ndarray:
    return (
        np.random.default_rng(seed)
        .integers(0, N_CATEGORIES, size=(n_resp, n_cases))
        .astype(np.int8)
    )


def test_resample_weights_rows_sum_to_n_and_are_seeded() -> None:
    w = resample_weights(7, 50, np.random.default_rng(1))
    assert w.shape == (50, 7)
    np.testing.assert_array_equal(w.sum(axis=1), 7)
    np.testing.assert_array_equal(w, resample_weights(7, 50, np.random.default_rng(1)))


def test_responder_counts_equal_a_loop_over_index_resamples() -> None:
    cats = random_matrix(0)
    rng = np.random.default_rng(5)
    index = rng.integers(0, cats.shape[1], size=(40, cats.shape[1]))
    weights = np.stack([np.bincount(row, minlength=cats.shape[1]) for row in index]).astype(float)
    fast = responder_counts(cats, weights)
    for b in range(40):  # the naive way: gather the resampled columns and count
        np.testing.assert_array_equal(fast[b], count_vectors(cats[:, index[b]]))


def test_pool_recomputed_from_per_case_means_on_each_resample() -> None:
    cats = random_matrix(1, n_resp=4, n_cases=6)
    cats[0, 2] = MISSING  # one reader skipped a case: n_i differs by case
    contributions = case_contributions(cats)
    index = np.random.default_rng(2).integers(0, 6, size=(30, 6))
    weights = np.stack([np.bincount(row, minlength=6) for row in index]).astype(float)
    fast = weights @ contributions
    for b in range(30):
        # naive: rebuild the pool on the resampled study (duplicated cases count twice)
        np.testing.assert_allclose(fast[b], case_contributions(cats[:, index[b]]).sum(axis=0))


def test_two_way_with_unit_reader_weights_equals_case_bootstrap() -> None:
    cats = random_matrix(3, n_resp=5, n_cases=8)
    cats[1, :3] = MISSING
    weights = resample_weights(8, 25, np.random.default_rng(0))
    ones = np.ones((25, 5))
    np.testing.assert_allclose(
        two_way_pool_counts(cats, weights, ones), weights @ case_contributions(cats)
    )


def test_two_way_equals_a_loop_over_reader_and_case_resamples() -> None:
    cats = random_matrix(4, n_resp=4, n_cases=5)
    cats[2, 1] = MISSING
    rng = np.random.default_rng(9)
    case_idx = rng.integers(0, 5, size=(20, 5))
    reader_idx = rng.integers(0, 4, size=(20, 4))
    cw = np.stack([np.bincount(r, minlength=5) for r in case_idx]).astype(float)
    rw = np.stack([np.bincount(r, minlength=4) for r in reader_idx]).astype(float)
    fast = two_way_pool_counts(cats, cw, rw)
    for b in range(20):
        naive = case_contributions(cats[reader_idx[b]][:, case_idx[b]]).sum(axis=0)
        np.testing.assert_allclose(fast[b], naive)


def test_percentile_ci_matches_numpy_and_skips_nan() -> None:
    rng = np.random.default_rng(0)
    samples = rng.normal(size=(101, 4))
    samples[::7, 1] = np.nan
    samples[:, 3] = np.nan
    low, high = percentile_ci(samples)
    with np.errstate(all="ignore"), pytest.warns(RuntimeWarning):
        ref = np.nanpercentile(samples, [2.5, 97.5], axis=0)
    np.testing.assert_allclose(low[:3], ref[0, :3])
    np.testing.assert_allclose(high[:3], ref[1, :3])
    assert np.isnan(low[3]) and np.isnan(high[3])


def test_bootstrap_counts_shapes_and_streams(make_rows: Callable) -> None:
    rows = make_rows("r1", [("correct", 4), ("wrong", 1)], kind="human") + make_rows(
        "m", [("idk", None), ("correct", 2)]
    )
    matrix = build_matrix(validate_frame(rows))
    params = ScoringParams(n_boot=16, seed=4)
    resp, pooled = bootstrap_counts(matrix, build_pools(matrix, params), params)
    assert resp.shape == (16, 2, N_CATEGORIES) and pooled.shape == (16, 1, N_CATEGORIES)
    np.testing.assert_allclose(resp.sum(axis=-1), 2.0)  # N is preserved by every resample
    # case and reader draws come from separate streams of one seed
    assert rng_for(4, CASE_STREAM).integers(1 << 30) != rng_for(4, READER_STREAM).integers(1 << 30)


def test_single_case_collapses_ci_to_the_point(make_rows: Callable) -> None:
    # One case: every resample is that case, so every CI is the point estimate.
    report = score_responses(make_rows("m", [("wrong", 3)]), ScoringParams(n_boot=50))
    row = report["responders"][0]
    assert row["radle_c_ci_low"] == row["radle_c_ci_high"] == pytest.approx(200.0)


def test_model_identical_to_sole_reader_has_zero_difference(make_rows: Callable) -> None:
    answers = [("correct", 4), ("wrong", 2), ("idk", None), ("correct", 1), ("wrong", 4)]
    rows = make_rows("reader", answers, kind="human") + make_rows("model", answers)
    report = score_responses(rows, ScoringParams(n_boot=200))
    model = next(r for r in report["responders"] if r["kind"] == "model")
    assert model["radle_c_diff_vs_pool"] == pytest.approx(0.0)
    assert model["radle_c_diff_vs_pool_ci_low"] == pytest.approx(0.0)
    assert model["radle_c_diff_vs_pool_ci_high"] == pytest.approx(0.0)
    assert model["perm_p_vs_pool"] == pytest.approx(1.0)  # T = 0: every |T*| >= |T|


def test_two_way_mode_runs_and_brackets_point(make_rows: Callable) -> None:
    rng = np.random.default_rng(0)
    outcomes = [("correct", 4), ("wrong", 3), ("idk", None), ("correct", 1)]
    rows = []
    for r in range(4):
        picks = [outcomes[i] for i in rng.integers(0, 4, size=12)]
        rows += make_rows(f"r{r}", picks, kind="human")
    rows += make_rows("m", [outcomes[i] for i in rng.integers(0, 4, size=12)])
    for mode in ("case", "two-way"):
        pool = score_responses(rows, ScoringParams(n_boot=300, bootstrap_mode=mode))["human_pool"]
        assert pool["radle_c_ci_low"] <= pool["radle_c"] <= pool["radle_c_ci_high"]
