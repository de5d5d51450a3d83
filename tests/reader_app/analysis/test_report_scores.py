"""The Reports leaderboard, exports and static report from real rubric rows (both databases),
and ``readerstudy judge-reports`` against a real judge server on 127.0.0.1."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from typing import Any

import pandas as pd
import pytest
from sqlmodel import Session

from reader_app.analysis.data import study_data
from reader_app.analysis.exports import export_frame
from reader_app.analysis.html_report import render_report
from reader_app.analysis.mrmc import MRMC_COLUMNS
from reader_app.analysis.report_scores import (
    COUNTED_FAIL,
    JUDGED_ONLY,
    display_comparisons,
    display_reports,
    report_board,
    tier_counts,
)
from reader_app.charts import chart_svg, tier_distribution_chart
from reader_app.cli import main
from reader_app.core.settings import Settings
from reader_app.models import CaseReport, RubricJudgement, Study
from scoring import ScoringParams
from tests.reader_app.grading.helpers import (
    answer,
    case_by_source,
    make_key_study,
    model_run,
    reader,
)
from tests.reader_app.grading.judge_server import JudgeServer, Say

KEY = [("ct-01", "RUL carcinoma", []), ("ct-02", "RLL pneumonia", []), ("ct-03", "PE", [])]
HOSTILE = "<script>alert(1)</script>"
# reader R01, reader R02 and model run M: rubric score per case
SCORES = {
    "R01": {"ct-01": 36, "ct-02": 20, "ct-03": 30},
    "R02": {"ct-01": 30, "ct-02": 26},
    HOSTILE: {"ct-01": 10, "ct-02": 40, "ct-03": 5},
}


@pytest.fixture
def server() -> Iterator[JudgeServer]:
    with JudgeServer() as srv:
        yield srv


def _study(session: Session, settings: Settings, *, graded: bool = True) -> Study:
    study = make_key_study(session, settings.asset_dir, key=KEY, kind="strip",
                           config={"report_fields": ["findings", "impression"]})  # fmt: skip
    cases = {s: case_by_source(session, study, s) for s, _, _ in KEY}
    for case in cases.values():
        ref = CaseReport(case_id=case.id or 0, answer="report", reference_impression="Ref")
        session.add(ref)
    session.commit()
    who = {
        "R01": reader(session, study, "R01", group="board-certified"),
        "R02": reader(session, study, "R02", group="PGY2"),
        HOSTILE: model_run(session, study, HOSTILE),
    }
    for name, per_case in SCORES.items():
        for source, score in per_case.items():
            text = f"{name} on {source}"
            resp = answer(session, study, cases[source], None, by=who[name], likert=None,
                          findings=text, impression=f"impression {score}")  # fmt: skip
            if graded:
                session.add(RubricJudgement(response_id=resp.id or 0, prompt_version="v1",
                                            judges="a+b", scores_json=json.dumps([score, score]),
                                            status="agree", score=score, gap=8))  # fmt: skip
    session.commit()
    return study


def test_report_board_tables_and_chart(session: Session, settings: Settings) -> None:
    study = _study(session, settings)
    board = report_board(session=session, study=study, n_boot=200)
    table = display_reports(board).set_index("Responder")
    assert table.loc["R01", "Total"] == "86 / 120"
    assert table.loc["R01", "Mean (0-40)"].startswith("28.7 [")  # 86 / 3
    # R02 has no report on ct-03: Bench 2 counts it 0 (Fail) -> 56 / 120, judged only 56 / 80
    assert table.loc["R02", "Total"] == "56 / 120" and table.loc["R02", "Fail"] == 1
    assert table.loc["R02", COUNTED_FAIL] == "1"
    assert table.loc["R02", JUDGED_ONLY] == "28.0, 70.0% of 80 (2 judged)"
    # pool per case: ct-01 (36+30)/2 = 33, ct-02 (20+26)/2 = 23, ct-03 (30+0)/2 = 15
    # -> mean 71/3 = 23.7; tiers strong, mixed, poor
    assert table.loc["human pool", "Mean (0-40)"].startswith("23.7 [")
    assert (table.loc["human pool", "Strong"], table.loc["human pool", "Mixed"]) == (1, 1)
    assert table.loc["human pool", "Poor"] == 1
    assert table.loc[HOSTILE, "Exceptional"] == 1 and table.loc[HOSTILE, "Fail"] == 1
    # ranked by the share of the ceiling: R01 86, pool 71, R02 56, the model 55
    assert list(table.index) == ["R01", "human pool", "R02", HOSTILE]
    comp = display_comparisons(board).set_index("Model")
    # d = (10-33, 40-23, 5-15) = (-23, 17, -10): mean -16/3 = -5.3
    assert comp.loc[HOSTILE, "Model - pool [95% CI]"].startswith("-5.3 [")
    assert comp.loc[HOSTILE, "Paired reports"] == 3
    tiers = tier_counts(board)
    assert tiers.groupby("name")["share"].sum().round(9).eq(1.0).all()
    svg = chart_svg(tier_distribution_chart(tiers))
    assert "<script>" not in svg and "&lt;script&gt;" in svg  # a name is text, never markup


def test_report_cases_leave_the_radle_frame_and_case_set(
    session: Session, settings: Settings
) -> None:
    study = _study(session, settings)
    data = study_data(session=session, study=study)
    assert data.frame.empty and data.case_ids == ()


def test_exports_reports_and_mrmc_rows(session: Session, settings: Settings) -> None:
    study = _study(session, settings)
    params = ScoringParams(n_boot=0)
    reports = export_frame("reports", session=session, study=study, params=params)
    assert list(reports.columns[:7]) == [
        "responder", "kind", "group", "case_id", "status", "findings", "impression"
    ]  # fmt: skip
    assert len(reports) == 8
    row = reports[(reports["responder"] == "R02") & (reports["case_id"] == "ct-02")].iloc[0]
    assert (row["rubric"], row["tier"]) == (26, "Solid")
    # the MRMC export holds diagnosis rows unless asked: this study has report cases only
    assert export_frame("mrmc", session=session, study=study, params=params).empty
    mrmc = export_frame("mrmc", session=session, study=study, params=params, task="report")
    every = export_frame("mrmc", session=session, study=study, params=params, task="all")
    pd.testing.assert_frame_equal(mrmc, every)
    assert list(mrmc.columns[: len(MRMC_COLUMNS)]) == list(MRMC_COLUMNS)
    assert set(mrmc["task"]) == {"report"} and len(mrmc) == 8
    model_rows = mrmc[mrmc["modality"] == f"model:{HOSTILE}"].sort_values("case")
    assert model_rows["score"].tolist() == [10, 40, 5]  # the 0-40 score as the rating
    assert set(mrmc.loc[mrmc["kind"] == "human", "modality"]) == {"human"}
    round_trip = pd.read_csv(io.StringIO(mrmc.to_csv(index=False)))
    assert round_trip["score"].max() == 40


def test_static_report_has_the_reports_section(session: Session, settings: Settings) -> None:
    study = _study(session, settings)
    data = study_data(session=session, study=study)
    board = report_board(session=session, study=study, n_boot=100)
    html = render_report(data, ScoringParams(n_boot=100), reports=board)
    assert "Reports (rubric 0-40)" in html and "Tier distribution" in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and HOSTILE not in html
    assert "Reports (rubric" not in render_report(data, ScoringParams(n_boot=0))


def test_cli_judge_reports(
    session: Session,
    settings: Settings,
    server: JudgeServer,
    capsys: pytest.CaptureFixture[str],
) -> None:
    study = _study(session, settings, graded=False)

    def reply(score: int, body: dict[str, Any]) -> Say:
        data: dict[str, Any] = {"core_finding": "x", "score": score, "reason": ""}
        if '"fabrication"' in str(body["messages"][0]["content"]):  # v2 asks for the flag
            data["fabrication"] = False
        return Say(json.dumps(data))

    def score(body: dict[str, Any]) -> Say:
        text = str(body["messages"][-1]["content"]).split("Candidate report")[1]
        return reply(40 if "impression 40" in text else 12, body)

    server.script("judge-a", score)
    server.script("judge-b", lambda body: reply(14, body))
    args = ["judge-reports", study.slug, "--judge", server.base_url, "judge-a",
            "--judge", server.base_url, "judge-b"]  # fmt: skip
    assert main(args) == 0
    out = capsys.readouterr().out
    # 8 reports: 7 at 12 vs 14 agree (13); the one "impression 40" is 40 vs 14: disagree
    assert "judged 8 report(s) with prompt rubric_judge_v2: 7 agreed, 1 sent" in out
    assert main(args) == 0
    assert "judged 0 report(s)" in capsys.readouterr().out
    assert main([*args, "--gap", "30"]) == 0  # same prompt: the stored judgements stand
    assert "judged 0" in capsys.readouterr().out
    three = [*args, "--judge", server.base_url, "judge-c"]
    assert main(three) == 2
    assert "give one or two judges" in capsys.readouterr().err
    assert main([*args, "--prompt", "nope"]) == 2
    assert "no judge prompt 'nope'" in capsys.readouterr().err
    assert main(["judge-reports", study.slug]) == 2
    assert "no judges configured" in capsys.readouterr().err
    # one judge of the operator's command line, its request settings given there
    server.calls.clear()
    one = ["judge-reports", study.slug, "--judge", server.base_url, "judge-a",
           "--prompt", "rubric_judge_v1", "--judge-temperature", "none",
           "--judge-extra", '{"reasoning_effort": "low"}']  # fmt: skip
    assert main(one) == 0
    assert "judged 8 report(s) with prompt rubric_judge_v1: 8 agreed" in capsys.readouterr().out
    assert all("temperature" not in c.body for c in server.calls)
    assert {c.body["reasoning_effort"] for c in server.calls} == {"low"}
    assert main([*one[:5], "--judge-extra", "[1]"]) == 2
    assert "--judge-extra: must be a table or a JSON object" in capsys.readouterr().err
