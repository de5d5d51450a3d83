"""The analyst's model-run service: list runs, import a file (all or nothing), auto-grade."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from sqlmodel import Session

from reader_app.analysis.model_runs import import_model_file, list_runs
from reader_app.core.auth import AuthError
from reader_app.core.settings import Settings
from reader_app.results import tidy_responses
from reader_app.runs.import_writer import RunImportError
from tests.factories import make_reader, make_study
from tests.reader_app.analysis.scenario import plan_for, simulate_reader


def _jsonl(*records: dict[str, object]) -> bytes:
    return "\n".join(json.dumps(r) for r in records).encode("utf-8")


def test_import_then_list(session: Session, settings: Settings) -> None:
    study = make_study(session, settings.asset_dir, n_cases=2)
    analyst = make_reader(session, study, code="AN", role="analyst").reader
    data = _jsonl(
        {"case_id": "case-000", "output": '{"diagnosis": "Diagnosis number 0", "likert": 4}'},
        {"case_id": "case-001", "output": "I don't know"},
    )
    summary, graded = import_model_file(
        session=session, actor=analyst, data=data, filename="o.jsonl", name="vlm-z", group="lab"
    )
    assert summary.runs == ["vlm-z"] and summary.added == 2
    assert graded.startswith("grading:")
    runs = list_runs(session=session, actor=analyst)
    row = runs.iloc[0]
    assert (row["run"], row["group"], row["source"], row["answered"], row["idk"]) == (
        "vlm-z", "lab", "import", 1, 1
    )  # fmt: skip
    frame = tidy_responses(session=session, study_id=study.id or 0)
    assert frame.loc[frame["status"] == "answered", "correct"].tolist() == [1]  # the key graded it

    with pytest.raises(RunImportError, match="case-404"):
        import_model_file(
            session=session,
            actor=analyst,
            data=_jsonl({"case_id": "case-404", "output": "x"}),
            filename="bad.jsonl",
            name="vlm-bad",
        )
    assert list(list_runs(session=session, actor=analyst)["run"]) == ["vlm-z"]  # nothing stored
    reader = make_reader(session, study, code="R1").reader
    with pytest.raises(AuthError):
        import_model_file(session=session, actor=reader, data=data, filename="o.jsonl")
    with pytest.raises(AuthError):
        list_runs(session=session, actor=reader)


def test_run_usage_counts_the_runs_rows_alone(session: Session, settings: Settings) -> None:
    """The Model runs page reads the runs' rows only (``models_only``): the same rows as
    the whole tidy frame's model rows, and a reader's correct answer is no run's."""
    study = make_study(session, settings.asset_dir, n_cases=3)
    analyst = make_reader(session, study, code="AN", role="analyst").reader
    simulate_reader(session, study, "vlm-z", plan_for(["case-000", "case-001", "case-002"], "CCC"))
    import_model_file(
        session=session,
        actor=analyst,
        data=_jsonl(
            {"case_id": "case-000", "output": '{"diagnosis": "Diagnosis number 0", "likert": 4}'},
            {"case_id": "case-001", "output": '{"diagnosis": "Diagnosis number 9", "likert": 2}'},
            {"case_id": "case-002", "output": "I don't know"},
        ),
        filename="o.jsonl",
        name="vlm-z",
    )
    whole = tidy_responses(session=session, study_id=study.id or 0)
    runs = tidy_responses(session=session, study_id=study.id or 0, models_only=True)
    assert len(whole) == 6 and set(runs["kind"]) == {"model"}
    # the runs' "group" (a reader's group) is empty: None here, a missing string in the
    # whole frame, where readers have one
    assert runs["group"].isna().all()
    pd.testing.assert_frame_equal(
        runs.drop(columns="group"),
        whole[whole["kind"] == "model"].drop(columns="group").reset_index(drop=True),
    )
    # the run answered case-000 right and case-001 wrong; the reader named "vlm-z" like
    # the run answered all three right, which is none of the run's
    row = list_runs(session=session, actor=analyst).iloc[0]
    assert (row["run"], row["answered"], row["correct"]) == ("vlm-z", 2, 1)
