"""Set-up services on both databases: refusals audited and cleaned up, review decisions,
the import job to its end, adding cases to an open study, and the import root."""

from __future__ import annotations

import io
import json
import os
import re
import zipfile
from pathlib import Path

import pytest
from sqlmodel import Session, col, select

from reader_app.core.auth import AuthError
from reader_app.core.settings import Settings, load_settings
from reader_app.models import AnswerKey, AuditEvent, Case, ImportJob, Reader, Study
from reader_app.study.casebank import get_study
from reader_app.study_setup import jobs
from reader_app.study_setup.jobs import ADD, NEW
from reader_app.study_setup.service import (
    SetupError,
    Source,
    begin_import,
    check,
    choose_folder,
    coordinator_link_for,
    receive_zip,
)
from reader_app.study_setup.validation import CLEAR, EXCLUDE
from reader_app.study_setup.workspace import file_sha256
from tests.factories import make_reader, make_study
from tests.support.study_zips import demo_zip, zip_folder

MB = 1_000_000


@pytest.fixture
def coordinator(session: Session, settings: Settings) -> Reader:
    home = make_study(session, settings.asset_dir, n_cases=2, slug="home")
    reader = make_reader(session, home, code="C01", role="coordinator").reader
    session.commit()
    return reader


def _actions(session: Session) -> list[str]:
    session.expire_all()
    return [e.action for e in session.exec(select(AuditEvent).order_by(col(AuditEvent.id)))]


def _workspaces(settings: Settings) -> list[Path]:
    return list((settings.data_dir / ".setup").glob("import-*"))


def _upload(session: Session, settings: Settings, actor: Reader, path: Path) -> Source:
    with path.open("rb") as fh:
        return receive_zip(
            session=session, settings=settings, actor=actor, upload=fh, name=path.name
        )


def test_a_zip_bomb_is_refused_audited_and_cleaned_up(
    session: Session, settings: Settings, coordinator: Reader, tmp_path: Path
) -> None:
    bomb = tmp_path / "bomb.zip"
    with (
        zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as zf,
        zf.open("manifest.csv", "w", force_zip64=True) as fh,
    ):
        for _ in range(600):  # 600 MB of zeros against the default 500 MB limit
            fh.write(bytes(MB))
    with pytest.raises(SetupError, match=re.escape("over the limit of 500.0 MB")):
        _upload(session, settings, coordinator, bomb)
    assert _workspaces(settings) == []
    events = session.exec(select(AuditEvent).order_by(col(AuditEvent.id))).all()
    upload, refused = (json.loads(e.detail_json) for e in events[-2:])
    assert [e.action for e in events[-2:]] == ["setup.upload", "setup.refused"]
    assert upload == {"size": bomb.stat().st_size, "sha256": file_sha256(bomb)}
    assert refused == {"rule": "zip-bomb", "sha256": file_sha256(bomb)}


def test_a_traversal_zip_is_refused_and_nothing_lands_outside(
    session: Session, settings: Settings, coordinator: Reader, tmp_path: Path
) -> None:
    evil = tmp_path / "evil.zip"
    with zipfile.ZipFile(evil, "w") as zf:
        zf.writestr("manifest.csv", "case_id\n")
        zf.writestr("../../../../escaped.txt", "pwned")
    with pytest.raises(SetupError, match="path traversal"):
        _upload(session, settings, coordinator, evil)
    assert _workspaces(settings) == []
    assert not list(settings.data_dir.rglob("escaped.txt"))
    assert not list(tmp_path.rglob("escaped.txt"))


def test_a_reader_cannot_upload(
    session: Session, settings: Settings, coordinator: Reader, tmp_path: Path
) -> None:
    home = session.get(Study, coordinator.study_id)
    assert home is not None
    reader = make_reader(session, home, code="R01").reader
    with pytest.raises(AuthError):
        receive_zip(
            session=session, settings=settings, actor=reader, upload=io.BytesIO(b""), name="x.zip"
        )
    assert "setup.upload" not in _actions(session)


def test_demo_zip_checked_reviewed_and_imported_by_the_job(
    session: Session, settings: Settings, coordinator: Reader, tmp_path: Path
) -> None:
    source = _upload(session, settings, coordinator, demo_zip(tmp_path))
    assert source.manifest.parent.name == "demo"  # found inside the zip's one folder
    result = check(
        session=session, settings=settings, actor=coordinator, source=source, mode=NEW, slug="d1"
    )
    assert result.problems == []
    assert (result.cases, result.strips) == (6, 2)  # the head-CT strip and its report twin
    assert [f.case_id for f in result.flagged] == ["chest-cr", "tibia-cr"]
    assert [f.file for f in result.flagged] == ["images/chest_cr.dcm", "images/tibia_cr.dcm"]
    assert all(f.images and f.images[0].png.startswith(b"\x89PNG") for f in result.flagged)
    assert get_study(session=session, slug="d1") is None  # checking wrote nothing

    with pytest.raises(SetupError, match="decide every flagged image first: tibia-cr"):
        begin_import(
            session=session,
            settings=settings,
            actor=coordinator,
            source=source,
            result=result,
            mode=NEW,
            slug="d1",
            decisions={"chest-cr": CLEAR},
        )
    job_id = begin_import(
        session=session,
        settings=settings,
        actor=coordinator,
        source=source,
        result=result,
        mode=NEW,
        slug="d1",
        decisions={"chest-cr": CLEAR, "tibia-cr": EXCLUDE},
    )
    jobs.wait(job_id, timeout=300)
    session.expire_all()
    job = session.get(ImportJob, job_id)
    assert job is not None
    # 6 cases in the manifest, tibia-cr excluded: 5, two of them strips (one in report mode)
    assert (job.state, job.cases_done, job.cases_total, job.strips_done) == ("done", 5, 5, 2)
    study = get_study(session=session, slug="d1")
    assert study is not None and job.study_id == study.id
    reviewed = dict(
        session.exec(
            select(Case.source_id, Case.reviewed_by).where(Case.study_id == study.id)
        ).all()
    )
    assert reviewed == {
        "practice-thorax-ct": None,
        "chest-cr": "C01",
        "shoulder-mr": None,
        "head-ct-strip": None,
        "head-ct-report": None,
    }
    # the browser import carries the manifest's reference region into the answer key too
    region = session.exec(
        select(AnswerKey.reference_region)
        .join(Case, col(Case.id) == AnswerKey.case_id)
        .where(Case.study_id == study.id, Case.source_id == "head-ct-strip")
    ).one()
    assert region is not None and "7:285,130,100,250" in region.split(";")
    assert _actions(session)[-4:] == [
        "setup.upload",
        "study.import",
        "case.burned_in_cleared",
        "case.excluded",
    ]
    assert _workspaces(settings) == []

    invite = coordinator_link_for(session=session, actor=coordinator, job=job)
    assert (invite.reader.study_id, invite.reader.role, invite.reader.code) == (
        study.id,
        "coordinator",
        "C01",
    )


def test_adding_cases_to_an_open_study_and_refusing_a_locked_one(
    session: Session, settings: Settings, coordinator: Reader, tmp_path: Path
) -> None:
    home = session.get(Study, coordinator.study_id)
    assert home is not None
    source = _upload(session, settings, coordinator, demo_zip(tmp_path))
    result = check(
        session=session, settings=settings, actor=coordinator, source=source, mode=ADD, slug=""
    )
    assert result.problems == []
    decisions = {"chest-cr": CLEAR, "tibia-cr": CLEAR}
    job_id = begin_import(
        session=session,
        settings=settings,
        actor=coordinator,
        source=source,
        result=result,
        mode=ADD,
        slug="",
        decisions=decisions,
    )
    jobs.wait(job_id, timeout=300)
    session.expire_all()
    job = session.get(ImportJob, job_id)
    assert job is not None
    assert job.state == "done", job.message
    assert _actions(session)[-4:] == [
        "setup.upload",
        "study.add_cases",
        "case.burned_in_cleared",
        "case.burned_in_cleared",
    ]
    added = session.exec(select(AuditEvent).where(AuditEvent.action == "study.add_cases")).one()
    detail = json.loads(added.detail_json)
    assert added.study_id == home.id and detail["via"] == "browser" and detail["cases"] == 6
    assert detail["sha256"] == source.audit["sha256"]  # the upload the cases came from
    positions = session.exec(
        select(Case.source_id, Case.position)
        .where(Case.study_id == home.id)
        .order_by(col(Case.position))
    ).all()
    assert [p for _, p in positions] == list(range(8))  # 2 old + 6 new, appended
    assert [s for s, _ in positions][2:] == [
        "practice-thorax-ct",
        "chest-cr",
        "shoulder-mr",
        "tibia-cr",
        "head-ct-strip",
        "head-ct-report",
    ]

    # the same files again: every case id is already there
    again = _upload(session, settings, coordinator, demo_zip(tmp_path / "2"))
    result = check(
        session=session, settings=settings, actor=coordinator, source=again, mode=ADD, slug=""
    )
    assert [p.field for p in result.problems] == ["case_id"] * 6
    assert result.problems[0].text == (
        "manifest.csv line 2, field 'case_id': this study already has that case id"
    )

    home.state = "locked"
    session.add(home)
    session.commit()
    result = check(
        session=session, settings=settings, actor=coordinator, source=again, mode=ADD, slug=""
    )
    assert result.problems[0].message.startswith("this study is locked")


def test_server_folder_inside_the_root_only(
    session: Session,
    settings: Settings,
    coordinator: Reader,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(SetupError, match="server-folder import is off"):
        choose_folder(session=session, settings=settings, actor=coordinator, raw="study")

    root = tmp_path / "imports"
    (root / "study").mkdir(parents=True)
    (root / "study" / "manifest.csv").write_text("case_id\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "manifest.csv").write_text("case_id\n")
    (root / "sneaky").symlink_to(outside)
    monkeypatch.setenv("READERSTUDY_IMPORT_ROOT", str(root))
    rooted = load_settings()
    assert rooted.import_root == root.resolve()

    for raw in ("../outside", str(outside), "sneaky", "/etc"):
        with pytest.raises(SetupError, match="outside the import root"):
            choose_folder(session=session, settings=rooted, actor=coordinator, raw=raw)
    with pytest.raises(SetupError, match="no such folder"):
        choose_folder(session=session, settings=rooted, actor=coordinator, raw="nope")
    source = choose_folder(session=session, settings=rooted, actor=coordinator, raw="study")
    assert source.manifest == (root / "study" / "manifest.csv").resolve()
    assert source.workspace is None  # a server folder is never removed
    assert _actions(session)[-1] == "setup.server_folder"


def test_zip_folder_helper_round_trips(tmp_path: Path) -> None:
    (tmp_path / "src" / "a").mkdir(parents=True)
    (tmp_path / "src" / "a" / "b.txt").write_text("b")
    path = zip_folder(tmp_path / "src", tmp_path / "o.zip", top="t")
    assert zipfile.ZipFile(path).namelist() == ["t/a/b.txt"]
    assert os.path.getsize(path) > 0
