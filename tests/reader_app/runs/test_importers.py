"""Importing model outputs (JSONL, CSV) and a RadLE long master into a study."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pandas as pd
import pytest
from sqlmodel import Session, col, select

from reader_app.core.settings import Settings
from reader_app.grading.normalize import normalize_answer
from reader_app.models import Case, ModelRun, Reader, Response, Study, Verdict
from reader_app.results import tidy_responses
from reader_app.runs.import_writer import RunImportError
from reader_app.runs.importers import detect_format, import_run_file
from reader_app.study.casebank import RenderedImage, add_case, create_study
from scoring.frame import validate_frame
from scoring.io.radle import read_radle_csv
from tests.factories import make_study, png_bytes

RADLE_SAMPLE = Path(__file__).resolve().parents[2] / "scoring/io/data/radle_long_master_sample.csv"


def jsonl(*records: dict[str, object]) -> bytes:
    return "\n".join(json.dumps(r) for r in records).encode()


def rows_of(session: Session, run_name: str) -> dict[str, Response]:
    rows = session.exec(
        select(Response, Case.source_id)
        .join(Case, col(Case.id) == Response.case_id)
        .join(ModelRun, col(ModelRun.id) == Response.model_run_id)
        .where(ModelRun.name == run_name)
    ).all()
    return {sid: r for r, sid in rows}


def test_jsonl_outputs_are_parsed_with_raw_text_and_usage_kept(
    session: Session, settings: Settings
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=4)
    data = jsonl(
        {"case_id": "case-000", "model": "gpt-x", "output": '{"diagnosis": "A", "likert_score": 4}',
         "prompt_tokens": 900, "completion_tokens": 12, "latency_s": 1.5},
        {"case_id": "case-001", "model": "gpt-x",
         "output": '```json\n{"diagnosis": "B", "likert_score": 1}\n```'},
        {"case_id": "case-002", "model": "gpt-x", "output": "I don't know"},
        {"case_id": "case-003", "model": "gpt-x", "output": "lorem ipsum",
         "usage": {"prompt_tokens": 5}},
    )  # fmt: skip
    summary = import_run_file(session=session, study=study, source=data, group="OpenAI")
    assert (summary.format, summary.runs, summary.added) == ("jsonl", ["gpt-x"], 4)
    rows = rows_of(session, "gpt-x")
    got = {k: (r.status, r.diagnosis, r.likert, r.idk) for k, r in rows.items()}
    assert got == {
        "case-000": ("answered", "A", 4, False),
        "case-001": ("answered", "B", 1, False),
        "case-002": ("idk", None, None, True),
        "case-003": ("failure", None, None, False),
    }
    assert rows["case-003"].raw_reply == "lorem ipsum"
    assert json.loads(rows["case-000"].meta_json)["latency_s"] == 1.5
    assert json.loads(rows["case-003"].meta_json)["prompt_tokens"] == 5
    run = session.exec(select(ModelRun)).one()
    assert (run.source, run.model, run.group_name) == ("import", "gpt-x", "OpenAI")
    assert json.loads(run.params_json)["format"] == "jsonl"
    assert json.loads(run.totals_json)["answered"] == 2 and run.finished_at is not None


def test_csv_with_fields_and_a_run_name_then_reimport(session: Session, settings: Settings) -> None:
    study = make_study(session, settings.asset_dir, n_cases=2)
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerows(
        [["case_id", "diagnosis", "likert"], ["case-000", "Pneumonia", "3"], ["case-001", "X", ""]]
    )
    data = buf.getvalue().encode()
    assert detect_format(buf.getvalue(), "out.csv") == "csv"
    first = import_run_file(session=session, study=study, source=data, fmt="csv", name="local-7b")
    assert first.by_status == {"answered": 1, "invalid": 1}
    again = import_run_file(session=session, study=study, source=data, fmt="csv", name="local-7b")
    assert (again.added, again.skipped) == (0, 2)
    replaced = import_run_file(
        session=session, study=study, source=data, fmt="csv", name="local-7b", replace=True
    )
    assert replaced.updated == 2 and len(rows_of(session, "local-7b")) == 2


def test_missing_cases_are_named_and_nothing_is_written(
    session: Session, settings: Settings
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=1)
    data = jsonl(
        {"case_id": "case-000", "model": "m", "diagnosis": "A", "likert": 2},
        {"case_id": "nope-1", "model": "m", "diagnosis": "A", "likert": 2},
    )
    with pytest.raises(RunImportError, match="nope-1"):
        import_run_file(session=session, study=study, source=data)
    assert session.exec(select(Response)).first() is None
    assert session.exec(select(ModelRun)).first() is None


def test_import_refuses_a_runner_made_run(session: Session, settings: Settings) -> None:
    study = make_study(session, settings.asset_dir, n_cases=1)
    assert study.id is not None
    session.add(ModelRun(study_id=study.id, name="m", model="m", source="runner"))
    session.commit()
    data = jsonl({"case_id": "case-000", "model": "m", "diagnosis": "A", "likert": 2})
    with pytest.raises(RunImportError, match="runner"):
        import_run_file(session=session, study=study, source=data)


def radle_study(session: Session, settings: Settings) -> Study:
    study = create_study(session=session, slug="radle", title="RadLE sample")
    for i, (sid, dx) in enumerate([("1", "Carotid-cavernous fistula"), ("2", "Pneumothorax")]):
        image = RenderedImage(png_bytes(shade=10 + i), 64, 48)
        add_case(
            session=session,
            asset_dir=settings.asset_dir,
            study=study,
            source_id=sid,
            kind="spot",
            images=[image],
            diagnosis=dx,
            position=i,
        )
    session.commit()
    return study


def radle_csv(extra: list[dict[str, str]]) -> bytes:
    frame = pd.read_csv(RADLE_SAMPLE, dtype=str, keep_default_na=False)
    base = frame.iloc[0].to_dict()
    rows = [{**base, **{k: "" for k in base if k.startswith("reasoning")}, **e} for e in extra]
    both = pd.concat([frame, pd.DataFrame(rows)], ignore_index=True)
    return both.to_csv(index=False).encode()


HUMANS = [
    {"candidate": "Trainee", "provider": "R01", "domain": "human", "access": "human",
     "rater_seniority": "PGY2",
     "Master_Case_ID": "1", "diagnosis": "Carotid cavernous fistula", "likert": "3",
     "final_score_authoritative": "1"},
    {"candidate": "Trainee", "provider": "R01", "domain": "human", "access": "human",
     "rater_seniority": "PGY2", "Master_Case_ID": "2", "diagnosis": "Idon't know", "likert": "",
     "final_score_authoritative": "0"},
    {"candidate": "Radiologist", "provider": "R02", "domain": "human", "access": "human",
     "rater_seniority": "attending",
     "Master_Case_ID": "2", "diagnosis": "Tension pneumothorax", "likert": "4",
     "final_score_authoritative": "1"},
    {"candidate": "gpt_5_5", "Master_Case_ID": "2", "diagnosis": "PARSE_FAILED", "likert": "",
     "technical_failure": "True", "final_score_authoritative": "0"},
]  # fmt: skip


def test_radle_long_master_round_trips_through_the_study(
    session: Session, settings: Settings
) -> None:
    study = radle_study(session, settings)
    data = radle_csv(HUMANS)
    assert detect_format(data.decode(), None) == "radle"
    summary = import_run_file(session=session, study=study, source=data, filename="master.csv")
    assert summary.readers == ["R01", "R02"]
    assert len(summary.runs) == 6  # three access == excluded candidates are left out
    readers = session.exec(select(Reader).order_by(col(Reader.code))).all()
    assert [(r.code, r.group_name, r.role, r.token_hash) for r in readers] == [
        ("R01", "trainees", "reader", None),
        ("R02", "board-certified", "reader", None),
    ]
    verdicts = session.exec(select(Verdict)).all()
    assert {v.source for v in verdicts} == {"import"}
    assert (normalize_answer("Mucocele"), 0) in {(v.normalized_answer, v.correct) for v in verdicts}
    run = session.exec(select(ModelRun).where(ModelRun.name == "gpt_5_5")).one()
    assert (run.group_name, run.source) == ("OpenAI", "import")

    expected = validate_frame(read_radle_csv(io.StringIO(data.decode())), require_verdicts=False)
    got = tidy_responses(session=session, study_id=study.id)  # type: ignore[arg-type]
    key = ["responder", "case_id"]
    merged = expected.merge(got, on=key, suffixes=("_file", "_db"), validate="one_to_one")
    assert len(merged) == len(expected) == len(got) == 10
    for field in ("kind", "group", "status", "likert"):
        file_col, db_col = merged[f"{field}_file"], merged[f"{field}_db"]
        if field == "likert":
            file_col, db_col = file_col.astype("Int64"), db_col.astype("Int64")
        pd.testing.assert_series_equal(file_col, db_col, check_names=False, check_dtype=False)
    answered = merged[merged["status_file"] == "answered"]
    assert (answered["correct_file"] == answered["correct_db"]).all()
    assert (answered["diagnosis_file"] == answered["diagnosis_db"]).all()
    failure = rows_of(session, "gpt_5_5")["2"]
    assert failure.status == "failure" and failure.raw_reply == "PARSE_FAILED"
    assert json.loads(failure.meta_json)["radle"]["final_score_source"] == "human_prior"


def test_radle_include_excluded_and_conflicting_verdicts(
    session: Session, settings: Settings
) -> None:
    study = radle_study(session, settings)
    clash = [
        {
            "candidate": "Radiologist",
            "provider": "R09",
            "domain": "human",
            "access": "human",
            "Master_Case_ID": "1",
            "diagnosis": "Mucocele",
            "likert": "2",
            "final_score_authoritative": "1",
        }
    ]
    data = radle_csv(clash)
    with pytest.raises(RunImportError, match="mucocele"):
        import_run_file(session=session, study=study, source=data)
    summary = import_run_file(
        session=session,
        study=study,
        source=data,
        include_excluded=True,
        verdict_conflicts="majority",
    )
    assert len(summary.runs) == 9
    mucocele = session.exec(
        select(Verdict).where(Verdict.normalized_answer == normalize_answer("Mucocele"))
    ).one()
    assert mucocele.correct == 0  # one vote each way: a tie counts as incorrect


def test_radle_verdict_against_grade_memory_is_refused(
    session: Session, settings: Settings
) -> None:
    study = radle_study(session, settings)
    case = session.exec(select(Case).where(Case.source_id == "1")).one()
    assert case.id is not None
    session.add(
        Verdict(case_id=case.id, normalized_answer="mucocele", correct=1, source="adjudicator")
    )
    session.commit()
    with pytest.raises(RunImportError, match="grade memory"):
        import_run_file(session=session, study=study, source=radle_csv([]))
    assert session.exec(select(Response)).first() is None


def test_model_outputs_bring_a_cohort_column_or_the_cohort_option(
    session: Session, settings: Settings
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=2)
    data = jsonl(
        {"case_id": "case-000", "model": "a", "diagnosis": "X", "likert": 3, "cohort": "medical"},
        {"case_id": "case-001", "model": "a", "diagnosis": "Y", "likert": 2, "cohort": "medical"},
        {"case_id": "case-000", "model": "b", "diagnosis": "X", "likert": 1},
    )  # fmt: skip
    import_run_file(session=session, study=study, source=data)
    cohorts = {r.name: r.cohort for r in session.exec(select(ModelRun)).all()}
    assert cohorts == {"a": "medical", "b": None}
    # --cohort labels every run of the file, over the column; a re-import relabels
    import_run_file(session=session, study=study, source=data, cohort="frontier")
    session.expire_all()
    cohorts = {r.name: r.cohort for r in session.exec(select(ModelRun)).all()}
    assert cohorts == {"a": "frontier", "b": "frontier"}
