"""``readerstudy import-run FILE [--format jsonl/csv/radle]`` end to end."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from sqlmodel import Session, select

from reader_app.cli import main
from reader_app.core.settings import Settings
from reader_app.models import ModelRun, Response
from reader_app.results import tidy_responses
from tests.factories import make_study


def write_jsonl(path: Path, records: list[dict[str, object]]) -> str:
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    return str(path)


def test_import_run_jsonl_into_the_only_study_then_export(
    session: Session,
    settings: Settings,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=2)
    path = write_jsonl(
        tmp_path / "outputs.jsonl",
        [
            {"case_id": "case-000", "output": '{"diagnosis": "Diagnosis number 0", "likert": 4}'},
            {"case_id": "case-001", "output": "I don't know"},
        ],
    )
    assert main(["import-run", path, "--name", "vlm-a", "--group", "Lab"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert out[-1].startswith("imported jsonl into study: run vlm-a; 2 added")
    with Session(session.get_bind()) as fresh:
        run = fresh.exec(select(ModelRun)).one()
        assert (run.name, run.source, run.group_name) == ("vlm-a", "import", "Lab")
        assert json.loads(run.params_json)["file"] == "outputs.jsonl"
        frame = tidy_responses(session=fresh, study_id=study.id)  # type: ignore[arg-type]
    # autograde ran after the import: the exact key match is graded, the IDK needs nothing
    assert frame[["responder", "kind", "status"]].values.tolist() == [
        ["vlm-a", "model", "answered"],
        ["vlm-a", "model", "idk"],
    ]
    if importlib.util.find_spec("reader_app.grading.autograde") is not None:
        assert any(line.startswith("grading:") for line in out)
        assert int(frame.loc[0, "correct"]) == 1
    # a second import of the same file adds nothing
    assert main(["import-run", path, "--name", "vlm-a", "--no-autograde"]) == 0
    again = capsys.readouterr().out
    assert "0 added" in again and "2 already present" in again


def test_import_run_errors_are_clear(
    session: Session,
    settings: Settings,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    make_study(session, settings.asset_dir, n_cases=1, slug="one")
    make_study(session, settings.asset_dir, n_cases=1, slug="two")
    path = write_jsonl(tmp_path / "o.jsonl", [{"case_id": "case-009", "model": "m", "output": "x"}])
    assert main(["import-run", path]) == 2
    assert "--study" in capsys.readouterr().err
    assert main(["import-run", path, "--study", "one"]) == 2
    assert "case-009" in capsys.readouterr().err
    assert main(["import-run", str(tmp_path / "absent.jsonl"), "--study", "one"]) == 2
    assert "absent.jsonl" in capsys.readouterr().err
    with Session(session.get_bind()) as fresh:
        assert fresh.exec(select(Response)).first() is None
