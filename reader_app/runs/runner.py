"""Run a model on a study's cases: the same PNGs a reader saw, answers into ``responses``.

Worker threads (``concurrency`` of them) only read images and talk HTTP; the
calling thread writes, one commit per case, so an interrupted run keeps every
answer it received. Work is idempotent per (run, case): a rerun under the same
name asks only for the cases that have no row yet (the unique constraint on
(model_run_id, case_id) makes a double write harmless even across processes).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from reader_app.audit import record_event
from reader_app.exam.next_case import ImageView, case_view
from reader_app.ingest.assets import load_asset
from reader_app.models import Case, ModelRun, Response, ResponseRevision, Study, utcnow
from reader_app.runs.client import ChatClient, EndpointError, FatalEndpointError
from reader_app.runs.prompt import CaseImageBytes, Prompt, case_messages
from reader_app.runs.record import (
    RunSpec,
    answer_fields,
    finish_run,
    is_technical_failure,
    open_run,
)
from scoring.io.model_output import parse_model_output


class RunAborted(RuntimeError):
    """The endpoint refused in a way no retry can fix; answers so far are kept."""


@dataclass(frozen=True)
class CaseJob:
    case_id: int
    source_id: str
    history: str | None
    images: tuple[ImageView, ...]


@dataclass
class RunProgress:
    done: int
    total: int
    counts: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class RunSummary:
    run_id: int
    name: str
    resumed: bool
    asked: int
    totals: dict[str, Any]


ProgressFn = Callable[[RunProgress], None]


def model_images(
    images: tuple[ImageView, ...], kind: str, strip_mode: str
) -> tuple[ImageView, ...]:
    """What the model is shown. ``slices`` is exactly what a reader's viewer offers
    (every non-montage image in stored order; a montage only when it is all there
    is); ``montage`` sends a strip's montage instead. Spot cases: the same either way."""
    if kind == "strip" and strip_mode == "montage":
        return tuple(i for i in images if i.role == "montage")
    return tuple(i for i in images if i.role != "montage") or images


def case_jobs(*, session: Session, study: Study, strip_mode: str) -> list[CaseJob]:
    """Every scored case with the images to send; fails if a strip lacks a montage."""
    cases = session.exec(
        select(Case)
        .where(Case.study_id == study.id, col(Case.practice).is_(False))
        .order_by(col(Case.position), col(Case.id))
    ).all()
    jobs, lacking = [], []
    for case in cases:
        assert case.id is not None
        view = case_view(session=session, case=case, slot=0, total=len(cases))
        images = model_images(view.images, case.kind, strip_mode)
        if not images:
            lacking.append(case.source_id)
        jobs.append(CaseJob(case.id, case.source_id, case.history, images))
    if lacking:
        what = "a montage image" if strip_mode == "montage" else "images"
        raise ValueError(f"case(s) without {what}: {', '.join(lacking[:20])}")
    return jobs


@dataclass(frozen=True)
class Outcome:
    job: CaseJob
    shown_at: datetime
    answered_at: datetime
    raw_reply: str | None
    meta: dict[str, Any]
    parsed: dict[str, Any]


def ask(
    job: CaseJob, *, client: ChatClient, spec: RunSpec, prompt: Prompt, asset_dir: Path
) -> Outcome:
    """One case: load the stored PNG bytes, ask, parse. Runs in a worker thread."""
    images = [
        CaseImageBytes(load_asset(asset_dir, i.sha256), i.label, i.window) for i in job.images
    ]
    body = spec.request_body(case_messages(prompt, history=job.history, images=images))
    shown_at = utcnow()
    try:
        result = client.complete(body)
    except FatalEndpointError:
        raise
    except EndpointError as exc:
        meta: dict[str, Any] = {"error": str(exc), "http_status": exc.status}
        fields = {"status": "failure", "diagnosis": None, "likert": None, "idk": False}
        return Outcome(job, shown_at, utcnow(), exc.body or None, meta, fields)
    parsed = parse_model_output(result.text)
    meta = {
        **result.usage,
        "latency_s": result.latency_s,
        "attempts": result.attempts,
        "finish_reason": result.finish_reason,
    }
    if parsed.status == "invalid" and parsed.likert is not None:
        meta["likert_reply"] = parsed.likert
    return Outcome(job, shown_at, utcnow(), result.text, meta, answer_fields(parsed))


def store_outcome(*, session: Session, run: ModelRun, outcome: Outcome) -> bool:
    """Insert the case's row, or replace a technical failure; False if already answered."""
    existing = session.exec(
        select(Response).where(
            Response.model_run_id == run.id, Response.case_id == outcome.job.case_id
        )
    ).first()
    if existing is not None and not is_technical_failure(existing):
        return False
    if existing is not None:  # keep the failed attempt, as a revised human answer is kept
        assert existing.id is not None
        session.add(
            ResponseRevision(
                response_id=existing.id,
                status=existing.status,
                submitted_at=existing.submitted_at,
            )
        )
    row = existing or Response(
        study_id=run.study_id, case_id=outcome.job.case_id, model_run_id=run.id, status="failure"
    )
    for key, value in outcome.parsed.items():
        setattr(row, key, value)
    row.shown_at = outcome.shown_at
    row.submitted_at = outcome.answered_at
    row.image_sha256 = ",".join(i.sha256 for i in outcome.job.images)
    row.raw_reply = outcome.raw_reply
    row.meta_json = json.dumps(outcome.meta, sort_keys=True, default=str)
    row.revision = (row.revision + 1) if existing is not None else 0
    session.add(row)
    try:
        session.commit()
    except IntegrityError:  # another process stored this case first
        session.rollback()
        return False
    return True


def pending_jobs(
    *, session: Session, run: ModelRun, jobs: list[CaseJob], retry_failures: bool
) -> list[CaseJob]:
    rows = session.exec(select(Response).where(Response.model_run_id == run.id)).all()
    done = {r.case_id for r in rows if not (retry_failures and is_technical_failure(r))}
    return [j for j in jobs if j.case_id not in done]


def run_model(
    *,
    session: Session,
    study: Study,
    spec: RunSpec,
    prompt: Prompt,
    client: ChatClient,
    asset_dir: Path,
    host: str,
    concurrency: int = 4,
    retry_failures: bool = False,
    progress: ProgressFn | None = None,
    actor: str = "cli",
) -> RunSummary:
    """Ask the model every case the run has not answered yet; commit as answers arrive."""
    if concurrency < 1:
        raise ValueError("concurrency must be at least 1")
    jobs = case_jobs(session=session, study=study, strip_mode=spec.strip_mode)
    try:
        run, resumed = open_run(session=session, study=study, spec=spec, prompt=prompt, host=host)
        session.commit()
    except IntegrityError:  # another process created the same run a moment ago: join it
        session.rollback()
        run, resumed = open_run(session=session, study=study, spec=spec, prompt=prompt, host=host)
    todo = pending_jobs(session=session, run=run, jobs=jobs, retry_failures=retry_failures)
    state = RunProgress(done=len(jobs) - len(todo), total=len(jobs))
    if progress:
        progress(state)
    pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="run")
    futures: set[Future[Outcome]] = {
        pool.submit(ask, job, client=client, spec=spec, prompt=prompt, asset_dir=asset_dir)
        for job in todo
    }
    try:
        while futures:
            finished, futures = wait(futures, return_when=FIRST_COMPLETED)
            for fut in finished:
                outcome = fut.result()
                store_outcome(session=session, run=run, outcome=outcome)
                state.done += 1
                key = "error" if "error" in outcome.meta else str(outcome.parsed["status"])
                state.counts[key] = state.counts.get(key, 0) + 1
                if progress:
                    progress(state)
    except FatalEndpointError as exc:
        raise RunAborted(f"{exc}; the endpoint said: {exc.body[:300]}") from exc
    finally:
        # on an error, queued cases are dropped; requests in flight finish unrecorded
        pool.shutdown(wait=False, cancel_futures=True)
    totals = finish_run(session=session, run=run)
    record_event(
        session=session,
        actor=actor,
        action="model_run",
        study_id=study.id,
        run=run.name,
        model=run.model,
        asked=len(todo),
        resumed=resumed,
    )
    session.commit()
    assert run.id is not None
    return RunSummary(run.id, run.name, resumed, len(todo), totals)
