"""``run-model --repeats N`` against a stub that answers differently per repeat (issue 41).

Four cases, three repeats; the stub knows the case by its image and the repeat
by how often it has seen that image. C = the key's diagnosis (graded correct),
W = "Wrong answer" (graded wrong through grade memory), I = "I don't know":

    case 0: C3  C3  C3
    case 1: C2  W2  C4
    case 2: I   I   I
    case 3: W1  W1  C1

Scores by hand (SCORING.md sections 2-3, N = 4, points +-(L+1), IDK 0):
    repeat 1: +4 +3 0 -2 = 5   -> RadLE-C = 1000 (1 + 5/20)  = 1250, RadLE-A = 2/4
    repeat 2: +4 -3 0 -2 = -1  -> RadLE-C = 1000 (1 - 1/20)  = 950,  RadLE-A = 1/4
    repeat 3: +4 +5 0 +2 = 11  -> RadLE-C = 1000 (1 + 11/20) = 1550, RadLE-A = 3/4
    RadLE-C mean 1250, SD sqrt((0 + 300^2 + 300^2) / 2) = 300
    RadLE-A mean 0.5,  SD sqrt((0 + 0.25^2 + 0.25^2) / 2) = 0.25

Fleiss' kappa on (correct, wrong, IDK) counts per case (3,0,0) (2,1,0) (0,0,3) (1,2,0):
    P_i = (sum n_ij^2 - 3) / 6 = 1, 1/3, 1, 1/3 -> mean 2/3
    p_j = 6/12, 3/12, 3/12 -> P_e = 1/4 + 1/16 + 1/16 = 3/8
    kappa = (2/3 - 3/8) / (1 - 3/8) = (7/24) / (5/8) = 7/15
Identical verdicts: cases 0 and 2 of 4 = 0.5.
Likert, on the cases every repeat answered (0, 1, 3): rows (3,3,3) (2,2,4) (1,1,1);
identical on 2 of 3; ICC(2,1): grand mean 20/9, SS_rows 558/81, SS_cols 72/81,
SS_total 774/81, SS_err 144/81; MSR 279/81, MSC 36/81, MSE 36/81;
ICC = (MSR - MSE) / (MSR + 2 MSE + 3 (MSC - MSE) / 3) = 243/351 = 9/13.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from sqlmodel import Session, select

from reader_app.analysis.model_runs import repeat_summary
from reader_app.cli import main
from reader_app.core.settings import Settings
from reader_app.grading.memory import record_verdict
from reader_app.grading.normalize import normalize_answer
from reader_app.models import Case, ModelRun, Response, Study
from tests.factories import make_study
from tests.reader_app.runs.test_run_usage import case_index_by_image
from tests.support.openai_stub import ChatRequest, OpenAIStub, Reply, openai_stub

__all__ = ["openai_stub"]

PLAN = {  # case -> the answer of repeats 1, 2, 3: (diagnosis or None for IDK, likert)
    0: [("key", 3), ("key", 3), ("key", 3)],
    1: [("key", 2), ("wrong", 2), ("key", 4)],
    2: [(None, 0), (None, 0), (None, 0)],
    3: [("wrong", 1), ("wrong", 1), ("key", 1)],
}


def scripted(session: Session) -> object:
    case_of = case_index_by_image(session)
    seen: Counter[int] = Counter()

    def responder(request: ChatRequest) -> Reply:
        case = case_of[request.image_sha256[0]]
        repeat = seen[case]
        seen[case] += 1
        answer, likert = PLAN[case][repeat]
        if answer is None:
            return Reply.idk()
        return Reply.answer(
            f"Diagnosis number {case}" if answer == "key" else "Wrong answer", likert
        )

    return responder


def test_repeats_are_runs_of_their_own_scored_with_mean_sd_and_agreement(
    session: Session,
    settings: Settings,
    openai_stub: OpenAIStub,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=4)
    for case in session.exec(select(Case)).all():  # "Wrong answer" is graded wrong
        assert case.id is not None and study.id is not None
        record_verdict(
            session=session,
            study_id=study.id,
            case_id=case.id,
            normalized_answer=normalize_answer("Wrong answer"),
            correct=0,
            source="adjudicator",
            decided_by="test",
        )
    session.commit()
    openai_stub.responder = scripted(session)  # type: ignore[assignment]
    args = ["run-model", "study", "--endpoint", openai_stub.base_url, "--model", "stub-vlm"]
    code = main([*args, "--repeats", "3", "--quiet", "--concurrency", "1"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert openai_stub.served() == 12
    with Session(session.get_bind()) as fresh:
        runs = fresh.exec(select(ModelRun).order_by(ModelRun.name)).all()  # type: ignore[arg-type]
        assert [(r.name, r.run_group, r.repeat_index) for r in runs] == [
            ("stub-vlm #1", "stub-vlm", 1),
            ("stub-vlm #2", "stub-vlm", 2),
            ("stub-vlm #3", "stub-vlm", 3),
        ]
        assert len(fresh.exec(select(Response)).all()) == 12
    # resumable like one run: the same command asks nothing more
    assert main([*args, "--repeats", "3", "--quiet"]) == 0
    assert openai_stub.served() == 12
    assert "asked 0 this session" in capsys.readouterr().out

    exported = tmp_path / "responses.csv"
    assert main(["export", "study", "--what", "responses", "-o", str(exported)]) == 0
    capsys.readouterr()
    assert main(["score", str(exported), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    (group,) = report["repeat_groups"]
    assert group["run_group"] == "stub-vlm"
    assert [(r["repeat"], r["radle_c"], r["radle_a"]) for r in group["repeats"]] == [
        (1, 1250.0, 0.5),
        (2, 950.0, 0.25),
        (3, 1550.0, 0.75),
    ]
    assert group["radle_c_mean"] == pytest.approx(1250.0)
    assert group["radle_c_sd"] == pytest.approx(300.0)
    assert group["radle_a_mean"] == pytest.approx(0.5)
    assert group["radle_a_sd"] == pytest.approx(0.25)
    assert group["outcome_kappa"] == pytest.approx(7 / 15)
    assert group["identical_share"] == pytest.approx(0.5)
    assert group["likert_identical_share"] == pytest.approx(2 / 3)
    assert group["likert_icc"] == pytest.approx(9 / 13)
    assert group["cases_rated_by_all"] == 4 and group["cases_answered_by_all"] == 3

    # the Model runs page's table (and the repeats export) give the same figures
    with Session(session.get_bind()) as fresh:
        s = fresh.exec(select(Study)).one()
        assert s.id is not None
        table = repeat_summary(session=fresh, study_id=s.id)
    row = table.iloc[0]
    assert row["repeats"] == "stub-vlm #1, stub-vlm #2, stub-vlm #3"
    assert row["outcome_kappa"] == pytest.approx(7 / 15)
    assert row["radle_c_sd"] == pytest.approx(300.0)


def test_a_repeat_count_below_one_is_refused(
    session: Session,
    settings: Settings,
    openai_stub: OpenAIStub,
    capsys: pytest.CaptureFixture[str],
) -> None:
    make_study(session, settings.asset_dir, n_cases=2)
    args = ["run-model", "study", "--endpoint", openai_stub.base_url, "--model", "m"]
    assert main([*args, "--repeats", "0", "--quiet"]) == 2
    assert "--repeats must be 1 or more" in capsys.readouterr().err
    assert openai_stub.served() == 0
