"""`readerstudy export`: responses, audit log and MRMC long format, in CSV and Parquet,
each carrying the scoring-spec version and parameters."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pandas as pd
import pytest
from sqlmodel import Session, col, select

from reader_app.analysis.exports import read_metadata
from reader_app.analysis.mrmc import MRMC_COLUMNS
from reader_app.analysis.timing import TIMING_COLUMNS
from reader_app.cli import main
from reader_app.core.settings import Settings
from reader_app.exam.next_case import next_case
from reader_app.exam.order import ensure_order
from reader_app.exam.submit import submit_answer, validate_answer
from reader_app.grounding.hits import GROUNDING_COLUMNS
from reader_app.models import Case, Response, utcnow
from reader_app.results import INTERACTION_COLUMNS
from scoring import SCORING_SPEC_VERSION, TIDY_COLUMNS, ScoringParams
from tests.factories import make_reader, make_study
from tests.reader_app.analysis.scenario import (
    grade_everything,
    import_model_run,
    plan_for,
    simulate_reader,
)

CASES = ["case-000", "case-001", "case-002"]
PARAM_COLUMNS = [f"param_{k}" for k in ScoringParams().to_dict()]


@pytest.fixture
def graded(session: Session, settings: Settings):  # type: ignore[no-untyped-def]
    study = make_study(session, settings.asset_dir, n_cases=3)
    simulate_reader(session, study, "R01", plan_for(CASES, "CwI"), group="PGY1")
    import_model_run(session, study, "run-a", plan_for(CASES, "WCc"))
    grade_everything(session, study)
    return study


def _csv(capsys: pytest.CaptureFixture[str], *argv: str) -> pd.DataFrame:
    assert main(["export", "study", *argv]) == 0
    return pd.read_csv(io.StringIO(capsys.readouterr().out), keep_default_na=False, dtype=str)


def test_responses_csv_is_the_tidy_frame_plus_provenance(
    graded: object, capsys: pytest.CaptureFixture[str]
) -> None:
    frame = _csv(capsys, "--what", "responses", "--format", "csv")
    assert list(frame.columns) == [
        *TIDY_COLUMNS,
        *GROUNDING_COLUMNS,
        *INTERACTION_COLUMNS,
        *TIMING_COLUMNS,
        "cohort",
        *PARAM_COLUMNS,
    ]
    assert set(frame["interaction"]) == {""}  # no browser reported anything here
    assert set(frame["param_scoring_spec_version"]) == {SCORING_SPEC_VERSION}
    assert set(frame["param_idk_score"]) == {"0.0"} and set(frame["param_n_boot"]) == {"2000"}
    assert len(frame) == 6 and set(frame["responder"]) == {"R01", "run-a"}
    # the default is unchanged: responses as CSV on stdout
    assert _csv(capsys).equals(frame)


def test_timing_columns_carry_each_response_s_times(
    graded: object, session: Session, capsys: pytest.CaptureFixture[str]
) -> None:
    first = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
    rows = session.exec(select(Response).where(col(Response.reader_id).is_not(None))).all()
    for n, row in enumerate(sorted(rows, key=lambda r: r.id or 0)):
        row.first_shown_at = first + timedelta(minutes=n)
        row.active_ms = 1000 * (n + 1)
        session.add(row)
    session.commit()
    case_of = {i: c for i, c in session.exec(select(Case.id, Case.source_id))}
    expected = {
        case_of[r.case_id]: ((first + timedelta(minutes=n)).isoformat(), str(1000 * (n + 1)))
        for n, r in enumerate(sorted(rows, key=lambda r: r.id or 0))
    }
    for what, who, case in (("responses", "responder", "case_id"), ("mrmc", "reader", "case")):
        frame = _csv(capsys, "--what", what)
        human = frame[frame[who] == "R01"]
        got = {
            c: (f, a)
            for c, f, a in zip(
                human[case], human["first_shown_at"], human["active_ms"], strict=True
            )
        }
        assert got == expected, what
        model = frame[frame[who] == "run-a"]  # model runs have no reading time
        assert set(model["active_ms"]) == {""} and set(model["first_shown_at"]) == {""}


def test_mrmc_long_format(graded: object, capsys: pytest.CaptureFixture[str]) -> None:
    frame = _csv(capsys, "--what", "mrmc", "--idk-score", "1")
    assert list(frame.columns) == [*MRMC_COLUMNS, *TIMING_COLUMNS, "cohort", *PARAM_COLUMNS]
    rows = {(r.reader, r.case): r for r in frame.itertuples()}
    # R01 "CwI": correct L4 -> score 1, points 5; wrong L1 -> 0, -2; idk -> 0, idk_score 1
    assert (rows["R01", "case-000"].score, rows["R01", "case-000"].points) == ("1", "5.0")
    assert (rows["R01", "case-001"].score, rows["R01", "case-001"].points) == ("0", "-2.0")
    assert (rows["R01", "case-002"].status, rows["R01", "case-002"].points) == ("idk", "1.0")
    assert rows["R01", "case-000"].modality == "human"
    assert rows["run-a", "case-001"].modality == "model:run-a"
    assert set(frame["truth"]) == {"1"} and set(frame["param_idk_score"]) == {"1.0"}


def test_mrmc_task_filter(graded: object, capsys: pytest.CaptureFixture[str]) -> None:
    # a diagnosis study: its rows are the default and "all"; "report" has none
    default = _csv(capsys, "--what", "mrmc")
    assert len(default) == 6 and set(default["task"]) == {"diagnosis"}
    assert _csv(capsys, "--what", "mrmc", "--task", "all").equals(default)
    reports = _csv(capsys, "--what", "mrmc", "--task", "report")
    assert reports.empty and list(reports.columns) == list(default.columns)
    with pytest.raises(SystemExit):
        main(["export", "study", "--what", "mrmc", "--task", "everything"])
    assert "invalid choice" in capsys.readouterr().err


def test_parquet_carries_params_as_columns_and_metadata(
    graded: object, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for what in ("responses", "audit", "mrmc"):
        path = tmp_path / f"{what}.parquet"
        assert (
            main(["export", "study", "--what", what, "--format", "parquet", "-o", str(path)]) == 0
        )
        frame = pd.read_parquet(path)
        assert frame["param_scoring_spec_version"].unique().tolist() == [SCORING_SPEC_VERSION]
        meta = read_metadata(path.read_bytes())
        assert meta["what"] == what and meta["study"] == "study"
        assert meta["params"] == ScoringParams().to_dict()
    responses = pd.read_parquet(tmp_path / "responses.parquet")
    assert list(responses.columns[: len(TIDY_COLUMNS)]) == list(TIDY_COLUMNS)
    assert str(responses["likert"].dtype) == "Int64"
    # Parquet is binary: stdout is refused with a message
    assert main(["export", "study", "--format", "parquet"]) == 2
    assert "--output" in capsys.readouterr().err


def test_audit_log_export(graded: object, capsys: pytest.CaptureFixture[str]) -> None:
    frame = _csv(capsys, "--what", "audit")
    assert list(frame.columns[:5]) == ["id", "at", "actor", "action", "detail"]
    actions = list(frame["action"])
    assert "invite" in actions and "import_run" in actions and "adjudication.decide" in actions
    decided = frame[frame["action"] == "adjudication.decide"].iloc[0]
    assert json.loads(decided["detail"])["correct"] == 0
    assert frame["at"].str.endswith("+00:00").all()  # UTC, with its offset


def test_ungraded_answers_stop_the_mrmc_export(
    session: Session, settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=2)
    simulate_reader(session, study, "R01", plan_for(["case-000", "case-001"], "Cw"))
    assert main(["export", "study", "--what", "mrmc"]) == 2
    err = capsys.readouterr().err
    assert "cannot export mrmc" in err and "R01/case-000" in err
    assert main(["export", "study", "--what", "responses"]) == 0  # raw responses still export
    assert main(["export", "nope", "--what", "audit"]) == 2
    assert "no study named 'nope'" in capsys.readouterr().err


def test_every_export_option_and_column_is_documented() -> None:
    import argparse

    from reader_app.commands import export

    docs = (Path(__file__).resolve().parents[3] / "docs" / "analysis.md").read_text()
    parser = argparse.ArgumentParser(prog="readerstudy")
    sub = parser.add_subparsers(dest="command")
    export.add_parser(sub)
    for action in sub.choices["export"]._actions:
        for option in action.option_strings:
            if option not in ("-h", "--help"):
                assert f"`{option}`" in docs, f"{option} is not in docs/analysis.md"
    for column in (*MRMC_COLUMNS, *TIDY_COLUMNS, "detail", *PARAM_COLUMNS):
        assert f"`{column}`" in docs, f"column {column} is not in docs/analysis.md"


def test_viewer_interaction_reaches_the_responses_export(
    session: Session, settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=2)
    reader = make_reader(session, study, "R07", ready=True).reader
    ensure_order(session=session, reader=reader)
    record = {
        "slices_visited": [1, 2, 3, 9],
        "windows_used": ["lung", "file"],  # as answers before "original" was the name
        "zoom_used": True,
        "pan_used": False,
        "one_to_one_used": False,
        "max_zoom": 2.5,
        "thumbnail_clicks": 1,
        "fullscreen_s": 12.4,
    }
    for i, interaction in enumerate((record, None)):
        view = next_case(session=session, reader=reader)
        assert view is not None
        submit_answer(
            session=session,
            reader=reader,
            case_public_id=view.public_id,
            answer=validate_answer(f"answer {i}", 2, False),
            shown_at=utcnow(),
            image_sha256=view.image_sha256,
            interaction=interaction,
        )
    frame = _csv(capsys, "--what", "responses").set_index("diagnosis")
    first, second = frame.loc["answer 0"], frame.loc["answer 1"]
    # 4 slices visited, two windows in the order used, zoom yes, 12.4 s in fullscreen
    # the file's own window by its one name, "original", in the columns and the record
    assert (first.slices_visited, first.windows_used) == ("4", "lung|original")
    assert (first.zoom_used, first.fullscreen_s) == ("True", "12.4")
    assert json.loads(first.interaction) == {**record, "windows_used": ["lung", "original"]}
    assert (second.slices_visited, second.windows_used, second.interaction) == ("", "", "")


def test_key_export_is_the_key_csv_defused_unless_raw(
    session: Session, settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    from reader_app.cli import main
    from reader_app.grading.key import parse_key_csv
    from reader_app.grading.key_admin import update_key
    from tests.factories import make_reader

    study = make_study(session, settings.asset_dir, n_cases=2, diagnoses=["=HYPERLINK(1)", "Ok"])
    coordinator = make_reader(session, study, "C01", role="coordinator").reader
    case = session.exec(select(Case).where(Case.source_id == "case-001")).one()
    assert case.id is not None
    update_key(
        session=session, actor=coordinator, case_id=case.id, diagnosis="Ok",
        synonyms="+plus|@at", reason="test",
    )  # fmt: skip
    assert main(["export", "study", "--what", "key"]) == 0
    text = capsys.readouterr().out
    assert text.splitlines()[0] == "case_id,diagnosis,synonyms"
    assert "'=HYPERLINK(1)" in text and "'+plus|@at" in text  # a spreadsheet shows, never runs
    assert "param_" not in text  # the key file's contract: three columns
    key = parse_key_csv(text)  # and it reads back exactly
    assert key["case-000"].diagnosis == "=HYPERLINK(1)"
    assert key["case-001"].synonyms == ("+plus", "@at")
    assert main(["export", "study", "--what", "key", "--raw"]) == 0
    raw = capsys.readouterr().out
    assert "\n" + "case-000,=HYPERLINK(1)," in raw.replace("\r\n", "\n")
