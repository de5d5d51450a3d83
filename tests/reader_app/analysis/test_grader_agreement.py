"""Judge-judge and judge-adjudicator agreement and the 0-40 histograms, from stored rows on
SQLite and PostgreSQL."""

from __future__ import annotations

import json

from sqlmodel import Session

from reader_app.analysis.report_scores import grader_agreement, histogram_frame, report_board
from reader_app.charts import chart_svg
from reader_app.charts.rubric import score_histogram_chart
from reader_app.core.settings import Settings
from reader_app.models import CaseReport, RubricGrade, RubricJudgement, Study
from tests.reader_app.grading.helpers import answer, case_by_source, make_key_study, reader

KEY = [("ct-01", "A", []), ("ct-02", "B", []), ("ct-03", "C", [])]
JUDGED = {"ct-01": (10, 12, "agree", 11), "ct-02": (20, 20, "agree", 20),
          "ct-03": (30, 34, "agree", 32)}  # fmt: skip


def _study(session: Session, settings: Settings) -> int:
    study = make_key_study(session, settings.asset_dir, key=KEY, kind="strip",
                           config={"report_fields": ["findings", "impression"]})  # fmt: skip
    r01 = reader(session, study, "R01")
    adj = reader(session, study, "ADJ", role="adjudicator")
    for source, (a, b, status, score) in JUDGED.items():
        case = case_by_source(session, study, source)
        session.add(CaseReport(case_id=case.id or 0, answer="report", reference_impression="R"))
        resp = answer(session, study, case, None, by=r01, likert=None, findings="f", impression="i")
        session.add(RubricJudgement(response_id=resp.id or 0, prompt_version="v1",
                                    judges="ja@h+jb@h", scores_json=json.dumps([a, b]),
                                    status=status, score=score, gap=8))  # fmt: skip
        if source == "ct-03":
            session.add(RubricGrade(response_id=resp.id or 0, adjudicator_id=adj.id or 0, score=31))
    session.commit()
    return study.id or 0


def test_agreement_by_hand(session: Session, settings: Settings) -> None:
    study_id = _study(session, settings)
    table = grader_agreement(session=session, study_id=study_id).set_index("Graders")
    # scores (10, 12), (20, 20), (30, 34): grand mean 21; SSR = 2 * 222 = 444, MSR = 222;
    # SSC = 3 * 2 = 6, MSC = 6; SST = 454, SSE = 4, MSE = 2.
    # ICC = (222 - 2) / (222 + 2 + 2 * (6 - 2) / 3) = 220 / 226.67 = 0.97
    pair = table.loc["ja@h vs jb@h"]
    assert (pair["Reports both scored"], pair["ICC(2,1)"]) == (3, "0.97")
    assert pair["Mean |difference|"] == "2.0"  # (2 + 0 + 4) / 3
    # one report graded by the adjudicator (31): one pair each, no ICC on one report
    a, b = table.loc["ja@h vs adjudicator"], table.loc["jb@h vs adjudicator"]
    assert (a["Reports both scored"], a["ICC(2,1)"], a["Mean |difference|"]) == (1, "n/a", "1.0")
    assert (b["Reports both scored"], b["Mean |difference|"]) == (1, "3.0")


def test_histograms_per_responder(session: Session, settings: Settings) -> None:
    study_id = _study(session, settings)
    study = session.get(Study, study_id)
    assert study is not None
    board = report_board(session=session, study=study, n_boot=50)
    hist = histogram_frame(board)
    r01 = hist[hist["responder"] == "R01"].set_index("score")["count"]
    # final scores: 11, 20 and the adjudicator's 31 (a human grade wins)
    assert r01[r01 > 0].to_dict() == {11: 1, 20: 1, 31: 1} and len(r01) == 41
    assert "<svg" in chart_svg(score_histogram_chart(hist))
