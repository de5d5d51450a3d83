"""RadLE long-master import, on the nine real rows of the public sample."""

from __future__ import annotations

import io
import math
from pathlib import Path

import pandas as pd
import pytest

from scoring import FrameError, ScoringParams, score_responses, validate_frame
from scoring.io import radle_to_tidy, read_radle_csv

# A copy of shared/data/radle_long_master_sample.csv (nine real RadLE 2.0 rows),
# kept in the repo so the test never depends on the checkout layout.
SAMPLE = Path(__file__).with_name("data") / "radle_long_master_sample.csv"
SHARED = Path(__file__).resolve().parents[4] / "shared" / "data" / SAMPLE.name


@pytest.mark.skipif(not SHARED.exists(), reason="shared/ not beside the checkout")
def test_copy_matches_shared_sample() -> None:
    assert SAMPLE.read_bytes() == SHARED.read_bytes()


def scores(include_excluded: bool) -> dict[str, dict]:
    frame = read_radle_csv(SAMPLE, include_excluded=include_excluded)
    report = score_responses(frame, ScoringParams(n_boot=0))
    return {r["responder"]: r for r in report["responders"]}


def test_sample_default_drops_excluded_rows() -> None:
    # 9 rows; claude_4_8_opus, grok_4_20 and glm_4_6v are access == excluded.
    frame = validate_frame(read_radle_csv(SAMPLE))
    assert len(frame) == 6
    assert set(frame["kind"]) == {"model"}  # no domain == human row in the sample
    assert frame.set_index("responder").loc["gpt_5_5", "group"] == "OpenAI"


def test_sample_scores_as_the_spec_says() -> None:
    # One case (N = 1) per model, points +(L+1) / -(L+1):
    # gpt_5_5, gemini_3_1_pro, qwen_3_7_plus: correct L4, s = +5 -> C = 1000 (1 + 5/5) = 2000,
    #   A = 1, R = 1, S = 100, H = 100 (Cov = 1; N == C so D = 1).
    # gemma_4_31b: correct L3, s = +4 -> C = 1800, R = 1, S = 100, H = 100.
    # llama_4_maverick, mistral_large_3_2512: wrong L3, s = -4 -> C = 200; A = 0; R = 0;
    #   E = 4 -> S = 100 (1 - 4/5) = 20; H = 0 (R = 0, D = 1 - 1/1 = 0).
    # RadLE's own weighted_score column (4, 3, -3: weight L) is not used.
    got = scores(include_excluded=False)
    expected = {
        "gpt_5_5": (2000, 1, 1, 100, 100),
        "gemini_3_1_pro": (2000, 1, 1, 100, 100),
        "qwen_3_7_plus": (2000, 1, 1, 100, 100),
        "gemma_4_31b": (1800, 1, 1, 100, 100),
        "llama_4_maverick": (200, 0, 0, 20, 0),
        "mistral_large_3_2512": (200, 0, 0, 20, 0),
    }
    assert set(got) == set(expected)
    for name, (c, a, r, s, h) in expected.items():
        row = got[name]
        assert (row["radle_c"], row["radle_a"], row["radle_r"], row["radle_s"], row["radle_h"]) == (
            pytest.approx(c),
            pytest.approx(a),
            pytest.approx(r),
            pytest.approx(s),
            pytest.approx(h),
        ), name


def test_sample_with_excluded_rows() -> None:
    # claude_4_8_opus, glm_4_6v: correct L2, s = +3 -> C = 1600, A = 1, R n/a (nothing at
    #   L >= 3), S = 100, H = 0.
    # grok_4_20: "I don't know" -> C = 1000, A = 0, IDK rate 1, R n/a, H = 0.
    got = scores(include_excluded=True)
    assert len(got) == 9
    for name in ("claude_4_8_opus", "glm_4_6v"):
        assert got[name]["radle_c"] == pytest.approx(1600.0)
        assert math.isnan(got[name]["radle_r"]) and got[name]["radle_h"] == 0.0
    grok = got["grok_4_20"]
    assert grok["radle_c"] == pytest.approx(1000.0) and grok["idk_rate"] == 1.0
    assert grok["radle_a"] == 0.0 and math.isnan(grok["radle_r"])


HEADER = (
    "Master_Case_ID,candidate,provider,access,domain,diagnosis,likert,abstained,"
    "technical_failure,final_score_authoritative,rater_seniority\n"
)


def test_humans_failures_and_idk_spellings() -> None:
    # RadLE's shape: a human's provider is the reader, candidate their role.
    csv = HEADER + (
        "1,Trainee,R01,human,human,Carotid-cavernous fistula,4,True,False,1,PGY2\n"
        "2,Trainee,R01,human,human,Idon't know,,False,False,0,PGY2\n"
        "1,Trainee,R02,human,human,Mucocele,2,False,False,0,PGY-3\n"
        "1,Radiologist,R03,human,human,,3,False,False,1,post-MD 4y\n"
        "1,m1,Acme,open,general,PARSE_FAILED,,False,False,0,\n"
        "2,m1,Acme,open,general,Mucocele,3,False,True,0,\n"
        "3,m1,Acme,open,general,Mucocele,3,False,False,,\n"
        "4,m1,Acme,open,general,Mucocele,PARSE_FAILED,False,False,0,\n"
    )
    frame = read_radle_csv(io.StringIO(csv))
    tidy = validate_frame(frame, require_verdicts=False)
    by = {(r.responder, r.case_id): r for r in tidy.itertuples()}
    assert by[("R01", "1")].kind == "human" and by[("R01", "1")].group == "trainees"
    assert by[("R01", "1")].status == "answered"  # `abstained` is not read
    assert by[("R01", "2")].status == "idk"
    assert by[("R02", "1")].group == "trainees"  # PGY-3
    # an empty diagnosis with a valid Likert is scored by its verdict (RadLE's score_row)
    assert by[("R03", "1")].status == "answered" and by[("R03", "1")].correct == 1
    assert by[("R03", "1")].group == "board-certified"
    extra = frame.set_index(["responder", "case_id"])
    assert extra.loc[("R02", "1"), "seniority"] == "PGY-3"
    assert extra.loc[("R03", "1"), "role"] == "Radiologist"
    assert by[("m1", "1")].status == "failure"  # PARSE_FAILED
    assert by[("m1", "2")].status == "failure"  # technical_failure
    assert by[("m1", "4")].status == "failure"  # PARSE_FAILED as the Likert
    assert by[("m1", "1")].group == "Acme"
    # the answered model row without a verdict must not be guessed
    with pytest.raises(FrameError, match="m1/3"):
        validate_frame(read_radle_csv(io.StringIO(csv)))


@pytest.mark.parametrize(
    ("seniority", "group"),
    [("PGY2", "trainees"), ("pgy 3", "trainees"), ("PGY_2", "trainees"),
     ("PGY4", "board-certified"), ("post-MD 1y", "board-certified"),
     ("Attending", "board-certified"), ("", None)],
)  # fmt: skip
def test_radle_groups(seniority: str, group: str | None) -> None:
    from scoring.io.radle import radle_group

    assert radle_group(seniority) == group


def test_human_rows_without_a_provider_are_refused() -> None:
    csv = HEADER + "1,Trainee,,human,human,Mucocele,2,False,False,0,PGY2\n"
    with pytest.raises(FrameError, match="provider"):
        read_radle_csv(io.StringIO(csv))


def test_not_a_radle_file() -> None:
    with pytest.raises(FrameError, match="RadLE"):
        radle_to_tidy(pd.DataFrame({"case_id": ["1"]}))
