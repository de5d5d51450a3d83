"""Logging: configured once, the level from READERSTUDY_LOG_LEVEL, and never a secret.

Real flows (a refused sign-in with a real token, a backup and a restore through
the CLI, a migration of a new database, an import of a DICOM whose header holds
a patient's name) run at DEBUG; the captured log lines (caplog and the stderr
handler) must say what happened, and must not hold the token, a reader's
answer, an email address or any PHI from the header.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlmodel import Session

from reader_app.cli import main as cli
from reader_app.core.auth import AuthError, authenticate, readers_for_email, revoke_invite
from reader_app.core.db import make_engine, migrate
from reader_app.core.logs import configure_logging, log_level
from reader_app.core.settings import Settings, SettingsError
from reader_app.exam.next_case import next_case
from reader_app.exam.order import ensure_order
from reader_app.exam.submit import submit_answer, validate_answer
from tests.factories import make_reader, make_study
from tests.reader_app.ingest.helpers import case, copy_sample, write_manifest

ANSWER = "Pneumothorax, right apex; patient Jane Roe born 1961-04-02"
EMAIL = "jane.roe@hospital.example"
HEADER_PHI = ["CompressedSamples^CT1", "JFK IMAGING CENTER"]  # CT_small.dcm's header


@pytest.fixture
def debug_logs(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> Iterator[pytest.LogCaptureFixture]:
    monkeypatch.setenv("READERSTUDY_LOG_LEVEL", "DEBUG")
    configure_logging()
    caplog.set_level(logging.DEBUG, logger="reader_app")
    yield caplog
    logging.getLogger("reader_app").setLevel(logging.INFO)


def _assert_clean(text: str, *secrets: str) -> None:
    for secret in (*secrets, ANSWER, "Jane Roe", EMAIL, *HEADER_PHI):
        assert secret not in text, f"{secret!r} reached a log line"


def test_the_level_comes_from_the_variable() -> None:
    assert log_level({}) == logging.INFO
    assert log_level({"READERSTUDY_LOG_LEVEL": "debug"}) == logging.DEBUG
    assert log_level({"READERSTUDY_LOG_LEVEL": " warning "}) == logging.WARNING
    with pytest.raises(SettingsError, match="READERSTUDY_LOG_LEVEL"):
        log_level({"READERSTUDY_LOG_LEVEL": "verbose"})


def test_configuring_twice_keeps_one_handler(capsys: pytest.CaptureFixture[str]) -> None:
    logger = configure_logging({"READERSTUDY_LOG_LEVEL": "INFO"})
    configure_logging({"READERSTUDY_LOG_LEVEL": "WARNING"})
    assert logger.level == logging.WARNING
    logging.getLogger("reader_app.somewhere").warning("one line")
    err = capsys.readouterr().err
    assert err.count("one line") == 1 and "WARNING reader_app.somewhere: one line" in err
    logging.getLogger("reader_app.somewhere").info("below the level")
    assert "below the level" not in capsys.readouterr().err
    configure_logging({})


def test_refused_sign_ins_are_logged_without_the_token_or_email(
    session: Session,
    settings: Settings,
    debug_logs: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=2)
    invite = make_reader(session, study, email=EMAIL)
    session.commit()
    forged = invite.token[:-4] + "AAAA"
    with pytest.raises(AuthError):
        authenticate(session=session, token=forged)
    revoke_invite(session=session, reader=invite.reader, actor="test")
    session.commit()
    with pytest.raises(AuthError):
        authenticate(session=session, token=invite.token)
    with pytest.raises(AuthError):
        readers_for_email(session=session, email="NOBODY@hospital.example")
    text = debug_logs.text + capsys.readouterr().err
    assert "sign-in refused: unknown or rotated link" in text
    assert f"sign-in refused: revoked link (reader id {invite.reader.id})" in text
    assert "sign-in refused: no reader is registered with that email address" in text
    _assert_clean(text, invite.token, forged, "nobody@hospital.example")


def test_backup_restore_and_migration_are_logged_without_answers(
    sqlite_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    debug_logs: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("READERSTUDY_DATABASE_URL", sqlite_url)
    monkeypatch.setenv("READERSTUDY_DATA_DIR", str(tmp_path / "data"))
    engine = make_engine(sqlite_url, pooled=False)
    with Session(engine, expire_on_commit=False) as session:
        study = make_study(session, tmp_path / "data" / "assets", n_cases=2)
        invite = make_reader(session, study, email=EMAIL, ready=True)
        ensure_order(session=session, reader=invite.reader)
        shown = next_case(session=session, reader=invite.reader)
        assert shown is not None
        submit_answer(
            session=session,
            reader=invite.reader,
            case_public_id=shown.public_id,
            answer=validate_answer(ANSWER, 3, False),
            shown_at=None,
            image_sha256=shown.image_sha256,
        )
    engine.dispose()

    dest = tmp_path / "nightly.sqlite3"
    assert cli(["backup", str(dest)]) == 0
    assert cli(["restore", str(dest), "--force"]) == 0
    fresh = f"sqlite:///{tmp_path / 'new.db'}"
    migrate(fresh)
    migrate(fresh)  # already current: no second line

    text = debug_logs.text + capsys.readouterr().err
    assert f"backup of the sqlite database to {dest} started" in text
    assert f"backup written: {dest}" in text and "'responses': 1" in text
    assert f"restore of {dest} finished" in text
    migrated = [r.getMessage() for r in debug_logs.records if "migrated" in r.getMessage()]
    assert len(migrated) == 1 and migrated[0].startswith(f"database {fresh} migrated: empty -> ")
    _assert_clean(text, invite.token)


def test_an_import_of_a_dicom_logs_no_header_phi(
    settings: Settings,
    tmp_path: Path,
    debug_logs: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    folder = tmp_path / "phi-study"
    copy_sample("CT_small.dcm", folder / "a.dcm")
    manifest = write_manifest(folder, [case("k1", "a.dcm", windows="bone")])
    assert cli(["import", str(manifest), "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert "imported study 'phi-study'" in out
    _assert_clean(debug_logs.text + err)
