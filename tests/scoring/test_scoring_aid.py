"""AI-aided reading (SCORING.md section 10): two arms, switches, aided minus unaided."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring import (
    FrameError,
    ScoringParams,
    report_frame,
    report_json,
    score_responses,
    score_with_aid,
)
from scoring.mrmc import Z_975
from tests.scoring.conftest import cell

Row = dict[str, Any]
NO_BOOT = ScoringParams(n_boot=0, min_completion=0.0)


def arm(row: Row, name: str, run: str | None = "M") -> Row:
    """Mark a tidy row as one arm (the unaided rows name the run too, as exports do)."""
    return {**row, "arm": name, "aid_run": run}


def human(reader: str, case: int, outcome: str, likert: int | None, group: str) -> Row:
    return cell(reader, case, outcome, likert, kind="human", group=group)


def entry(report: dict[str, Any], responder: str) -> dict[str, Any]:
    return next(e for e in report["aid"] if e["responder"] == responder)


def worked_example() -> list[Row]:
    """SCORING.md section 10: one reader, one model, four aided cases;
    (model, unaided, aided) correct: (0, 1, 0), (0, 1, 1), (1, 0, 1), (1, 0, 0)."""
    model = [("wrong", 4), ("wrong", 2), ("correct", 3), ("correct", 1)]
    unaided = [("correct", 3), ("correct", 2), ("wrong", 1), ("wrong", 2)]
    aided = [("wrong", 4), ("correct", 3), ("correct", 2), ("wrong", 2)]
    rows = [cell("M", i, o, lv) for i, (o, lv) in enumerate(model, start=1)]
    for i, ((uo, ul), (ao, al)) in enumerate(zip(unaided, aided, strict=True), start=1):
        rows.append(arm(human("R", i, uo, ul, "PGY2"), "unaided"))
        rows.append(arm(human("R", i, ao, al, "PGY2"), "aided"))
    return rows


def test_worked_example() -> None:
    report = score_with_aid(worked_example(), NO_BOOT)
    reader = entry(report, "R")
    # harmful: at risk cases 1, 2 (model wrong, unaided right); given up on case 1 -> 1/2
    assert reader["harmful_switch_rate"] == pytest.approx(0.5)
    # helpful: at risk cases 3, 4 (model right, unaided wrong); taken on case 3 -> 1/2
    assert reader["helpful_switch_rate"] == pytest.approx(0.5)
    # aided correct 2 (cases 2, 3), unaided correct 2 (cases 1, 2): (2 - 2) / 4 = 0
    assert reader["net_benefit"] == pytest.approx(0.0)
    assert reader["n_aided_cases"] == 4
    # Likert change over the four cases answered twice: (4-3) + (3-2) + (2-1) + (2-2) = 3 -> 3/4
    assert reader["mean_likert_change"] == pytest.approx(0.75)
    # one reader: the pool is that reader
    pool = entry(report, "human_pool")
    for key in ("harmful_switch_rate", "helpful_switch_rate", "net_benefit", "n_aided_cases"):
        assert pool[key] == pytest.approx(reader[key])
    # by the model's confidence: case 1 (L4) is the harmful switch, case 2 (L2) the resisted one
    bins = {b["model_confidence"]: b for b in reader["by_confidence"]}
    assert set(bins) == {"4", "2", "3", "1"}
    assert bins["4"]["harmful_switch_rate"] == 1.0
    assert bins["2"]["harmful_switch_rate"] == 0.0
    assert bins["3"]["helpful_switch_rate"] == 1.0
    assert bins["1"]["helpful_switch_rate"] == 0.0
    assert math.isnan(bins["4"]["helpful_switch_rate"])


def two_readers() -> list[Row]:
    """Model M on c1 wrong L4, c2 correct L2, c3 wrong L1; reader A (g1) aided on all
    three cases, B (g2) on c1 and c2 only."""
    rows = [cell("M", 1, "wrong", 4), cell("M", 2, "correct", 2), cell("M", 3, "wrong", 1)]
    a_unaided = [("correct", 3), ("wrong", 1), ("correct", 2)]
    a_aided = [("wrong", 4), ("correct", 2), ("idk", None)]
    b_unaided = [("correct", 2), ("idk", None), ("correct", 0)]
    b_aided = [("correct", 2), ("idk", None)]
    for i, (o, lv) in enumerate(a_unaided, start=1):
        rows.append(arm(human("A", i, o, lv, "g1"), "unaided"))
    for i, (o, lv) in enumerate(a_aided, start=1):
        rows.append(arm(human("A", i, o, lv, "g1"), "aided"))
    for i, (o, lv) in enumerate(b_unaided, start=1):
        rows.append({**human("B", i, o, lv, "g2")})  # no arm column value: unaided
    for i, (o, lv) in enumerate(b_aided, start=1):
        rows.append(arm(human("B", i, o, lv, "g2"), "aided"))
    return rows


def test_readers_by_hand() -> None:
    report = score_with_aid(two_readers(), NO_BOOT)
    a, b = entry(report, "A"), entry(report, "B")
    # A: at risk c1, c3 (model wrong, A right); aided wrong on c1, IDK on c3 -> 2/2
    assert a["harmful_switch_rate"] == 1.0
    # A: at risk c2 (model right, A wrong); aided right -> 1/1
    assert a["helpful_switch_rate"] == 1.0
    # A: aided correct 1 (c2), unaided correct 2 (c1, c3): (1 - 2) / 3
    assert a["net_benefit"] == pytest.approx(-1 / 3)
    assert a["n_aided_cases"] == 3
    # B: at risk c1 only, kept -> 0/1; c2 at risk for help (IDK), still IDK -> 0/1; (1-1)/2
    assert (b["harmful_switch_rate"], b["helpful_switch_rate"], b["net_benefit"]) == (0, 0, 0)
    assert b["n_aided_cases"] == 2
    # RadLE-A: A unaided 2/3 (c1, c3), aided 1/3 (c2); B unaided 2/3 (c1, c3), aided 1/3 (c1)
    assert a["radle_a_diff"] == pytest.approx(-1 / 3)
    assert b["radle_a_diff"] == pytest.approx(-1 / 3)
    # RadLE-C: A unaided +4 -2 +3 = 5 -> 1000 (1 + 5/15); aided -5 +3 +0 = -2 -> 1000 (1 - 2/15)
    assert a["radle_c_unaided"] == pytest.approx(4000 / 3)
    assert a["radle_c_aided"] == pytest.approx(13000 / 15)
    assert a["radle_c_diff"] == pytest.approx(-7000 / 15)


def test_pool_by_hand() -> None:
    """Weights of section 4 over the aided cases: c1 and c2 have two aided readers
    (1/2 each), c3 one (A, weight 1); each aided case counts once."""
    report = score_with_aid(two_readers(), NO_BOOT)
    pool = entry(report, "human_pool")
    assert pool["n_aided_cases"] == pytest.approx(3.0)  # 1/2+1/2 + 1/2+1/2 + 1
    # harmful: at risk A c1 (1/2), A c3 (1), B c1 (1/2) = 2; given up A c1 (1/2) + A c3 (1) = 1.5
    assert pool["harmful_switch_rate"] == pytest.approx(0.75)
    # helpful: at risk A c2 (1/2), B c2 (1/2) = 1; taken A c2 (1/2)
    assert pool["helpful_switch_rate"] == pytest.approx(0.5)
    # net: A c1 1/2 (0-1), A c2 1/2 (1-0), A c3 1 (0-1), B 0 -> -1 over 3 cases
    assert pool["net_benefit"] == pytest.approx(-1 / 3)
    # Likert change, answered both times: A c1 +1 (1/2), A c2 +1 (1/2), B c1 0 (1/2) -> 1/1.5
    assert pool["mean_likert_change"] == pytest.approx(2 / 3)
    bins = {b["model_confidence"]: b for b in pool["by_confidence"]}
    # model L4 (c1): at risk A and B (1/2 each), A gave up -> 1/2; model L1 (c3): A -> 1
    assert bins["4"]["harmful_switch_rate"] == pytest.approx(0.5)
    assert bins["1"]["harmful_switch_rate"] == pytest.approx(1.0)
    assert bins["2"]["helpful_switch_rate"] == pytest.approx(0.5)
    groups = {g["group"]: g for g in pool["by_group"]}
    # a group pool of one reader is that reader
    assert groups["g1"]["harmful_switch_rate"] == 1.0
    assert groups["g1"]["net_benefit"] == pytest.approx(-1 / 3)
    assert groups["g2"]["harmful_switch_rate"] == 0.0
    assert groups["g2"]["n_aided_cases"] == 2
    # pooled RadLE-A: unaided (2/3 + 2/3) / 2; aided c1 1/2 + c2 1/2 + c3 0 = 1 -> 1/3
    assert pool["radle_a_unaided"] == pytest.approx(2 / 3)
    assert pool["radle_a_aided"] == pytest.approx(1 / 3)
    # pooled RadLE-C: unaided s = (4+3)/2, (-2+0)/2, (3+1)/2 = 4.5 -> 1300;
    # aided s = (-5+3)/2, (3+0)/2, 0 = 0.5 -> 1000 (1 + 0.5/15)
    assert pool["radle_c_unaided"] == pytest.approx(1300.0)
    assert pool["radle_c_aided"] == pytest.approx(1000 * (1 + 0.5 / 15))
    assert report["aided_pool"]["radle_a"] == pytest.approx(1 / 3)


def test_readers_and_cases_random_by_hand() -> None:
    """Aided minus unaided for the pool, readers and cases random (scoring.mrmc).

    Two readers, two cases, both arms, Likert 4 everywhere. Correct (case x reader):
    unaided c1 (r1 1, r2 0), c2 (1, 1); aided all 1. With one design for both arms
    the moments are bilinear, so var(aided - unaided) is the U-statistic variance of
    the difference kernel D: c1 (0, 1), c2 (0, 0); mean D = 1/4.
      c1r1 (same reader, same case): r1 (0 + 0)/2, r2 (1 + 0)/2 -> 1/4
      c0r1 (same reader, other case): r1 0*0, r2 1*0 -> 0
      c1r0 (same case, other reader): c1 0*1, c2 0*0 -> 0
      c0r0 (other case and reader): D(c1,r1) D(c2,r2) = 0, D(c1,r2) D(c2,r1) = 0 -> 0
    With R = C = 2 the coefficients are 1/4, 1/4, 1/4, -3/4: var = 1/16, SE = 1/4.
    RadLE-C: points +5 / -5 = 10 k - 5, C = 1000 + 200 mean s: diff and SE 2000 x those.
    """
    truth = {("r1", 1): 1, ("r2", 1): 0, ("r1", 2): 1, ("r2", 2): 1}
    rows = [cell("M", 1, "correct", 4), cell("M", 2, "correct", 4)]
    for (reader, case), right in truth.items():
        unaided = "correct" if right else "wrong"
        rows.append(arm(human(reader, case, unaided, 4, "g"), "unaided"))
        rows.append(arm(human(reader, case, "correct", 4, "g"), "aided"))
    pool = entry(score_with_aid(rows, NO_BOOT), "human_pool")
    assert (pool["mrmc_readers"], pool["mrmc_cases"]) == (2, 2)
    for metric, scale in (("radle_a", 1.0), ("radle_c", 2000.0)):
        assert pool[f"{metric}_diff_mrmc"] == pytest.approx(scale / 4)
        assert pool[f"{metric}_diff_mrmc"] == pytest.approx(pool[f"{metric}_diff"])
        assert pool[f"{metric}_diff_mrmc_se"] == pytest.approx(scale / 4)
        assert pool[f"{metric}_diff_mrmc_ci_low"] == pytest.approx(scale / 4 * (1 - Z_975))
        assert pool[f"{metric}_diff_mrmc_ci_high"] == pytest.approx(scale / 4 * (1 + Z_975))
        assert pool[f"{metric}_diff_mrmc_p"] == pytest.approx(math.erfc(1 / math.sqrt(2)))
    # the readers' entries carry the bootstrap only: one reader has no reader variance
    assert all("radle_a_diff_mrmc" not in e for e in score_with_aid(rows, NO_BOOT)["aid"][:-1])


def test_readers_and_cases_random_needs_two_readers() -> None:
    pool = entry(score_with_aid(worked_example(), NO_BOOT), "human_pool")
    assert pool["radle_a_diff_mrmc"] == pytest.approx(0.0)  # (2 - 2) / 4
    assert pool["mrmc_readers"] == 1
    assert all(math.isnan(pool[f"radle_a_diff_mrmc_{k}"]) for k in ("se", "ci_low", "p"))


def test_two_responders_per_reader_and_two_pools() -> None:
    report = score_with_aid(two_readers(), NO_BOOT)
    names = [r["responder"] for r in report["responders"]]
    assert sorted(names) == ["A", "A [aided]", "B", "B [aided]", "M"]
    aided = next(r for r in report["responders"] if r["responder"] == "A [aided]")
    assert (aided["kind"], aided["group"], aided["arm"], aided["aid_run"]) == (
        "human",
        "g1",
        "aided",
        "M",
    )
    assert report["human_pool"]["readers"] == ["A", "B"]
    assert report["aided_pool"]["responder"] == "human_pool [aided]"
    assert report["aided_pool"]["readers"] == ["A [aided]", "B [aided]"]
    # the unaided pool is what score_responses gives for the unaided rows alone
    alone = score_responses([r for r in two_readers() if r.get("arm") != "aided"], NO_BOOT)
    assert report["human_pool"]["radle_c"] == alone["human_pool"]["radle_c"]
    # the strict JSON and the flat frame carry it
    assert '"aid"' in report_json(report)
    assert "human_pool [aided]" in set(report_frame(report)["responder"])


def test_without_aided_rows_nothing_changes() -> None:
    rows = [r for r in two_readers() if r.get("arm") != "aided"]
    params = ScoringParams(n_boot=30)
    assert report_json(score_with_aid(rows, params)) == report_json(score_responses(rows, params))


def test_paired_bootstrap_of_identical_arms_is_zero() -> None:
    """Both arms see the same case resample: a reader who never changes an answer has
    a difference of exactly 0 on every resample, so its CI is [0, 0]."""
    rows = [r for r in worked_example() if r.get("arm") != "aided"]
    rows += [arm({**r}, "aided") for r in rows if r["kind"] == "human"]
    report = score_with_aid(rows, ScoringParams(n_boot=200))
    for e in report["aid"]:
        for metric in ("radle_a", "radle_c"):
            assert e[f"{metric}_diff"] == 0.0
            assert (e[f"{metric}_diff_ci_low"], e[f"{metric}_diff_ci_high"]) == (0.0, 0.0)


def test_bootstrap_interval_holds_the_difference() -> None:
    report = score_with_aid(two_readers(), ScoringParams(n_boot=300, min_completion=0.0))
    for e in report["aid"]:
        assert e["radle_a_diff_ci_low"] <= e["radle_a_diff"] + 1e-9
        assert e["radle_a_diff"] - 1e-9 <= e["radle_a_diff_ci_high"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"arm": "both"}, "unknown arm"),
        ({"aid_run": ""}, "aid_run"),
        ({"aid_run": "nobody"}, "name no model run"),
        ({"kind": "model", "responder": "M2"}, "human rows"),
    ],
)
def test_bad_aided_rows_are_refused(change: Row, message: str) -> None:
    rows = worked_example()
    aided_row = next(i for i, r in enumerate(rows) if r.get("arm") == "aided")
    rows[aided_row] = {**rows[aided_row], **change}
    with pytest.raises(FrameError, match=message):
        score_with_aid(rows, NO_BOOT)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["correct", "wrong", "idk"]),
            st.sampled_from(["correct", "wrong", "idk"]),
            st.sampled_from(["correct", "wrong", "idk"]),
        ),
        min_size=1,
        max_size=8,
    )
)
def test_one_reader_pool_is_the_reader(outcomes: list[tuple[str, str, str]]) -> None:
    """A pool of one reader weighs every case 1: its figures are the reader's; and the
    switch counts obey net benefit = (helpful - harmful - other losses) / n."""
    rows: list[Row] = []
    for i, (m, u, a) in enumerate(outcomes, start=1):
        rows.append(cell("M", i, m, 3 if m != "idk" else None))
        rows.append(arm(human("R", i, u, 2 if u != "idk" else None, None), "unaided"))  # type: ignore[arg-type]
        rows.append(arm(human("R", i, a, 2 if a != "idk" else None, None), "aided"))  # type: ignore[arg-type]
    report = score_with_aid(pd.DataFrame(rows), NO_BOOT)
    reader, pool = entry(report, "R"), entry(report, "human_pool")
    for key in ("harmful_switch_rate", "helpful_switch_rate", "net_benefit", "n_aided_cases"):
        assert (math.isnan(reader[key]) and math.isnan(pool[key])) or reader[key] == pytest.approx(
            pool[key]
        )
    unaided = sum(u == "correct" for _, u, _ in outcomes)
    aided = sum(a == "correct" for _, _, a in outcomes)
    assert reader["net_benefit"] == pytest.approx((aided - unaided) / len(outcomes))


def test_score_responses_leaves_aided_rows_to_the_aid_module() -> None:
    """Without the split, a reader's two rows on a case would be a duplicate."""
    rows = two_readers()
    unaided = [r for r in rows if r.get("arm") != "aided"]
    assert report_json(score_responses(rows, NO_BOOT)) == report_json(
        score_responses(unaided, NO_BOOT)
    )


def test_switch_table_of_the_worked_example() -> None:
    from scoring import switch_table

    table = switch_table(worked_example())
    # (model, unaided, aided): (0,1,0) harmful, (0,1,1) kept, (1,0,1) helpful, (1,0,0) kept wrong
    assert table["switch"].tolist() == ["harmful", "kept_correct", "helpful", "kept_not_correct"]
    assert table["model_likert"].tolist() == [4, 2, 3, 1]
    assert set(table["aid_run"]) == {"M"}
    assert switch_table([r for r in worked_example() if r.get("arm") != "aided"]).empty
