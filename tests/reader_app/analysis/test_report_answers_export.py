"""``export --what reports``: every report answer, judged or not, its text exactly as typed
or replied, on SQLite and PostgreSQL.

A reader types a report through the exam's service, another says "I don't know",
a model replies through run-model (a 127.0.0.1 stub). One report is judged (the
judges agree), the model's is split and graded by an adjudicator. Then the same
reports go through ``judge-reports`` against the stub's judges: each judge's
reason and the fabrication flag reach the export exactly as the judges replied.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
from sqlmodel import Session, select

from reader_app.analysis.exports import export_frame, to_bytes
from reader_app.analysis.report_answers import REFERENCE_COLUMNS
from reader_app.cli import main
from reader_app.core.settings import Settings
from reader_app.exam.order import ensure_order
from reader_app.exam.report_submit import submit_report, validate_report
from reader_app.models import Case, CaseReport, Response, RubricGrade, RubricJudgement, Study
from scoring import ScoringParams
from tests.factories import make_study
from tests.reader_app.grading.helpers import reader
from tests.support.openai_stub import ChatRequest, OpenAIStub, Reply, openai_stub

__all__ = ["openai_stub"]

TYPED_FINDINGS = '=HYPERLINK("http://x")\nZweite Zeile — ünïcödé 肺 ✓\n\n  indented line'
TYPED_IMPRESSION = 'Bilateral PE.\nNo infarct; "quoted", comma'
MODEL_FINDINGS = "+1 filling defects\r\nright > left, 12 mm — 😀"
MODEL_IMPRESSION = "-Pulmonary embolism\n@ both lower lobes"
REF_FINDINGS = "=Emboli in both lower-lobe arteries.\nNo effusion."


def _reports(session: Session, settings: Settings, stub: OpenAIStub) -> Study:
    """The study with its three report answers (typed, "I don't know", run-model), unjudged."""
    study = make_study(session, settings.asset_dir, n_cases=1, strip_every=1, strip_slices=16)
    case = session.exec(select(Case).where(Case.study_id == study.id)).one()
    session.add(
        CaseReport(
            case_id=case.id or 0,
            answer="report",
            reference_findings=REF_FINDINGS,
            reference_impression="Bilateral PE",
        )
    )
    session.commit()
    typed = reader(session, study, "R01")
    ensure_order(session=session, reader=typed)
    submit_report(
        session=session,
        reader=typed,
        case_public_id=case.public_id,
        answer=validate_report(TYPED_FINDINGS, TYPED_IMPRESSION, 3, False),
        shown_at=None,
        image_sha256=[],
    )
    unsure = reader(session, study, "R02")
    ensure_order(session=session, reader=unsure)
    submit_report(
        session=session,
        reader=unsure,
        case_public_id=case.public_id,
        answer=validate_report(None, None, None, True),
        shown_at=None,
        image_sha256=[],
    )
    stub.responder = lambda request: Reply(
        json.dumps({"findings": MODEL_FINDINGS, "impression": MODEL_IMPRESSION})
    )
    assert (
        main(
            [
                "run-model",
                "study",
                "--endpoint",
                stub.base_url,
                "--model",
                "vlm",
                "--quiet",
                "--no-autograde",
            ]
        )
        == 0
    )
    return study


def _study(session: Session, settings: Settings, stub: OpenAIStub) -> Study:
    study = _reports(session, settings, stub)
    rows = {
        (r.reader_id is not None, r.idk): r
        for r in session.exec(select(Response).where(Response.study_id == study.id)).all()
    }
    human, model = rows[(True, False)], rows[(False, False)]
    session.add(
        RubricJudgement(
            response_id=human.id or 0,
            prompt_version="rubric_judge_v1",
            judges="j-a@h1+j-b@h2",
            scores_json="[30, 34]",
            status="agree",
            score=32,
            gap=8,
        )
    )
    session.add(
        RubricJudgement(
            response_id=model.id or 0,
            prompt_version="rubric_judge_v1",
            judges="j-a@h1+j-b@h2",
            scores_json="[4, 20]",
            status="disagree",
            score=None,
            gap=8,
        )
    )
    adjudicator = reader(session, study, "ADJ", role="adjudicator")
    session.add(
        RubricGrade(response_id=model.id or 0, adjudicator_id=adjudicator.id or 0, score=12)
    )
    session.commit()
    return study


def test_every_report_with_its_exact_text_and_grades(
    session: Session, settings: Settings, openai_stub: OpenAIStub, tmp_path: Path
) -> None:
    study = _study(session, settings, openai_stub)
    frame = export_frame("reports", session=session, study=study, params=ScoringParams(n_boot=0))
    assert len(frame) == 3  # judged, unjudged (the idk) and adjudicated alike
    rows = frame.set_index("responder")
    r01, r02, vlm = rows.loc["R01"], rows.loc["R02"], rows.loc["vlm"]
    assert (r01["findings"], r01["impression"]) == (TYPED_FINDINGS, TYPED_IMPRESSION)
    assert (vlm["findings"], vlm["impression"]) == (MODEL_FINDINGS, MODEL_IMPRESSION)
    assert (r01["kind"], vlm["kind"], r01["likert"], bool(r02["idk"])) == (
        "human",
        "model",
        3,
        True,
    )
    assert (r01["judge_1"], r01["judge_1_score"], r01["judge_1_tier"]) == ("j-a@h1", 30, "Solid")
    assert (r01["judge_2_score"], r01["judge_2_tier"], r01["judge_status"]) == (
        34,
        "Strong",
        "agree",
    )
    assert pd.isna(r01["adjudicated_score"]) and (r01["rubric"], r01["tier"]) == (32, "Strong")
    assert (vlm["judge_1_score"], vlm["judge_2_score"], vlm["judge_status"]) == (4, 20, "disagree")
    assert (vlm["adjudicated_score"], vlm["rubric"], vlm["tier"]) == (12, 12, "Poor")
    assert pd.isna(r02["judge_status"]) and pd.isna(r02["rubric"]) and pd.isna(r02["tier"])
    assert (
        r01["reference_findings"] == REF_FINDINGS and r02["reference_impression"] == "Bilateral PE"
    )
    # judgements stored before reasons and flags were kept: blank, not invented
    assert frame[["judge_1_reason", "judge_2_reason", "fabrication"]].isna().all().all()

    # Parquet: exact, every character
    parquet = to_bytes(frame, "parquet")
    back = pd.read_parquet(io.BytesIO(parquet)).set_index("responder")
    assert back.loc["R01", "findings"] == TYPED_FINDINGS
    assert back.loc["vlm", "findings"] == MODEL_FINDINGS
    assert back.loc["R01", "reference_findings"] == REF_FINDINGS
    # CSV: the same text, a leading formula character defused with an apostrophe
    csv = pd.read_csv(io.BytesIO(to_bytes(frame, "csv")), keep_default_na=False)
    by = csv.set_index("responder")
    assert by.loc["R01", "findings"] == "'" + TYPED_FINDINGS
    assert by.loc["R01", "impression"] == TYPED_IMPRESSION
    assert by.loc["vlm", "findings"] == "'" + MODEL_FINDINGS
    assert by.loc["vlm", "impression"] == "'" + MODEL_IMPRESSION
    raw = pd.read_csv(io.BytesIO(to_bytes(frame, "csv", raw=True)), keep_default_na=False)
    assert raw.set_index("responder").loc["vlm", "findings"] == MODEL_FINDINGS
    # the command writes the same file
    out = tmp_path / "reports.parquet"
    assert (
        main(["export", "study", "--what", "reports", "--format", "parquet", "-o", str(out)]) == 0
    )
    assert pd.read_parquet(out).set_index("responder").loc["R01", "findings"] == TYPED_FINDINGS


def test_the_reference_report_is_left_out_when_asked(
    session: Session, settings: Settings, openai_stub: OpenAIStub
) -> None:
    study = _study(session, settings, openai_stub)
    frame = export_frame("reports", session=session, study=study, with_reference=False)
    assert not set(REFERENCE_COLUMNS) & set(frame.columns)
    assert REF_FINDINGS not in to_bytes(frame, "csv", raw=True).decode("utf-8")
    assert len(frame) == 3


# (score, fabrication, reason) per judge and candidate; the reasons start with formula
# characters and hold quotes, line breaks and characters beyond ASCII
JUDGED: dict[tuple[str, str], tuple[int, bool, str]] = {
    ("judge-a", "R01"): (30, False, '=Core finding named: "bilateral PE".\nLaterality — 肺 ✓'),
    ("judge-b", "R01"): (34, False, "Matches the reference, concept by concept."),
    ("judge-a", "vlm"): (4, True, "-Fabricated: a 12 mm mass, not in the reference 😀"),
    ("judge-b", "vlm"): (20, False, "+PE named; laterality\r\nnot given"),
}


def _judge(request: ChatRequest) -> Reply:
    candidate = request.text.split("Candidate report", 1)[1]
    who = "R01" if "No infarct" in candidate else "vlm"
    score, fabrication, reason = JUDGED[(request.model, who)]
    return Reply(
        json.dumps(
            {"core_finding": "PE", "score": score, "fabrication": fabrication, "reason": reason}
        )
    )


def test_the_judges_reasons_and_fabrication_flag_as_judged(
    session: Session, settings: Settings, openai_stub: OpenAIStub
) -> None:
    """Issue 26: judged through ``judge-reports`` (two judges on 127.0.0.1), each judge's
    reason and the fabrication flag in the export, character for character; the
    unjudged "I don't know" has neither."""
    study = _reports(session, settings, openai_stub)
    openai_stub.responder = _judge
    url = openai_stub.base_url
    assert (
        main(["judge-reports", "study", "--judge", url, "judge-a", "--judge", url, "judge-b"]) == 0
    )
    assert sorted(r.model for r in openai_stub.requests if r.model != "vlm") == [
        "judge-a",
        "judge-a",
        "judge-b",
        "judge-b",
    ]
    session.expire_all()
    frame = export_frame("reports", session=session, study=study, params=ScoringParams(n_boot=0))
    rows = frame.set_index("responder")
    for who in ("R01", "vlm"):
        row = rows.loc[who]
        assert (row["judge_1"].split("@")[0], row["judge_2"].split("@")[0]) == (
            "judge-a",
            "judge-b",
        )
        assert (row["judge_1_score"], row["judge_1_reason"]) == JUDGED[("judge-a", who)][::2]
        assert (row["judge_2_score"], row["judge_2_reason"]) == JUDGED[("judge-b", who)][::2]
    # R01: 30 and 34 agree at 32, no fabrication; vlm: 4 and 20 split, judge-a found one
    assert (rows.loc["R01", "judge_status"], rows.loc["R01", "rubric"]) == ("agree", 32)
    assert rows.loc["vlm", "judge_status"] == "disagree"
    assert [rows.loc[w, "fabrication"] for w in ("R01", "vlm")] == [False, True]
    assert rows.loc[["vlm"], "rubric"].isna().all()
    r02 = rows.loc["R02"]
    assert r02[["judge_1_reason", "judge_2_reason", "fabrication", "judge_status"]].isna().all()
    assert str(frame["fabrication"].dtype) == "boolean"

    # Parquet: exact, the flag a nullable boolean
    back = pd.read_parquet(io.BytesIO(to_bytes(frame, "parquet"))).set_index("responder")
    assert back.loc["R01", "judge_1_reason"] == JUDGED[("judge-a", "R01")][2]
    assert back.loc["vlm", "judge_1_reason"] == JUDGED[("judge-a", "vlm")][2]
    assert back.loc["vlm", "judge_2_reason"] == JUDGED[("judge-b", "vlm")][2]
    assert [back.loc[w, "fabrication"] for w in ("R01", "vlm")] == [False, True]
    assert back.loc[["R02"], ["fabrication", "judge_1_reason"]].isna().all().all()
    # CSV: a leading formula character defused; the rest of the text as replied
    by = pd.read_csv(io.BytesIO(to_bytes(frame, "csv")), keep_default_na=False).set_index(
        "responder"
    )
    assert by.loc["R01", "judge_1_reason"] == "'" + JUDGED[("judge-a", "R01")][2]
    assert by.loc["R01", "judge_2_reason"] == JUDGED[("judge-b", "R01")][2]
    assert by.loc["vlm", "judge_1_reason"] == "'" + JUDGED[("judge-a", "vlm")][2]
    assert by.loc["vlm", "judge_2_reason"] == "'" + JUDGED[("judge-b", "vlm")][2]
    assert [by.loc[w, "fabrication"] for w in ("R01", "vlm", "R02")] == ["False", "True", ""]
    assert (by.loc["R02", "judge_1_reason"], by.loc["R02", "judge_2_reason"]) == ("", "")
    raw = pd.read_csv(io.BytesIO(to_bytes(frame, "csv", raw=True)), keep_default_na=False)
    assert raw.set_index("responder").loc["vlm", "judge_2_reason"] == JUDGED[("judge-b", "vlm")][2]


def test_one_judge_its_reason_and_flag_the_second_judge_blank(
    session: Session, settings: Settings, openai_stub: OpenAIStub
) -> None:
    """One judge (the paper's set-up): its score stands, its reason and flag are exported."""
    study = _reports(session, settings, openai_stub)
    openai_stub.responder = _judge
    assert main(["judge-reports", "study", "--judge", openai_stub.base_url, "judge-a"]) == 0
    session.expire_all()
    frame = export_frame("reports", session=session, study=study, params=ScoringParams(n_boot=0))
    rows = frame.set_index("responder")
    for who in ("R01", "vlm"):
        score, fabrication, reason = JUDGED[("judge-a", who)]
        row = rows.loc[who]
        assert (row["judge_status"], row["rubric"], row["judge_1_reason"]) == (
            "agree",
            score,
            reason,
        )
        assert row["fabrication"] == fabrication
        assert row[["judge_2", "judge_2_score", "judge_2_reason"]].isna().all()
