"""Issue 32 item 12: kill -9 of the server mid-import; the job is marked interrupted and
its folders swept.

A real child process uploads a long study ZIP and starts the import job the page
starts; once the row shows a case done, the child is killed with SIGKILL. The row
still says running and the staging folder and workspace are left; its heartbeat
stopped. ``jobs.sweep`` (run once per server process at start-up) leaves them while
the heartbeat is fresh; STALE_AFTER later it marks the job interrupted and removes
its workspace, and the staging folder once it has been idle for STAGING_IDLE.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from sqlmodel import Session, select

from reader_app.core.settings import PROJECT_ROOT, Settings
from reader_app.models import ImportJob
from reader_app.study_setup import jobs
from tests.factories import make_reader, make_study
from tests.support.study_zips import long_zip

CHILD = """
import sys
from pathlib import Path
from sqlmodel import Session, select
from reader_app.core.db import make_engine
from reader_app.models import Reader
from reader_app.core.settings import load_settings
from reader_app.study_setup import jobs
from reader_app.study_setup.jobs import NEW
from reader_app.study_setup.service import begin_import, check, receive_zip

settings = load_settings()
engine = make_engine(settings.database_url, pooled=False)
with Session(engine, expire_on_commit=False) as s:
    actor = s.exec(select(Reader).where(Reader.code == "C01")).one()
    with open(sys.argv[1], "rb") as fh:
        source = receive_zip(session=s, settings=settings, actor=actor, upload=fh, name="x.zip")
    result = check(session=s, settings=settings, actor=actor, source=source, mode=NEW, slug="k")
    job = begin_import(session=s, settings=settings, actor=actor, source=source, result=result,
                       mode=NEW, slug="k", decisions={})
    print(job, flush=True)
    jobs.wait(job)
"""


def _folders(settings: Settings) -> list[str]:
    data = settings.data_dir
    staging = [p.name[:7] for p in data.glob(".*-*") if p.is_dir()]
    return sorted(staging + [f".setup/{p.name[:7]}" for p in (data / ".setup").glob("import-*")])


def test_kill9_mid_import_is_marked_interrupted_and_swept(
    session: Session, settings: Settings, tmp_path: Path
) -> None:
    home = make_study(session, settings.asset_dir, n_cases=1, slug="home")
    make_reader(session, home, code="C01", role="coordinator")
    session.commit()
    upload = long_zip(tmp_path, strips=40)
    env = dict(
        os.environ,
        READERSTUDY_DATABASE_URL=settings.database_url,
        READERSTUDY_DATA_DIR=str(settings.data_dir),
    )
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(upload)],
        cwd=PROJECT_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 240
        job = None
        while time.monotonic() < deadline:
            session.expire_all()
            job = session.exec(select(ImportJob)).first()
            if job is not None and job.cases_done >= 2:
                break
            assert child.poll() is None, child.stdout.read() if child.stdout else ""
            time.sleep(0.2)
        assert job is not None and job.cases_done >= 2, "the import never got going"
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait(30)
    assert child.returncode == -signal.SIGKILL
    session.expire_all()
    job = session.get(ImportJob, job.id)
    assert job is not None and job.state == "running" and job.cases_done < 40
    assert _folders(settings) == [".setup/import-", ".stage-"]

    assert jobs.sweep(settings) == 0  # its heartbeat is fresh: it might be another replica's
    session.expire_all()
    assert session.get(ImportJob, job.id).state == "running"  # type: ignore[union-attr]

    later = time.time() + jobs.STALE_AFTER.total_seconds() + 1
    assert jobs.sweep(settings, now=later) == 0  # its workspace goes with the job
    session.expire_all()
    job = session.get(ImportJob, job.id)
    assert job is not None and (job.state, job.message) == ("interrupted", "interrupted")
    assert job.finished_at is not None
    assert _folders(settings) == [".stage-"]  # staging: idle for an hour first (a CLI's?)
    assert jobs.sweep(settings, now=later + jobs.STAGING_IDLE.total_seconds()) == 1
    assert _folders(settings) == []
