"""Grounding metrics G, GA, U (SCORING.md section 8) and reference-region hit tests."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scoring import ScoringParams, score_responses
from scoring.frame import FrameError
from scoring.grounding import grounding_report
from scoring.regions import (
    Box,
    Location,
    RegionError,
    box_hit,
    format_region,
    mask_hit,
    parse_region,
)
from tests.scoring.conftest import cell

FAST = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
NO_BOOT = ScoringParams(n_boot=0)


def _row(responder: str, case: str, outcome: str, hit: int, **kw: Any) -> dict[str, Any]:
    return {**cell(responder, case, outcome, 2 if outcome in ("correct", "wrong") else None, **kw),
            "hit": hit}  # fmt: skip


def test_worked_example() -> None:
    # SCORING.md 8: (correct, hit) = (1,1), (1,0), (0,1), (0,0) on 4 cases with regions.
    # G = 2/4 = 0.5, GA = 1/4 = 0.25, U = 1/2 = 0.5
    rows = [
        _row("m", "1", "correct", 1),
        _row("m", "2", "correct", 0),
        _row("m", "3", "wrong", 1),
        _row("m", "4", "wrong", 0),
    ]
    out = grounding_report(rows, ["1", "2", "3", "4"], NO_BOOT)["responders"][0]
    assert out["n_grounded"] == 4 and out["hits"] == 2
    assert out["grounding_rate"] == 0.5
    assert out["grounded_accuracy"] == 0.25
    assert out["ungrounded_correct_share"] == 0.5


def test_cases_without_region_missing_rows_idk_and_failures() -> None:
    # Grounded cases: 1..4. Case 5 has no region: its hit is ignored.
    # 1 correct+hit; 2 IDK with a hit flag (a miss); 3 failure with a hit flag (a miss);
    # 4 no row at all (a miss). G = 1/4, GA = 1/4, U = 0/1 = 0.
    rows = [
        _row("m", "1", "correct", 1),
        _row("m", "2", "idk", 1),
        _row("m", "3", "failure", 1),
        _row("m", "5", "correct", 1),
    ]
    out = grounding_report(rows, ["1", "2", "3", "4"], NO_BOOT, case_ids=list("12345"))
    r = out["responders"][0]
    assert (r["n_grounded"], r["hits"]) == (4, 1)
    assert r["grounding_rate"] == 0.25 and r["grounded_accuracy"] == 0.25
    assert r["ungrounded_correct_share"] == 0.0


def test_u_undefined_when_nothing_correct_and_g_undefined_without_regions() -> None:
    rows = [_row("m", "1", "wrong", 1), _row("m", "2", "wrong", 0)]
    r = grounding_report(rows, ["1", "2"], NO_BOOT)["responders"][0]
    assert r["grounding_rate"] == 0.5 and math.isnan(r["ungrounded_correct_share"])
    r = grounding_report(rows, [], NO_BOOT)["responders"][0]
    assert math.isnan(r["grounding_rate"]) and math.isnan(r["grounded_accuracy"])


def test_pool_weights_each_case_once() -> None:
    # Two readers, two grounded cases. Case 1: a hit+correct, b miss+wrong -> hit 1/2,
    # correct 1/2, both 1/2. Case 2: only a read it, correct+miss -> hit 0, correct 1.
    # G = (1/2 + 0)/2 = 0.25; GA = (1/2 + 0)/2 = 0.25; U = (1.5 - 0.5)/1.5 = 2/3.
    rows = [
        _row("a", "1", "correct", 1, kind="human"),
        _row("b", "1", "wrong", 0, kind="human"),
        _row("a", "2", "correct", 0, kind="human"),
    ]
    params = ScoringParams(n_boot=0, min_completion=0.5)
    pool = grounding_report(rows, ["1", "2"], params)["human_pool"]
    assert pool["n_readers"] == 2
    assert pool["grounding_rate"] == pytest.approx(0.25)
    assert pool["grounded_accuracy"] == pytest.approx(0.25)
    assert pool["ungrounded_correct_share"] == pytest.approx(2 / 3)


def test_bootstrap_cis_and_model_vs_pool() -> None:
    rng = np.random.default_rng(3)
    rows = []
    for case in range(30):
        for who, kind in (("r1", "human"), ("r2", "human"), ("m", "model")):
            outcome = "correct" if rng.random() < 0.6 else "wrong"
            rows.append(_row(who, str(case), outcome, int(rng.random() < 0.5), kind=kind))
    params = ScoringParams(n_boot=300, seed=1)
    out = grounding_report(rows, [str(c) for c in range(20)], params)
    model = next(r for r in out["responders"] if r["responder"] == "m")
    for name in ("grounding_rate", "grounded_accuracy", "ungrounded_correct_share"):
        assert model[f"{name}_ci_low"] <= model[name] <= model[f"{name}_ci_high"]
        assert out["human_pool"][f"{name}_ci_low"] <= out["human_pool"][name]
        assert model[f"{name}_diff_vs_pool"] == pytest.approx(model[name] - out["human_pool"][name])
    assert 0 < model["grounding_rate_perm_p_vs_pool"] <= 1
    # Same resamples as score_responses: same seed, same case set, so reruns agree.
    again = grounding_report(rows, [str(c) for c in range(20)], params)
    assert again == out
    assert score_responses(rows, params)["responders"]  # the same frame scores too


def test_bad_hit_values_are_refused() -> None:
    with pytest.raises(FrameError, match="hit"):
        grounding_report([_row("m", "1", "correct", 1) | {"hit": "maybe"}], ["1"], NO_BOOT)
    with pytest.raises(FrameError, match="hit"):
        grounding_report([cell("m", "1", "correct", 2)], ["1"], NO_BOOT)


outcomes = st.sampled_from(["correct", "wrong", "idk", "failure", "missing"])


@FAST
@given(st.lists(st.tuples(outcomes, st.booleans(), st.booleans()), min_size=1, max_size=25))
def test_properties(cases: list[tuple[str, bool, bool]]) -> None:
    rows = [
        _row("m", str(i), outcome, int(hit))
        for i, (outcome, hit, _) in enumerate(cases)
        if outcome != "missing"
    ]
    grounded = [str(i) for i, (_, _, g) in enumerate(cases) if g]
    case_ids = [str(i) for i in range(len(cases))]
    if not rows:
        return
    r = grounding_report(rows, grounded, NO_BOOT, case_ids=case_ids)["responders"][0]
    if not grounded:
        assert math.isnan(r["grounding_rate"])
        return
    g, ga = r["grounding_rate"], r["grounded_accuracy"]
    assert 0 <= ga <= g <= 1
    # GA <= A over the grounded cases
    n_correct = sum(1 for i, (o, _, gr) in enumerate(cases) if gr and o == "correct")
    assert ga <= n_correct / len(grounded) + 1e-12
    u = r["ungrounded_correct_share"]
    assert math.isnan(u) == (n_correct == 0) and (math.isnan(u) or 0 <= u <= 1)


# ---- regions -------------------------------------------------------------------------


def test_parse_and_format_region() -> None:
    assert parse_region("10,20,30,40") == (Box(10, 20, 30, 40),)
    boxes = parse_region(" 7:1,2,3,4 ; 8:0,0,5.5,6 ")
    assert boxes == (Box(1, 2, 3, 4, slice=7), Box(0, 0, 5.5, 6, slice=8))
    assert parse_region(format_region(boxes)) == boxes
    assert parse_region("") == ()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1,2,3", "4 numbers"),
        ("1,2,3,x", "not a number"),
        ("1,2,0,4", "must be > 0"),
        ("-1,2,3,4", ">= 0"),
        ("0:1,2,3,4", "slice"),
        ("a:1,2,3,4", "slice"),
        ("1,2,inf,4", "finite"),
    ],
)
def test_parse_region_refuses(text: str, message: str) -> None:
    with pytest.raises(RegionError, match=message):
        parse_region(text)


def test_box_hit_edges_slices_and_tolerance() -> None:
    box = (Box(10, 20, 5, 5),)  # covers x in [10, 15), y in [20, 25)
    assert box_hit(Location(10, 20), box) and box_hit(Location(14.9, 24.9), box)
    assert not box_hit(Location(15, 22), box) and not box_hit(Location(9.9, 22), box)
    assert box_hit(Location(16, 22), box, tolerance=2)  # grown to [8, 17)
    assert not box_hit(None, box)  # "no focal finding"
    strip = (Box(10, 20, 5, 5, slice=7),)
    assert box_hit(Location(12, 22, slice=7), strip)
    assert not box_hit(Location(12, 22, slice=8), strip)
    assert not box_hit(Location(12, 22), strip)


def test_mask_hit() -> None:
    mask = np.zeros((3, 10, 10), dtype=bool)
    mask[1, 4, 6] = True  # slice 2, row 4, column 6
    assert mask_hit(Location(6.5, 4.2, slice=2), mask)
    assert not mask_hit(Location(6.5, 4.2, slice=1), mask)
    assert not mask_hit(Location(7.5, 4.2, slice=2), mask)
    assert mask_hit(Location(7.5, 4.2, slice=2), mask, tolerance=1)
    assert not mask_hit(Location(5, 5, slice=9), mask)
    assert mask_hit(Location(6, 4), mask[1]) and not mask_hit(Location(6, 4, slice=1), mask[1])


def test_an_empty_pool_has_no_grounding_figures() -> None:
    # Only a model answered: no reader in the pool. G, GA and U of the pool are n/a
    # (NaN, JSON null), CIs too, like its RadLE metrics; never 0.000 [0, 0].
    rows = [_row("m", "1", "correct", 1), _row("m", "2", "wrong", 0)]
    out = grounding_report(rows, ["1", "2"], ScoringParams(n_boot=50))
    pool = out["human_pool"]
    assert pool["n_readers"] == 0
    for name in ("grounding_rate", "grounded_accuracy", "ungrounded_correct_share"):
        assert math.isnan(pool[name]), name
        assert math.isnan(pool[f"{name}_ci_low"]) and math.isnan(pool[f"{name}_ci_high"])
    assert out["responders"][0]["grounding_rate"] == 0.5  # the model's own figures stand
    # a reader below the completion threshold leaves the pool empty too
    partial = [*rows, _row("h", "1", "correct", 1, kind="human")]
    assert math.isnan(
        grounding_report(partial, ["1", "2"], NO_BOOT)["human_pool"]["grounding_rate"]
    )
