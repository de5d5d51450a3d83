"""A model run through a provider's batch interface (OpenAI's batch JSONL), offline-safe.

``write_batch`` (``run-model --batch-out FILE``) opens the run as a live run would
(the same record, so the same settings) and writes one line per case the run
has not answered yet: ``{"custom_id", "method": "POST", "url":
"/v1/chat/completions", "body"}``, the body built by the live runner's own
request builder (``runner.case_request`` and ``llm.client.chat_body``): the
same prompt, history and images byte for byte. Nothing is sent anywhere.

``import_batch_output`` (``import-run --format openai-batch FILE``) reads the
provider's output lines (``{"custom_id", "response": {"status_code", "body"},
"error"}``) into the run. Every ``custom_id`` is checked before anything is
stored (``rs-<run id>-<case id>`` of a runner run of this study and one of its
scored cases, once per file); a bad line refuses the whole file. Each reply
goes through the live runner's parser (``runner.reply_outcome``) and store
(``runner.store_outcome``), so a case already answered is left as it is and a
technical failure (an error line) is replaced by a later answer: importing the
same file twice adds nothing, and a second batch of the failed cases fills
them in.

Report-mode cases (several requests per case) are left out of the file: the same
``run-model`` command without ``--batch-out`` asks them live, into the same run.
A batch reply has no latency of its own; its ``meta`` says ``batch: true``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlmodel import Session, col, select

from reader_app.core.audit import record_event
from reader_app.llm.client import chat_body
from reader_app.llm.prompts import Prompt
from reader_app.llm.reply import ReplyShapeError, parse_completion
from reader_app.models import ModelRun, Response, Study, utcnow
from reader_app.runs.case_job import CaseJob, Outcome
from reader_app.runs.import_writer import RunImportError
from reader_app.runs.record import RunSpec, finish_run, open_run
from reader_app.runs.runner import (
    case_jobs,
    case_request,
    failure_outcome,
    pending_jobs,
    reply_outcome,
    store_outcome,
    study_spec,
)
from reader_app.runs.usage import Price

BATCH_FORMAT = "openai-batch"  # import-run --format
BATCH_URL = "/v1/chat/completions"
CUSTOM_ID = re.compile(r"rs-([0-9]{1,12})-([0-9]{1,12})")
MAX_LINE_ERRORS = 20


@dataclass(frozen=True)
class BatchOut:
    run: str
    written: int
    already_answered: int
    report_cases: int = 0  # left out: report cases are asked live (several requests each)


@dataclass
class BatchImport:
    runs: list[str] = field(default_factory=list)
    added: int = 0
    failed: int = 0  # error lines stored as technical failures
    skipped: int = 0  # cases the run had answered already


def custom_id(run_id: int, case_id: int) -> str:
    return f"rs-{run_id}-{case_id}"


def write_batch(
    *,
    session: Session,
    study: Study,
    spec: RunSpec,
    prompt: Prompt,
    asset_dir: Path,
    host: str,
    out: Path,
    retry_failures: bool = False,
) -> BatchOut:
    """Open (or resume) the run and write its unanswered cases as batch-input JSONL.
    Commits the run record; the file is written whole or not at all."""
    every = case_jobs(session=session, study=study, strip_mode=spec.strip_mode)
    spec = study_spec(study, spec, every)
    jobs = [j for j in every if j.answer != "report"]
    run, _ = open_run(session=session, study=study, spec=spec, prompt=prompt, host=host)
    session.commit()
    assert run.id is not None
    todo = pending_jobs(session=session, run=run, jobs=jobs, retry_failures=retry_failures)
    lines = []
    for job in todo:
        messages = case_request(job, spec=spec, prompt=prompt, asset_dir=asset_dir)
        line = {
            "custom_id": custom_id(run.id, job.case_id),
            "method": "POST",
            "url": BATCH_URL,
            "body": chat_body(messages, model=spec.model, params=spec.sampling()),
        }
        lines.append(json.dumps(line, ensure_ascii=False))
    partial = out.with_name(out.name + ".part")
    partial.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    partial.replace(out)
    return BatchOut(run.name, len(lines), len(jobs) - len(todo), len(every) - len(jobs))


@dataclass(frozen=True)
class _Line:
    number: int
    run_id: int
    case_id: int
    record: dict[str, Any]


def _read_lines(text: str) -> tuple[list[_Line], list[str]]:
    lines, errors, seen = [], [], set()
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except json.JSONDecodeError as exc:
            errors.append(f"line {number}: not JSON ({exc.msg})")
            continue
        if not isinstance(record, dict):
            errors.append(f"line {number}: not a JSON object")
            continue
        cid = record.get("custom_id")
        match = CUSTOM_ID.fullmatch(cid) if isinstance(cid, str) else None
        if match is None:
            errors.append(f"line {number}: custom_id {str(cid)[:80]!r} is not one we wrote")
            continue
        if cid in seen:
            errors.append(f"line {number}: custom_id {cid} appears twice")
            continue
        seen.add(cid)
        lines.append(_Line(number, int(match[1]), int(match[2]), record))
    return lines, errors


def _outcome(line: _Line, job: CaseJob, run: ModelRun) -> Outcome:
    now = utcnow()
    response = line.record.get("response")
    error = line.record.get("error")
    status = response.get("status_code") if isinstance(response, dict) else None
    body = response.get("body") if isinstance(response, dict) else None
    if error or status != 200 or not isinstance(body, dict):
        message = error.get("message") if isinstance(error, dict) else None
        what = message or (f"HTTP {status}" if status is not None else "no response")
        return failure_outcome(
            job, now, f"batch: {str(what)[:300]}", http_status=status, batch=True
        )
    try:
        reply = parse_completion(json.dumps(body).encode("utf-8"), latency_s=0.0, attempts=1)
    except ReplyShapeError as exc:
        return failure_outcome(job, now, f"batch: {exc}", http_status=200, batch=True)
    outcome = reply_outcome(job, reply, model=run.model, shown_at=now, answered_at=now)
    outcome.meta.pop("latency_s", None)  # a batch reply has no latency of its own
    outcome.meta["batch"] = True
    return outcome


def has_row(*, session: Session, run: ModelRun, job: CaseJob) -> bool:
    return (
        session.exec(
            select(Response.id).where(
                Response.model_run_id == run.id, Response.case_id == job.case_id
            )
        ).first()
        is not None
    )


def import_batch_output(
    *,
    session: Session,
    study: Study,
    source: str | Path | bytes,
    actor: str = "cli",
    price: Price | None = None,
) -> BatchImport:
    """Read a provider's batch output into its runs (see the module); RunImportError
    naming the bad lines, with nothing stored, when any custom_id does not check."""
    data = source if isinstance(source, bytes) else Path(source).read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise RunImportError(f"the batch output is not UTF-8 text: {exc}") from None
    lines, errors = _read_lines(text)
    run_ids = sorted({line.run_id for line in lines})
    runs = {
        r.id: r
        for r in session.exec(
            select(ModelRun).where(ModelRun.study_id == study.id, col(ModelRun.id).in_(run_ids))
        ).all()
    }
    jobs: dict[int, dict[int, CaseJob]] = {}
    for run_id, run in runs.items():
        if run.source != "runner":
            errors.append(f"run {run.name!r} was imported, not opened by run-model --batch-out")
        assert run_id is not None
        jobs[run_id] = {
            j.case_id: j
            for j in case_jobs(
                session=session,
                study=study,
                strip_mode=json.loads(run.params_json or "{}").get("strip_mode", "slices"),
            )
        }
    for line in lines:
        if line.run_id not in runs:
            errors.append(f"line {line.number}: no run {line.run_id} in study {study.slug}")
        elif line.case_id not in jobs[line.run_id]:
            errors.append(f"line {line.number}: case {line.case_id} is not a scored case here")
    if errors:
        more = (
            f" (and {len(errors) - MAX_LINE_ERRORS} more)" if len(errors) > MAX_LINE_ERRORS else ""
        )
        raise RunImportError(
            "batch output refused, nothing stored: " + "; ".join(errors[:MAX_LINE_ERRORS]) + more
        )
    if not lines:
        raise RunImportError("the batch output has no lines")
    summary = BatchImport(runs=[runs[i].name for i in run_ids])
    for line in lines:
        run = runs[line.run_id]
        job = jobs[line.run_id][line.case_id]
        outcome = _outcome(line, job, run)
        failed = "error" in outcome.meta
        # an error line never replaces a row (so the same file twice changes nothing);
        # an answer replaces a technical failure (store_outcome keeps it as a revision)
        if failed and has_row(session=session, run=run, job=job):
            summary.skipped += 1
        elif store_outcome(session=session, run=run, outcome=outcome):
            if failed:
                summary.failed += 1
            else:
                summary.added += 1
        else:
            summary.skipped += 1
    for run_id in run_ids:
        finish_run(session=session, run=runs[run_id], price=price)
        record_event(
            session=session,
            actor=actor,
            action="model_run_batch_import",
            study_id=study.id,
            run=runs[run_id].name,
            added=summary.added,
        )
    session.commit()
    return summary
