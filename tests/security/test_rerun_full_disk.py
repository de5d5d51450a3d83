"""Issue 39, not re-run in round 3: a full disk during a study upload.

A child process whose file-size limit (RLIMIT_FSIZE, 2 MB; SIGXFSZ ignored so a
write past it fails with EFBIG as a full disk fails with ENOSPC) takes a study
ZIP through ``receive_zip``, the New study page's path: once while the upload is
copied to the server (a 5 MB ZIP), once while it is unpacked (a 20 KB ZIP of an
8 MB file). Each must be our clear refusal (a ``SetupError``, which the page
shows as "Refused: ..."), audited as ``disk-full``, with no workspace left and
no table but the audit log changed. Both databases.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from sqlalchemy import select as sa_select
from sqlmodel import Session, SQLModel, col, select

from reader_app.core.settings import PROJECT_ROOT, Settings
from reader_app.models import AuditEvent
from tests.factories import make_reader, make_study

LIMIT = 2_000_000
CHILD = f"""
import resource, signal, sys
from sqlmodel import Session, select
from reader_app.core.db import make_engine
from reader_app.core.settings import load_settings
from reader_app.models import Reader
from reader_app.study_setup.service import SetupError, receive_zip
settings = load_settings()
with Session(make_engine(settings.database_url, pooled=False)) as session:
    actor = session.exec(select(Reader).where(Reader.code == "C01")).one()
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, ({LIMIT}, {LIMIT}))
    try:
        with open(sys.argv[1], "rb") as fh:
            receive_zip(session=session, settings=settings, actor=actor, upload=fh, name="x.zip")
        print("accepted")
    except SetupError as exc:
        print("SetupError", exc)
"""


def big_upload(path: Path) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr("manifest.csv", "case_id,kind,files,diagnosis\n")
        zf.writestr("images/a.png", os.urandom(5_000_000))
    return path


def big_inside(path: Path) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("manifest.csv", "case_id,kind,files,diagnosis\n")
        zf.writestr("images/a.png", b"\0" * 8_000_000)
    return path


def _rows(session: Session) -> dict[str, list[tuple[object, ...]]]:
    session.expire_all()
    return {
        table.name: [tuple(row) for row in session.execute(sa_select(table)).all()]
        for table in SQLModel.metadata.sorted_tables
        if table.name != "audit_events"
    }


@pytest.mark.parametrize("build", [big_upload, big_inside], ids=["copying", "unpacking"])
def test_a_full_disk_during_an_upload_is_a_clear_refusal_and_leaves_nothing(
    session: Session, settings: Settings, tmp_path: Path, build: object
) -> None:
    home = make_study(session, settings.asset_dir, n_cases=1, slug="home")
    make_reader(session, home, code="C01", role="coordinator")
    session.commit()
    before = _rows(session)
    archive = build(tmp_path / "study.zip")  # type: ignore[operator]
    env = {
        **os.environ,
        "READERSTUDY_DATABASE_URL": settings.database_url,
        "READERSTUDY_DATA_DIR": str(settings.data_dir),
    }
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(archive)],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == (
        "SetupError the server's disk is full: the ZIP could not be saved and unpacked "
        "there; nothing was kept (ask the operator to free space, then upload it again)"
    ), done.stderr[-3000:]
    assert list((settings.data_dir / ".setup").glob("import-*")) == []
    assert _rows(session) == before  # the study and every other table unchanged
    events = session.exec(select(AuditEvent).order_by(col(AuditEvent.id))).all()
    refused = json.loads(events[-1].detail_json)
    assert events[-1].action == "setup.refused" and refused["rule"] == "disk-full"
