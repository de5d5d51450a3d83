"""``cli.main`` catches every user-facing error once: one line on stderr, exit code 2,
the traceback only with ``--debug``; anything else still crashes loudly."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reader_app.cli import USER_ERROR, main
from reader_app.core.errors import ReaderStudyError

ROOT = Path(__file__).resolve().parents[3]


def _readerstudy(*argv: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The real command, in its own process (so stderr is exactly what a person sees)."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("READERSTUDY_")}
    return subprocess.run(
        [sys.executable, "-m", "reader_app.cli", *argv],
        cwd=ROOT,
        env=clean | env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _env(tmp_path: Path) -> dict[str, str]:
    return {"READERSTUDY_DATA_DIR": str(tmp_path / "data"), "READERSTUDY_LOG_LEVEL": "WARNING"}


def test_a_refused_backup_is_one_line_and_exit_code_2(tmp_path: Path) -> None:
    taken = tmp_path / "taken.sqlite3"
    taken.write_bytes(b"already here")
    proc = _readerstudy("backup", str(taken), env=_env(tmp_path))
    assert proc.returncode == USER_ERROR == 2
    assert proc.stderr.splitlines() == [
        f"readerstudy: {taken} already exists; choose another file name"
    ]
    assert taken.read_bytes() == b"already here"  # the refusal changed nothing


def test_debug_adds_the_traceback_and_keeps_the_message_last(tmp_path: Path) -> None:
    taken = tmp_path / "taken.sqlite3"
    taken.write_bytes(b"already here")
    proc = _readerstudy("--debug", "backup", str(taken), env=_env(tmp_path))
    assert proc.returncode == 2
    lines = proc.stderr.splitlines()
    assert lines[0] == "Traceback (most recent call last):"
    assert any("BackupError" in line for line in lines)
    assert lines[-1] == f"readerstudy: {taken} already exists; choose another file name"


def test_a_bad_log_level_is_a_user_error_naming_the_variable(tmp_path: Path) -> None:
    proc = _readerstudy("backup", env=_env(tmp_path) | {"READERSTUDY_LOG_LEVEL": "LOUD"})
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        "readerstudy: READERSTUDY_LOG_LEVEL: must be one of DEBUG, INFO, WARNING, ERROR, "
        "CRITICAL, not 'LOUD'"
    ]


def test_main_returns_2_for_a_refused_restore(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("READERSTUDY_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("READERSTUDY_DATABASE_URL", raising=False)
    not_a_backup = tmp_path / "notes.txt"
    not_a_backup.write_text("hello")
    assert main(["restore", str(not_a_backup)]) == 2
    err = capsys.readouterr().err
    assert f"readerstudy: {not_a_backup} is not a readerstudy backup" in err
    assert "Traceback" not in err


def test_a_programming_error_is_not_swallowed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only ReaderStudyError is a user error: a bug still raises (and a test sees it)."""
    import reader_app.commands.backup as backup_command

    def broken(*_: object) -> None:
        raise KeyError("a bug")

    monkeypatch.setenv("READERSTUDY_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setattr(backup_command, "backup_database", broken)
    with pytest.raises(KeyError):
        main(["backup", str(tmp_path / "b.sqlite3")])


def _exception_classes(folder: Path) -> dict[str, list[str]]:
    """class name -> base names, for every class in the package that looks like an error."""
    found: dict[str, list[str]] = {}
    for path in folder.rglob("*.py"):
        if "migrations" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                bases = [ast.unparse(b) for b in node.bases]
                if any(b.endswith(("Error", "Exception")) or b in {"ImportFailed"} for b in bases):
                    found[f"{path.relative_to(ROOT)}:{node.name}"] = bases
    return found


# Errors that never reach a person: a retry signal, a parse failure handled inside judging.
INTERNAL = {
    "reader_app/grading/diagnosis_judge.py:JudgeParseError",  # a judge reply, caught by the caller
    "reader_app/grading/rubric_judge.py:RubricParseError",  # likewise, for rubric judges
    "reader_app/llm/reply.py:ReplyShapeError",  # becomes an EndpointError inside the client
    "reader_app/llm/decode.py:DecodeRefused",  # likewise
    "reader_app/llm/judge_text.py:StrictReplyError",  # a judge reply, caught by the caller
    "reader_app/web/upload_gate.py:_TooLarge",  # becomes the gate's 413 reply, never raised out
    "reader_app/web/upload_spool.py:BadUpload",  # becomes the spool's 400 reply, never raised out
    "reader_app/web/exam_door.py:Refused",  # becomes the exam door's JSON reply, never raised out
    # stands in for an unexpected error in the scoring worker that would not unpickle: an
    # internal failure, as the original is when the scoring runs in the server
    "reader_app/analysis/scoring_worker.py:WorkerError",
}


def test_every_user_facing_error_class_derives_from_the_one_base() -> None:
    import importlib

    classes = _exception_classes(ROOT / "reader_app")
    assert len(classes) >= 20  # the walk found them (a test that cannot fail is a defect)
    missing = []
    for where, _bases in classes.items():
        if where in INTERNAL:
            continue
        path, name = where.split(":")
        module = importlib.import_module(path[:-3].replace("/", "."))
        cls = getattr(module, name)
        if not issubclass(cls, ReaderStudyError):
            missing.append(where)
    assert missing == []
