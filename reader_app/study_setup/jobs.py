"""The import job: runs in a server-side thread, not in the page's script run.

``start_import`` writes an ``ImportJob`` row and starts a thread; the thread
stages the cases (progress written to the row after each case), commits, and
records the end (done with the report, or failed with every problem). The
page only reads the row, so a reload, another tab or another coordinator sees
the same progress. The workspace (the extracted ZIP) is removed at the end,
whatever happened.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from sqlmodel import Session, col, select

from reader_app.db import make_engine
from reader_app.ingest.errors import ImportFailed
from reader_app.ingest.staging import ImportProgress
from reader_app.models import ImportJob, utcnow
from reader_app.settings import Settings
from reader_app.study_setup.validation import run_import, save
from reader_app.study_setup.workspace import remove_workspace

NEW, ADD = "new", "add"  # an import plan's mode: a new study, or cases added to one

_threads: dict[int, threading.Thread] = {}
STALL_AFTER = timedelta(minutes=30)  # no progress written for this long: the server likely died


@dataclass(frozen=True)
class ImportPlan:
    mode: str  # new | add
    slug: str
    manifest: Path
    source_name: str
    source: dict[str, Any]  # what the audit records about the upload or folder
    decisions: Mapping[str, str]
    config: dict[str, Any] | None = None  # adding: the study's own settings
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
                source_name=plan.source_name[:255],
                message="starting",
            )
            session.add(job)
            session.commit()
            assert job.id is not None
            job_id = job.id
    finally:
        engine.dispose()
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
        )
        update(
            state="done",
            message="done",
            study_id=study_id,
            report_text=report.text(),
            finished_at=utcnow(),
        )
    except ImportFailed as exc:
        text = "\n".join(exc.errors)
        update(state="failed", message=text, report_text=exc.report_text, finished_at=utcnow())
    except Exception as exc:  # the row must say the job ended
        update(
            state="failed", message=f"unexpected {type(exc).__name__}: {exc}", finished_at=utcnow()
        )
    finally:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
        remove_workspace(settings, plan.workspace)
        engine.dispose()
        _threads.pop(job_id, None)


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
    """A running job that has written no progress for STALL_AFTER (its server was restarted?)."""
    return job.state == "running" and now - job.updated_at > STALL_AFTER
