"""Run a model on a study's cases: the same PNGs a reader saw, answers into ``responses``.

Worker threads (``concurrency`` of them) only read images and talk HTTP; the
calling thread writes, one commit per case, so an interrupted run keeps every
answer it received. Work is idempotent per (run, case): a rerun under the same
name asks only for the cases that have no row yet, and a lease per (run, case)
(``runs.lease``) keeps concurrent runner processes from asking the same case
twice: a case leased by another live process is left to it, and taken over
only once that lease has expired (its holder died).

Every case asked ends with exactly one row: a reply the parser cannot read is
a ``failure``, an endpoint error or an image that fails its integrity check
is a technical failure (``meta.error``), and no reply can stall the run for
longer than the client's whole-request deadline (times its attempts).
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from reader_app.core.audit import record_event
from reader_app.core.errors import ReaderStudyError
from reader_app.core.text_rules.answers import clean_model_text
from reader_app.exam.next_case import ImageView, case_view
from reader_app.llm import ChatClient, ChatReply, EndpointError, FatalEndpointError
from reader_app.llm.prompts import Prompt, load_prompt
from reader_app.models import Case, ModelRun, Response, ResponseRevision, Study, utcnow
from reader_app.responses import Responder, fill_response
from reader_app.runs import lease
from reader_app.runs.case_job import CaseJob, Outcome
from reader_app.runs.grounded import stored_location
from reader_app.runs.prompt import case_messages
from reader_app.runs.record import (
    DEFAULT_REPORT_PROMPT,
    RunSpec,
    answer_fields,
    finish_run,
    is_technical_failure,
    open_run,
)
from reader_app.runs.report_ask import ask_report_case
from reader_app.runs.slice_scaling import PER_SLICE, model_image
from reader_app.runs.usage import Price
from reader_app.study.assets import AssetIntegrityError
from reader_app.study.case_reports import report_case_ids
from reader_app.study.config import study_settings
from scoring.io import MAX_REPLY_CHARS, parse_location_output, parse_model_output

log = logging.getLogger(__name__)


class RunAborted(ReaderStudyError, RuntimeError):
    """The endpoint refused in a way no retry can fix; answers so far are kept."""


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
    left_to_others: int = 0  # cases another live runner process answered meanwhile
    no_images: bool = False  # a text-only run


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
    reports = report_case_ids(session=session, study_id=study.id or 0)
    for case in cases:
        assert case.id is not None
        view = case_view(session=session, case=case, slot=0, total=len(cases))
        images = model_images(view.images, case.kind, strip_mode)
        if not images:
            lacking.append(case.source_id)
        mode = "report" if case.id in reports else "diagnosis"
        jobs.append(
            CaseJob(case.id, case.source_id, case.history, images, mode, case.kind, case.region)
        )
    if lacking:
        what = "a montage image" if strip_mode == "montage" else "images"
        raise ValueError(f"case(s) without {what}: {', '.join(lacking[:20])}")
    return jobs


def failure_outcome(job: CaseJob, shown_at: datetime, error: str, **meta: Any) -> Outcome:
    fields = {"status": "failure", "diagnosis": None, "likert": None, "idk": False}
    raw = meta.pop("raw", None)
    return Outcome(job, shown_at, utcnow(), raw, {"error": error, **meta}, fields)


def case_request(
    job: CaseJob, *, spec: RunSpec, prompt: Prompt, asset_dir: Path
) -> list[dict[str, Any]]:
    """The messages of one diagnosis case's request, the stored PNGs read and verified:
    what a live run sends and what a batch file (runs/batch.py) holds. Raises
    AssetIntegrityError, OSError or ValueError on an image that fails its check."""
    images = [model_image(asset_dir, i, kind=job.kind, spec=spec) for i in job.images]
    return case_messages(prompt, history=job.history, images=images, send_images=not spec.no_images)


def ask(
    job: CaseJob, *, client: ChatClient, spec: RunSpec, prompt: Prompt, asset_dir: Path
) -> Outcome:
    """One case: load (and verify) the stored PNG bytes, ask, parse. Runs in a worker thread.

    A text-only run (``spec.no_images``) reads no image and sends the same
    text without the image parts. Never raises except FatalEndpointError:
    whatever goes wrong becomes the case's failure row.
    """
    shown_at = utcnow()
    try:
        messages = case_request(job, spec=spec, prompt=prompt, asset_dir=asset_dir)
    except (AssetIntegrityError, OSError, ValueError) as exc:
        return failure_outcome(job, shown_at, f"image refused, not sent: {exc}")
    shown_at = utcnow()
    try:
        result = client.complete(messages, model=spec.model, params=spec.sampling(prompt))
    except FatalEndpointError:
        raise
    except EndpointError as exc:
        return failure_outcome(
            job, shown_at, str(exc), http_status=exc.status, raw=exc.body or None
        )
    except Exception as exc:  # a client bug must not cost the run: one failure row
        log.exception("unexpected error asking case %s", job.source_id)
        return failure_outcome(job, shown_at, f"unexpected {type(exc).__name__}")
    return reply_outcome(job, result, model=spec.model, shown_at=shown_at)


def reply_outcome(
    job: CaseJob,
    result: ChatReply,
    *,
    model: str,
    shown_at: datetime,
    answered_at: datetime | None = None,
) -> Outcome:
    """One reply -> the case's outcome: parsed answer, location, tokens, cost, latency,
    reasoning text. The live runner and the batch importer (runs/batch.py) both use it."""
    parsed = parse_model_output(result.text)
    location, location_meta = stored_location(
        parse_location_output(result.text, n_images=len(job.images)),
        kind=job.kind,
        images=job.images,
    )
    meta: dict[str, Any] = {
        **result.usage,
        **({"cost": result.cost} if result.cost is not None else {}),
        "latency_s": result.latency_s,
        "attempts": result.attempts,
        "finish_reason": result.finish_reason,
        **location_meta,
    }
    if len(result.text) > MAX_REPLY_CHARS:
        meta["parse_note"] = f"reply over {MAX_REPLY_CHARS} characters: not parsed"
    if result.model and result.model != model:
        meta["reply_model"] = result.model
        meta["warning"] = f"the reply names model {result.model!r}, not {model!r}"
        log.warning("case %s: reply names model %r, asked %r", job.source_id, result.model, model)
    if parsed.status == "invalid" and parsed.likert is not None:
        meta["likert_reply"] = parsed.likert
    fields = answer_fields(parsed)
    if fields.get("diagnosis"):
        fields["diagnosis"], removed = clean_model_text(fields["diagnosis"])
        if removed:
            meta["control_chars_removed"] = removed
        if not fields["diagnosis"].strip():
            fields = {"status": "failure", "diagnosis": None, "likert": None, "idk": False}
    return Outcome(
        job,
        shown_at,
        answered_at or utcnow(),
        result.text,
        meta,
        fields,
        location,
        reasoning=result.reasoning,
    )


def store_outcome(
    *, session: Session, run: ModelRun, outcome: Outcome, holder: str | None = None
) -> bool:
    """Insert the case's row, or replace a technical failure; False if already answered.

    The replaced failure is kept as a revision with its status, time, raw
    reply and error. The case's lease (``holder``) is released in the same commit.
    """
    assert run.id is not None
    existing = session.exec(
        select(Response).where(
            Response.model_run_id == run.id, Response.case_id == outcome.job.case_id
        )
    ).first()
    if holder is not None:
        lease.release(session=session, run_id=run.id, holder=holder, case_ids=[outcome.job.case_id])
    if existing is not None and not is_technical_failure(existing):
        session.commit()
        return False
    if existing is not None:  # keep the failed attempt, as a revised human answer is kept
        assert existing.id is not None
        session.add(
            ResponseRevision(
                response_id=existing.id,
                status=existing.status,
                submitted_at=existing.submitted_at,
                raw_reply=existing.raw_reply,
                meta_json=existing.meta_json,
                location_json=existing.location_json,
            )
        )
    parsed = outcome.parsed
    row = fill_response(
        existing,
        study_id=run.study_id,
        case_id=outcome.job.case_id,
        responder=Responder(model_run_id=run.id),
        status=parsed["status"],
        diagnosis=parsed.get("diagnosis"),
        likert=parsed.get("likert"),
        findings=parsed.get("findings"),
        impression=parsed.get("impression"),
        location_json=outcome.location_json,
        # what the model was shown: nothing, on a text-only run
        image_sha256=() if run.no_images else [i.sha256 for i in outcome.job.images],
        shown_at=outcome.shown_at,
        submitted_at=outcome.answered_at,
        meta=outcome.meta,
        raw_reply=outcome.raw_reply,
        # control characters (NUL, which PostgreSQL refuses, among them) leave the reasoning
        reasoning_text=clean_model_text(outcome.reasoning)[0] if outcome.reasoning else None,
    )
    session.add(row)
    try:
        session.commit()
    except IntegrityError:  # another process stored this case first
        session.rollback()
        if holder is not None:
            lease.release(
                session=session, run_id=run.id, holder=holder, case_ids=[outcome.job.case_id]
            )
            session.commit()
        return False
    return True


def pending_jobs(
    *, session: Session, run: ModelRun, jobs: list[CaseJob], retry_failures: bool
) -> list[CaseJob]:
    rows = session.exec(select(Response).where(Response.model_run_id == run.id)).all()
    done = {r.case_id for r in rows if not (retry_failures and is_technical_failure(r))}
    return [j for j in jobs if j.case_id not in done]


def _still_pending(*, session: Session, run: ModelRun, job: CaseJob, retry_failures: bool) -> bool:
    """Whether the case still needs asking (one indexed lookup of its row)."""
    row = session.exec(
        select(Response).where(Response.model_run_id == run.id, Response.case_id == job.case_id)
    ).first()
    return row is None or (retry_failures and is_technical_failure(row))


def _take(
    *,
    session: Session,
    run: ModelRun,
    job: CaseJob,
    holder: str,
    lease_s: float,
    retry_failures: bool,
) -> Literal["mine", "held", "answered"]:
    """Lease the case, then look for its row: ``mine`` to ask, ``held`` by another live
    runner, or ``answered`` already. The row is read after the claim because a holder
    stores the answer and drops its lease in one commit: read before, a case answered
    and released in between would look unasked and free, and be asked twice."""
    assert run.id is not None
    if not lease.claim(
        session=session, run_id=run.id, case_id=job.case_id, holder=holder, lease_s=lease_s
    ):
        return "held"
    if _still_pending(session=session, run=run, job=job, retry_failures=retry_failures):
        return "mine"
    lease.release(session=session, run_id=run.id, holder=holder, case_ids=[job.case_id])
    session.commit()
    return "answered"


def study_spec(study: Study, spec: RunSpec, jobs: list[CaseJob]) -> RunSpec:
    """The spec as the study completes it: its slice scaling and its report prompt
    (study.toml), recorded in the run. A live run and a batch file (runs/batch.py) alike."""
    if spec.slice_scaling is None and study_settings(study).model_slices == PER_SLICE:
        spec = replace(spec, slice_scaling=PER_SLICE)  # the study's choice, recorded in the run
    if any(j.answer == "report" for j in jobs) and spec.report_prompt is None:
        # the study's own report prompt (study.toml), else the region-neutral default
        study_prompt = study_settings(study).report_prompt
        spec = replace(spec, report_prompt=study_prompt or DEFAULT_REPORT_PROMPT)
    return spec


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
    lease_s: float = lease.DEFAULT_LEASE_S,
    jobs: list[CaseJob] | None = None,
    price: Price | None = None,
) -> RunSummary:
    """Ask the model every case the run has not answered yet; commit as answers arrive.

    Each case is leased before it is asked (``lease_s``, renewed every third
    of it while the request runs). A case another live runner holds is left
    to it; this call waits until that case has its row, or until the lease
    expires (its holder died) and then asks it itself. ``jobs`` replaces the
    study's scored cases (the grounding audit: a subset, with other images).
    ``price`` prices the replies whose provider reports no cost (runs/usage.py).
    """
    if concurrency < 1:
        raise ValueError("concurrency must be at least 1")
    if lease_s <= 0:
        raise ValueError("lease_s must be positive")
    if jobs is None:
        jobs = case_jobs(session=session, study=study, strip_mode=spec.strip_mode)
    spec = study_spec(study, spec, jobs)
    report_prompt = load_prompt(spec.report_prompt) if spec.report_prompt else None
    try:
        run, resumed = open_run(session=session, study=study, spec=spec, prompt=prompt, host=host)
        session.commit()
    except IntegrityError:  # another process created the same run a moment ago: join it
        session.rollback()
        run, resumed = open_run(session=session, study=study, spec=spec, prompt=prompt, host=host)
    assert run.id is not None
    run_id = run.id
    todo = pending_jobs(session=session, run=run, jobs=jobs, retry_failures=retry_failures)
    state = RunProgress(done=len(jobs) - len(todo), total=len(jobs))
    if progress:
        progress(state)
    holder = lease.new_holder()
    queue: deque[CaseJob] = deque(todo)
    waiting: list[CaseJob] = []  # leased by another runner
    in_flight: dict[Future[Outcome], CaseJob] = {}
    asked = left_to_others = 0
    renew_every = lease_s / 3
    last_renew = time.monotonic()
    pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="run")

    def count_done(key: str) -> None:
        state.done += 1
        state.counts[key] = state.counts.get(key, 0) + 1
        if progress:
            progress(state)

    def fill() -> None:
        nonlocal asked, left_to_others
        while queue and len(in_flight) < concurrency:
            job = queue.popleft()
            taken = _take(
                session=session,
                run=run,
                job=job,
                holder=holder,
                lease_s=lease_s,
                retry_failures=retry_failures,
            )
            if taken == "answered":
                left_to_others += 1  # answered by another process meanwhile
                count_done("elsewhere")
                continue
            if taken == "held":
                waiting.append(job)
                continue
            in_flight[
                pool.submit(ask, job, client=client, spec=spec, prompt=prompt, asset_dir=asset_dir)
                if job.answer != "report" or report_prompt is None
                else pool.submit(
                    ask_report_case,
                    job,
                    client=client,
                    spec=spec,
                    prompt=report_prompt,
                    asset_dir=asset_dir,
                )
            ] = job
            asked += 1

    try:
        fill()
        while in_flight or waiting:
            if not in_flight:  # only cases leased elsewhere are left: look again shortly
                time.sleep(min(1.0, renew_every))
                queue.extend(waiting)
                waiting.clear()
                fill()
                continue
            finished, _ = wait(in_flight, timeout=renew_every, return_when=FIRST_COMPLETED)
            for fut in finished:
                in_flight.pop(fut)
                outcome = fut.result()
                store_outcome(session=session, run=run, outcome=outcome, holder=holder)
                count_done("error" if "error" in outcome.meta else str(outcome.parsed["status"]))
            if time.monotonic() - last_renew >= renew_every:
                lease.renew(session=session, run_id=run_id, holder=holder, lease_s=lease_s)
                last_renew = time.monotonic()
            queue.extend(waiting)
            waiting.clear()
            fill()
    except FatalEndpointError as exc:
        raise RunAborted(f"{exc}; the endpoint said: {exc.body[:300]}") from exc
    finally:
        # on an error, queued cases are dropped; requests in flight finish unrecorded
        pool.shutdown(wait=False, cancel_futures=True)
        session.rollback()
        lease.release(session=session, run_id=run_id, holder=holder)
        session.commit()
    totals = finish_run(session=session, run=run, price=price)
    record_event(
        session=session,
        actor=actor,
        action="model_run",
        study_id=study.id,
        run=run.name,
        model=run.model,
        asked=asked,
        resumed=resumed,
    )
    session.commit()
    return RunSummary(run_id, run.name, resumed, asked, totals, left_to_others, run.no_images)
