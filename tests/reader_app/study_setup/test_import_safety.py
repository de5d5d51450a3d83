"""Issue 32 items 6, 9, 15 on both databases, through the services the New study page calls.

Item 9: a server-folder PNG swapped, between the burned-in review and Import, for one
that reads "DOE JOHN MRN 123" was stored as "cleared by c1"; now the import refuses
it. Item 6: PHI in file and folder names ("DOE_JOHN_MRN123/...") was kept in
import_jobs and the audit log; now no table, audit export or log line holds it.
Item 15: 200,000 missing files are 200,000 problems, listed as the first 200 with
the full list as a formula-safe CSV.
"""

from __future__ import annotations

import csv
import io
import logging
from pathlib import Path

import pytest
from PIL import Image, ImageDraw
from sqlalchemy import select
from sqlmodel import Session, SQLModel
from sqlmodel import select as sm_select

from reader_app.analysis.exports import audit_frame
from reader_app.core.settings import Settings, load_settings
from reader_app.ingest.errors import FIRST_PROBLEMS
from reader_app.ingest.report import problems_csv
from reader_app.models import Case, ImportJob, Reader, Study
from reader_app.study.casebank import get_study
from reader_app.study_setup import jobs
from reader_app.study_setup.jobs import NEW
from reader_app.study_setup.service import (
    Source,
    begin_import,
    check,
    choose_folder,
    receive_zip,
)
from reader_app.study_setup.validation import CLEAR
from tests.factories import make_reader, make_study
from tests.reader_app.ingest.helpers import case, write_manifest
from tests.support.study_zips import zip_folder

PHI = "DOE_JOHN_MRN123"


@pytest.fixture
def coordinator(session: Session, settings: Settings) -> Reader:
    home = make_study(session, settings.asset_dir, n_cases=2, slug="home")
    reader = make_reader(session, home, code="c1", role="coordinator").reader
    session.commit()
    return reader


def _png(path: Path, text: str = "") -> Path:
    image = Image.new("L", (96, 64), 40)
    if text:
        ImageDraw.Draw(image).text((4, 24), text, fill=255)
    path.parent.mkdir(parents=True, exist_ok=True)
    image.save(path)
    return path


def _phi_study(folder: Path) -> Path:
    """A one-case study whose folder and file carry a patient's name and MRN."""
    _png(folder / "images" / f"{PHI}_chest.png")
    (folder / "study.toml").write_text('title = "Chest"\n', encoding="utf-8")
    return write_manifest(folder, [case("scan1", f"images/{PHI}_chest.png")])


def _every_text(session: Session) -> str:
    """Every value of every table but binary ones, one string."""
    found: list[str] = []
    for table in SQLModel.metadata.sorted_tables:
        for row in session.execute(select(table)).all():
            found += [str(v) for v in row if v is not None and not isinstance(v, bytes)]
    return "\n".join(found)


def _import(
    session: Session, settings: Settings, actor: Reader, source: Source, slug: str
) -> ImportJob:
    result = check(
        session=session, settings=settings, actor=actor, source=source, mode=NEW, slug=slug
    )
    assert result.problems == [] and [f.case_id for f in result.flagged] == ["scan1"]
    job_id = begin_import(
        session=session,
        settings=settings,
        actor=actor,
        source=source,
        result=result,
        mode=NEW,
        slug=slug,
        decisions={"scan1": CLEAR},
    )
    jobs.wait(job_id, timeout=300)
    session.expire_all()
    job = session.get(ImportJob, job_id)
    assert job is not None
    return job


def test_a_png_swapped_after_the_review_is_refused(
    session: Session,
    settings: Settings,
    coordinator: Reader,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    root = tmp_path / "imports"
    _phi_study(root / PHI)
    monkeypatch.setenv("READERSTUDY_IMPORT_ROOT", str(root))
    rooted = load_settings()
    source = choose_folder(session=session, settings=rooted, actor=coordinator, raw=PHI)
    result = check(
        session=session, settings=rooted, actor=coordinator, source=source, mode=NEW, slug="s9"
    )
    assert [f.case_id for f in result.flagged] == ["scan1"] and len(result.flagged[0].digests) == 1
    # between the review and Import, the file is replaced by one with a name burned in
    _png(root / PHI / "images" / f"{PHI}_chest.png", "DOE JOHN MRN 123")
    job_id = begin_import(
        session=session,
        settings=rooted,
        actor=coordinator,
        source=source,
        result=result,
        mode=NEW,
        slug="s9",
        decisions={"scan1": CLEAR},
    )
    jobs.wait(job_id, timeout=300)
    session.expire_all()
    job = session.get(ImportJob, job_id)
    assert job is not None and (job.state, job.message) == ("failed", "1 problem(s)")
    shown = jobs.screen(job_id)
    assert shown is not None and shown.report.startswith(
        "case scan1: its images changed after the burned-in review"
    )
    assert get_study(session=session, slug="s9") is None
    assert session.exec(sm_select(Case).where(Case.reviewed_by == "c1")).all() == []

    # reviewed again, the new pixels are what is cleared, and their sha256 is audited
    again = check(
        session=session, settings=rooted, actor=coordinator, source=source, mode=NEW, slug="s9"
    )
    job = _import(session, rooted, coordinator, source, "s9")
    assert job.state == "done", job.message
    study = get_study(session=session, slug="s9")
    assert study is not None
    cleared = audit_frame(session=session, study_id=study.id or 0)
    detail = cleared.loc[cleared["action"] == "case.burned_in_cleared", "detail"].iloc[0]
    assert again.flagged[0].digests[0] in str(detail)


def test_no_file_or_folder_name_is_kept_after_an_import(
    session: Session,
    settings: Settings,
    coordinator: Reader,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    folder = tmp_path / "src" / PHI
    _phi_study(folder)
    upload = zip_folder(folder, tmp_path / f"{PHI}.zip", top=PHI)
    with upload.open("rb") as fh:
        source = receive_zip(
            session=session, settings=settings, actor=coordinator, upload=fh, name=upload.name
        )
    job = _import(session, settings, coordinator, source, "s6")
    assert job.state == "done", job.message
    shown = jobs.screen(job.id or 0)
    assert shown is not None and shown.source == f"{PHI}.zip"  # the screen has it, in memory
    assert PHI in shown.report

    root = tmp_path / "imports"
    _phi_study(root / PHI)
    monkeypatch.setenv("READERSTUDY_IMPORT_ROOT", str(root))
    rooted = load_settings()
    source = choose_folder(session=session, settings=rooted, actor=coordinator, raw=PHI)
    assert _import(session, rooted, coordinator, source, "s6b").state == "done"

    stored = _every_text(session)
    assert "scan1" in stored and "a ZIP upload" in stored  # the search does reach the rows
    assert PHI not in stored and "MRN123" not in stored
    for slug in ("s6", "s6b", "home"):
        study = session.exec(sm_select(Study).where(Study.slug == slug)).one()
        exported = audit_frame(session=session, study_id=study.id or 0).to_csv()
        assert PHI not in exported
    assert PHI not in caplog.text


def test_a_manifest_of_200000_missing_files_lists_200_and_offers_every_one(
    session: Session, settings: Settings, coordinator: Reader, tmp_path: Path
) -> None:
    folder = tmp_path / "big"
    rows = [case(f"c{i:06d}", f"images/{PHI}_{i}.dcm") for i in range(200_000)]
    manifest = write_manifest(folder, rows)
    (folder / "study.toml").write_text('title = "Big"\n', encoding="utf-8")
    result = check(
        session=session,
        settings=settings,
        actor=coordinator,
        source=Source(manifest=manifest, name="big"),
        mode=NEW,
        slug="big",
    )
    assert len(result.problems) == 200_000
    shown = result.problems[:FIRST_PROBLEMS]
    assert len(shown) == 200 and shown[0].line == 2
    table = list(csv.reader(io.StringIO(problems_csv(result.problems))))
    assert table[0] == ["file", "line", "field", "case_id", "problem"]
    assert len(table) == 200_001
    assert table[1][1] == "2" and f"images/{PHI}_0.dcm" in table[1][4]
