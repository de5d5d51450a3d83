"""The import job: runs in a server-side thread, not in the page's script run.

``start_import`` writes an ``ImportJob`` row and starts a thread; the thread
stages the cases (progress written to the row after each case), commits, and
records the end (done with the report, or failed with every problem). The
page only reads the row, so a reload, another tab or another coordinator sees
the same progress. The workspace (the extracted ZIP) is removed at the end,
whatever happened.

No file, folder or path name is stored (they may name a patient): the row says
"a ZIP upload" or "a server folder", its message holds case ids and counts, and
the report and the problems, which name files, stay in this process's memory
(``screen``) for the page to show while the import is recent. A heartbeat
thread writes ``updated_at`` every ``HEARTBEAT`` and touches the job's folders;
a running job whose heartbeat is older than ``STALE_AFTER`` died with its server
and is marked ``interrupted`` (``mark_interrupted``, run by the page and by the
start-up ``sweep``), its folders removed.
"""

from __future__ import annotations

import logging
import os
import shutil
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlmodel import Session, col, select

from reader_app.core.db import make_engine
from reader_app.core.settings import Settings
from reader_app.ingest.errors import ImportFailed, first_lines
from reader_app.models import ImportJob, utcnow
from reader_app.study_setup.workspace import remove_workspace, setup_root, sweep_stale

if TYPE_CHECKING:
    from reader_app.ingest.staging import ImportProgress

log = logging.getLogger(__name__)
NEW, ADD = "new", "add"  # an import plan's mode: a new study, or cases added to one
UPLOAD_SOURCE, FOLDER_SOURCE = "a ZIP upload", "a server folder"  # what the row says

_threads: dict[int, threading.Thread] = {}
_screens: dict[int, Screen] = {}  # job id -> what only the screen shows (names, paths)
KEEP_SCREENS = 50  # the newest jobs whose names and reports the page can still show
HEARTBEAT = 5.0  # seconds between heartbeats of a running job
STALE_AFTER = timedelta(minutes=2)  # no heartbeat for this long: the server died mid-import
STAGING_PREFIXES = (".stage-", ".scan-", ".validate-", ".import-")  # under the data dir
# a staging folder untouched this long is abandoned: a job's heartbeat touches its own,
# and a CLI import (no heartbeat) writes a PNG into it per case
STAGING_IDLE = timedelta(hours=1)


@dataclass(frozen=True)
class Screen:
    """A job's names for the page: the source's name and the report (never stored)."""

    source: str
    report: str = ""


@dataclass(frozen=True)
class ImportPlan:
    mode: str  # new | add
    slug: str
    manifest: Path
    source_name: str
    source: dict[str, Any]  # what the audit records about the upload or folder
    decisions: Mapping[str, str]
    config: dict[str, Any] | None = None  # adding: the study's own settings
    reviewed: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # pixels shown
    workspace: Path | None = None  # removed at the end (None: a server folder, kept)


def start_import(settings: Settings, *, actor: str, actor_study_id: int, plan: ImportPlan) -> int:
    """Record the job and start it; return its id at once."""
    engine = make_engine(settings.database_url, pooled=False)
    try:
        with Session(engine) as session:
            job = ImportJob(
                actor=actor,
                actor_study_id=actor_study_id,
                target_slug=plan.slug,
                mode=plan.mode,
                source_name=UPLOAD_SOURCE if plan.workspace is not None else FOLDER_SOURCE,
                message="starting",
                workspace=plan.workspace.name if plan.workspace is not None else None,
            )
            session.add(job)
            session.commit()
            assert job.id is not None
            job_id = job.id
    finally:
        engine.dispose()
    _screens[job_id] = Screen(source=plan.source_name)
    for old in sorted(_screens)[:-KEEP_SCREENS]:  # the memory they hold stays bounded
        _screens.pop(old, None)
    thread = threading.Thread(
        target=_run, args=(settings, job_id, actor, plan), name=f"import-{job_id}", daemon=True
    )
    _threads[job_id] = thread
    thread.start()
    return job_id


def wait(job_id: int, timeout: float | None = None) -> None:
    """For tests and the CLI: block until the job's thread ends (if it runs here)."""
    thread = _threads.get(job_id)
    if thread is not None:
        thread.join(timeout)


def _run(settings: Settings, job_id: int, actor: str, plan: ImportPlan) -> None:
    # imported here, not at the top: ``readerstudy serve`` imports this module for its
    # start-up ``sweep`` alone, and the importer's libraries (pydicom, nibabel, pandas)
    # cost every served app's start about a second of CPU (docs/performance.md)
    from reader_app.study_setup.validation import run_import, save

    engine = make_engine(settings.database_url, pooled=False)

    def update(**values: Any) -> None:
        with Session(engine) as session:
            job = session.get(ImportJob, job_id)
            assert job is not None
            for key, value in values.items():
                setattr(job, key, value)
            job.updated_at = utcnow()
            session.add(job)
            session.commit()

    def progress(p: ImportProgress) -> None:
        cases = p.total - 1  # the importer's last step is the transaction
        update(
            cases_total=cases,
            cases_done=min(p.done, cases),
            images_done=p.images,
            strips_done=p.strips,
            message=p.message,
        )

    folders = [plan.workspace] if plan.workspace is not None else []
    stop = threading.Event()
    beat = threading.Thread(
        target=_heartbeat, args=(update, folders, stop), name=f"import-{job_id}-beat", daemon=True
    )
    beat.start()
    staging: Path | None = None
    try:
        config, staged, report, staging = run_import(
            plan.manifest,
            settings=settings,
            slug=plan.slug,
            decisions=plan.decisions,
            reviewer=actor,
            progress=progress,
            config=plan.config,
            reviewed=plan.reviewed,
            staging_folders=folders,
        )
        study_id = save(
            engine,
            settings,
            adding=plan.mode == ADD,
            slug=plan.slug,
            config=config,
            staged=staged,
            staging=staging,
            report=report,
            actor=actor,
            decisions=plan.decisions,
            source=plan.source,
            reviewed=plan.reviewed,
        )
        _screens[job_id] = Screen(plan.source_name, report.text())
        update(state="done", message="done", study_id=study_id, finished_at=utcnow())
    except ImportFailed as exc:
        text = "\n".join(first_lines(exc.errors))
        _screens[job_id] = Screen(plan.source_name, text + "\n\n" + exc.report_text)
        update(state="failed", message=f"{len(exc.errors)} problem(s)", finished_at=utcnow())
    except Exception as exc:  # the row must say the job ended; its text may name files
        log.error("import job %d failed: unexpected %s", job_id, type(exc).__name__)
        update(state="failed", message=f"unexpected {type(exc).__name__}", finished_at=utcnow())
    finally:
        stop.set()
        beat.join()
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
        remove_workspace(settings, plan.workspace)
        engine.dispose()
        _threads.pop(job_id, None)


def _heartbeat(update: Any, folders: list[Path], stop: threading.Event) -> None:
    """While the job runs: its row's ``updated_at`` and its folders' times, every HEARTBEAT."""
    while not stop.wait(HEARTBEAT):
        try:
            update()
            for folder in folders:
                os.utime(folder)
        except Exception as exc:  # a missed beat is not the job's failure
            log.warning("import heartbeat missed: %s", type(exc).__name__)


def screen(job_id: int) -> Screen | None:
    """What the page shows of a job beyond its row (names and paths), if this process ran it."""
    return _screens.get(job_id)


def mark_interrupted(settings: Settings, session: Session, *, now: datetime | None = None) -> int:
    """Mark every running job with no heartbeat for STALE_AFTER ``interrupted``, its workspace
    removed; return how many."""
    cutoff = (now or utcnow()) - STALE_AFTER
    stale = session.exec(
        select(ImportJob).where(ImportJob.state == "running", col(ImportJob.updated_at) < cutoff)
    ).all()
    for job in stale:
        job.state, job.message, job.finished_at = "interrupted", "interrupted", now or utcnow()
        session.add(job)
        if job.workspace:
            remove_workspace(settings, setup_root(settings) / job.workspace)
    session.commit()
    return len(stale)


def sweep(settings: Settings, *, now: float | None = None) -> int:
    """At start-up: jobs left running marked interrupted (their workspaces removed), staging
    folders untouched for STAGING_IDLE and set-up workspaces idle for a day removed; return
    the folders removed."""
    at = now if now is not None else time.time()
    engine = make_engine(settings.database_url, pooled=False)
    try:
        with Session(engine) as session:
            interrupted = mark_interrupted(
                settings, session, now=datetime.fromtimestamp(at, tz=UTC)
            )
    finally:
        engine.dispose()
    workspaces = sweep_stale(settings, now=at)
    staging = 0
    cutoff = at - STAGING_IDLE.total_seconds()
    for prefix in STAGING_PREFIXES:
        for folder in settings.data_dir.glob(f"{prefix}*"):
            try:
                if folder.is_dir() and folder.stat().st_mtime < cutoff:
                    shutil.rmtree(folder, ignore_errors=True)
                    staging += 1
            except FileNotFoundError:
                continue
    if interrupted or workspaces or staging:  # said, so an operator knows what a kill left
        log.info(
            "cleaned up after a stopped import: %d job(s) marked interrupted, "
            "%d set-up workspace(s) and %d staging folder(s) removed",
            interrupted,
            workspaces,
            staging,
        )
    return workspaces + staging


def latest_job(session: Session, *, actor_study_id: int) -> ImportJob | None:
    """The newest set-up import started from this study's coordinator pages."""
    return session.exec(
        select(ImportJob)
        .where(ImportJob.actor_study_id == actor_study_id)
        .order_by(col(ImportJob.id).desc())
    ).first()


def get_job(session: Session, job_id: int) -> ImportJob | None:
    job = session.get(ImportJob, job_id)
    if job is not None:
        session.refresh(job)
    return job


def stalled(job: ImportJob, now: datetime) -> bool:
    """A running job whose heartbeat is older than STALE_AFTER (its server died)."""
    return job.state == "running" and now - job.updated_at > STALE_AFTER
