"""The bad-input catalogue, on SQLite and PostgreSQL, straight at the service layer and the CLI.

Manifests and image files (malformed, oversized, decompression bombs, DICOM
with burned-in text, ...) are covered by tests/reader_app/ingest/.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
from sqlalchemy.exc import DBAPIError
from sqlmodel import Session, col, func, select

from reader_app.cli import build_parser
from reader_app.cli import main as cli
from reader_app.core.settings import Settings
from reader_app.exam.next_case import next_case
from reader_app.exam.order import ensure_order
from reader_app.exam.submit import (
    MAX_DIAGNOSIS_CHARS,
    Answer,
    AnswerError,
    submit_answer,
    validate_answer,
)
from reader_app.models import Reader, Response
from tests.factories import make_reader, make_study
from tests.security.hostile import HOSTILE_TEXTS

LONG_TEXT = ("<script>alert(1)</script> **x** 🦴 ورم '); DROP TABLE responses; -- " * 200)[:9_999]
LONG_TEXT += "!"  # 10,000 characters, no outer whitespace


def _count(session: Session) -> int:
    session.expire_all()
    return int(session.exec(select(func.count()).select_from(Response)).one())


def _submit(session: Session, reader: Reader, answer: Answer) -> int:
    case = next_case(session=session, reader=reader)
    assert case is not None
    return submit_answer(
        session=session,
        reader=reader,
        case_public_id=case.public_id,
        answer=answer,
        shown_at=None,
        image_sha256=case.image_sha256,
    ).response_id


@pytest.fixture
def exam(session: Session, settings: Settings) -> Reader:
    study = make_study(session, settings.asset_dir, n_cases=len(HOSTILE_TEXTS) + 2)
    reader = make_reader(session, study).reader
    ensure_order(session=session, reader=reader)
    return reader


def test_hostile_diagnoses_are_stored_and_exported_exactly(
    session: Session, exam: Reader, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = {}
    for name, text in HOSTILE_TEXTS.items():
        ids[name] = _submit(session, exam, validate_answer(text, 1, False))
    session.expire_all()
    for name, text in HOSTILE_TEXTS.items():
        stored = session.get(Response, ids[name])
        assert stored is not None and stored.diagnosis == text, name
    # --raw: the export (tidy CSV) quotes them so that they read back byte for byte
    assert cli(["export", "study", "--what", "responses", "--format", "csv", "--raw"]) == 0
    out = capsys.readouterr().out
    frame = pd.read_csv(io.StringIO(out), keep_default_na=False, dtype=str)
    assert sorted(frame["diagnosis"]) == sorted(HOSTILE_TEXTS.values())
    assert len(frame) == len(HOSTILE_TEXTS)  # newlines inside a cell did not split rows
    # by default (a CSV a person opens): formula-like text gets an apostrophe, nothing else
    assert cli(["export", "study", "--what", "responses", "--format", "csv"]) == 0
    frame = pd.read_csv(io.StringIO(capsys.readouterr().out), keep_default_na=False, dtype=str)
    formula = ("=", "+", "-", "@", "\t", "\r")
    expected = ["'" + t if t.startswith(formula) else t for t in HOSTILE_TEXTS.values()]
    assert sorted(frame["diagnosis"]) == sorted(expected)
    assert any(t.startswith("=") for t in HOSTILE_TEXTS.values())  # the case is covered


@pytest.mark.parametrize("length", [MAX_DIAGNOSIS_CHARS + 1, 10_000])
def test_long_diagnosis_is_refused_with_a_clear_message(
    session: Session, exam: Reader, length: int
) -> None:
    with pytest.raises(AnswerError, match=f"{MAX_DIAGNOSIS_CHARS} characters"):
        validate_answer("x" * length, 2, False)
    assert _count(session) == 0


def test_a_diagnosis_of_exactly_the_limit_is_kept_whole(session: Session, exam: Reader) -> None:
    text = ("ورم🦴<b>" * 60)[:MAX_DIAGNOSIS_CHARS]
    response_id = _submit(session, exam, validate_answer(text, 2, False))
    session.expire_all()
    assert session.get(Response, response_id).diagnosis == text  # type: ignore[union-attr]


BAD_LIKERT = [-1, 5, 7, 2.5, "3", True, 10**20, float("nan")]


@pytest.mark.parametrize("likert", BAD_LIKERT, ids=[repr(v) for v in BAD_LIKERT])
def test_likert_out_of_range_is_refused_by_the_service(likert: object) -> None:
    with pytest.raises(AnswerError, match=r"0 to 4|0-4"):
        validate_answer("Pneumothorax", likert, False)  # type: ignore[arg-type]


def test_missing_likert_and_empty_text_are_refused() -> None:
    with pytest.raises(AnswerError, match="confidence"):
        validate_answer("Pneumothorax", None, False)
    for empty in ("", "   ", "\n\t", None):
        with pytest.raises(AnswerError, match="diagnosis"):
            validate_answer(empty, 3, False)
    # "I don't know" carries nothing else, whatever else was sent
    assert validate_answer("<script>", 9, True) == Answer(diagnosis=None, likert=None, idk=True)


def test_unvalidated_answers_never_reach_the_table(session: Session, exam: Reader) -> None:
    """Even a caller that skips validate_answer cannot store an impossible answer."""
    for bad in (
        Answer(diagnosis="x", likert=7, idk=False),
        Answer(diagnosis="x", likert=-1, idk=False),
        Answer(diagnosis="x", likert=2, idk=True),  # IDK with content
    ):
        with pytest.raises((AnswerError, DBAPIError)):
            _submit(session, exam, bad)
        session.rollback()
    assert _count(session) == 0


def test_submit_answer_validates_the_answer_itself(session: Session, exam: Reader) -> None:
    with pytest.raises(AnswerError):
        _submit(session, exam, Answer(diagnosis="x", likert=7, idk=False))
    session.rollback()
    with pytest.raises(AnswerError):
        _submit(session, exam, Answer(diagnosis=LONG_TEXT, likert=2, idk=False))
    assert _count(session) == 0


def test_nul_characters_are_refused_cleanly(session: Session, exam: Reader) -> None:
    with pytest.raises(AnswerError):
        validate_answer("Pneumo\x00thorax", 2, False)
    assert _count(session) == 0


def test_model_run_imports_store_long_and_hostile_text_exactly(
    session: Session, exam: Reader, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if "import-run" not in _commands():
        pytest.skip("readerstudy import-run is not available")
    texts = [LONG_TEXT, *HOSTILE_TEXTS.values()]
    path = tmp_path / "run.jsonl"
    path.write_text(
        "".join(
            json.dumps({"case_id": f"case-{i:03d}", "responder": "model-x", "diagnosis": t,
                        "likert": 3}) + "\n"
            for i, t in enumerate(texts)
        ),
        encoding="utf-8",
    )  # fmt: skip
    code = cli(["import-run", str(path), "--format", "jsonl", "--study", "study", "--no-autograde"])
    assert code == 0, capsys.readouterr().err
    session.expire_all()
    stored = session.exec(
        select(Response.diagnosis)
        .where(col(Response.model_run_id).is_not(None))
        .order_by(col(Response.id))
    ).all()
    assert sorted(stored) == sorted(texts)  # 10,000 characters kept whole: no cap on imports


def _commands() -> set[str]:
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    return set(sub.choices)  # type: ignore[arg-type]


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


WRONG_COLUMNS: dict[str, Callable[[Path], list[str]]] = {
    "import-run": lambda d: [
        "import-run", _write(d, "run.csv", "foo,bar\ncase-000,x\n"),
        "--format", "csv", "--study", "study", "--no-autograde",
    ],
    "grade (key)": lambda d: [
        "grade", "--key", _write(d, "key.csv", "case,answer\ncase-000,x\n"),
        _write(d, "resp.csv", "responder,kind,group,case_id,status,diagnosis,likert\n"
               "R01,human,,case-000,answered,x,2\n"),
    ],
    "grade (responses)": lambda d: [
        "grade", "--key", _write(d, "key.csv", "case_id,diagnosis,synonyms\ncase-000,x,\n"),
        _write(d, "resp.csv", "who,what\nR01,x\n"),
    ],
    "score": lambda d: ["score", _write(d, "resp.csv", "who,what,when\nR01,x,now\n")],
    "import": lambda d: [
        "import", _write(d, "manifest.csv", "id,path,answer\ncase-1,a.png,x\n"), "--study", "s2",
    ],
}  # fmt: skip


@pytest.mark.parametrize("what", list(WRONG_COLUMNS))
def test_csv_with_wrong_columns_is_refused_cleanly(
    session: Session,
    exam: Reader,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    what: str,
) -> None:
    argv = WRONG_COLUMNS[what](tmp_path)
    if argv[0] not in _commands():
        pytest.skip(f"readerstudy {argv[0]} is not available yet")
    before = _count(session)
    try:
        code = cli(argv)
    except SystemExit as exc:  # argparse-level refusals exit 2
        code = int(exc.code or 0)
    err = capsys.readouterr().err
    assert code != 0, f"{what}: a file with wrong columns was accepted"
    assert "Traceback" not in err and err.strip(), f"{what}: no clean message: {err!r}"
    assert _count(session) == before  # all or nothing: nothing stored
