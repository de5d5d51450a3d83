"""Write imported tidy rows into a study: runs, readers, responses, grade memory.

Rows arrive validated (scoring.frame.validate_frame) with, per row, the raw
text and any metadata. Humans become Readers with no sign-in token (role
reader, the row's group as their group); models become ModelRuns with source
``import``. A verdict in the file (RadLE's ``final_score_authoritative``)
becomes a grade-memory Verdict with source ``import``, so the exported tidy
frame reproduces it. Grade memory never changes silently: a file verdict
that contradicts an active verdict stops the import and names the answers.
An answered row with no text (RadLE: a valid Likert, an empty diagnosis,
scored by its verdict) has nothing for grade memory to key: its verdict is
kept on the response itself (``meta_json``'s ``row_verdict``,
reader_app.responses), which the tidy frame reads for it.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from sqlmodel import Session, col, select

from reader_app.core.audit import record_event
from reader_app.core.errors import ReaderStudyError
from reader_app.exam.next_case import ImageView, case_view
from reader_app.grading.memory import record_verdict
from reader_app.grading.normalize import normalize_answer
from reader_app.models import Case, ModelRun, Reader, Response, Study, Verdict
from reader_app.responses import ROW_VERDICT, Responder, fill_response
from reader_app.runs.grounded import stored_location
from reader_app.runs.record import clean_cohort, finish_run
from scoring.io import ABSENT, ParsedLocation

VERDICT_SOURCE = "import"
MAX_LISTED = 20


class RunImportError(ReaderStudyError, ValueError):
    """The file cannot be imported into this study; nothing was written."""


@dataclass(frozen=True)
class ImportRow:
    responder: str
    kind: str  # human | model
    group: str | None
    case_id: str  # the manifest's case id (Case.source_id)
    status: str
    diagnosis: str | None
    likert: int | None
    correct: int | None
    raw_reply: str | None = None
    model: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    image_sha256: str = ""  # what the model was shown, when the file says so
    location: ParsedLocation = ABSENT  # normalized to the images shown (runs.grounded)
    cohort: str | None = None  # the run's cohort (RadLE: access/domain); None keeps it
    # a new imported reader's profile_json (RadLE: {"radle": {"role", "seniority"}})
    reader_profile: dict[str, Any] = field(default_factory=dict)


@dataclass
class ImportSummary:
    format: str
    runs: list[str] = field(default_factory=list)
    readers: list[str] = field(default_factory=list)
    added: int = 0
    updated: int = 0
    skipped: int = 0
    verdicts_added: int = 0
    row_verdicts: int = 0  # verdicts kept on answers with no text (ROW_VERDICT)
    by_status: dict[str, int] = field(default_factory=dict)


def _listing(items: list[str]) -> str:
    more = len(items) - MAX_LISTED
    return ", ".join(items[:MAX_LISTED]) + (f", ... and {more} more" if more > 0 else "")


def study_cases(*, session: Session, study: Study, wanted: set[str]) -> dict[str, Case]:
    cases = session.exec(
        select(Case).where(Case.study_id == study.id, col(Case.source_id).in_(sorted(wanted)))
    ).all()
    found = {c.source_id: c for c in cases}
    missing = sorted(wanted - set(found))
    if missing:
        raise RunImportError(
            f"{len(missing)} case id(s) are not in study {study.slug!r}: {_listing(missing)}. "
            "Import the study's manifest (images and key) first; cases are matched by "
            "their manifest case id."
        )
    return found


def has_row_verdict(row: ImportRow) -> bool:
    """An answered row with a verdict but no text grade memory could key it by."""
    return (
        row.status == "answered" and row.correct is not None and not normalize_answer(row.diagnosis)
    )


def file_verdicts(rows: list[ImportRow], conflicts: str) -> dict[tuple[str, str], int]:
    """One verdict per (case, normalized answer) from the file's answered rows with text
    (an answer with none keeps its own verdict: :func:`has_row_verdict`)."""
    votes: dict[tuple[str, str], Counter[int]] = defaultdict(Counter)
    for row in rows:
        if row.status == "answered" and row.correct is not None and not has_row_verdict(row):
            votes[(row.case_id, normalize_answer(row.diagnosis))][row.correct] += 1
    split = sorted(f"case {c}: {a!r}" for (c, a), v in votes.items() if len(v) > 1)
    if split and conflicts != "majority":
        raise RunImportError(
            f"the file grades the same answer both ways ({_listing(split)}); grade memory keeps "
            "one verdict per (case, answer): fix the file or import with --verdict-conflicts "
            "majority (ties count as incorrect)"
        )
    return {key: int(v[1] > v[0]) for key, v in votes.items()}


def write_verdicts(
    *,
    session: Session,
    study: Study,
    cases: dict[str, Case],
    verdicts: dict[tuple[str, str], int],
    actor: str,
) -> int:
    """Add the file's verdicts to grade memory; refuse any that contradict it."""
    ids = {c.id: c.source_id for c in cases.values()}
    active = {
        (ids[v.case_id], v.normalized_answer): v
        for v in session.exec(
            select(Verdict).where(
                col(Verdict.case_id).in_(list(ids)), col(Verdict.active).is_(True)
            )
        ).all()
    }
    clash = sorted(
        f"case {c}: {a!r} ({active[(c, a)].source} says {active[(c, a)].correct}, file {v})"
        for (c, a), v in verdicts.items()
        if (c, a) in active and active[(c, a)].correct != v
    )
    if clash:
        raise RunImportError(
            f"file verdicts contradict the study's grade memory: {_listing(clash)}. "
            "Change those verdicts in grading first, or fix the file."
        )
    assert study.id is not None
    added = 0
    for (case_sid, answer), correct in sorted(verdicts.items()):
        case_id = cases[case_sid].id
        if (case_sid, answer) in active or not answer or case_id is None:
            continue
        record_verdict(
            session=session,
            study_id=study.id,
            case_id=case_id,
            normalized_answer=answer,
            correct=correct,
            source=VERDICT_SOURCE,
            decided_by=VERDICT_SOURCE,
            note="authoritative verdict from an imported file",
            actor=actor,
        )
        added += 1
    return added


def _reader(session: Session, study: Study, row: ImportRow) -> Reader:
    reader = session.exec(
        select(Reader).where(Reader.study_id == study.id, Reader.code == row.responder)
    ).first()
    if reader is not None and reader.token_hash is not None:
        raise RunImportError(
            f"reader {row.responder!r} is an invited reader of this study; "
            "rename the imported reader in the file"
        )
    if reader is None:
        if len(row.responder) > 64:
            raise RunImportError(f"reader code {row.responder[:70]!r}... is over 64 characters")
        assert study.id is not None
        reader = Reader(
            study_id=study.id,
            code=row.responder,
            role="reader",
            group_name=row.group,
            profile_json=json.dumps(row.reader_profile, sort_keys=True),
        )
        session.add(reader)
        session.flush()
    return reader


def _run(session: Session, study: Study, row: ImportRow, params: dict[str, Any]) -> ModelRun:
    run = session.exec(
        select(ModelRun).where(ModelRun.study_id == study.id, ModelRun.name == row.responder)
    ).first()
    if run is not None and run.source != "import":
        raise RunImportError(f"run {row.responder!r} was made by the runner; rename the import")
    if run is None:
        assert study.id is not None
        run = ModelRun(
            study_id=study.id,
            name=row.responder,
            model=row.model or row.responder,
            group_name=row.group,
            params_json=json.dumps(params, sort_keys=True),
            prompt_version=params.get("prompt_version"),
            source="import",
            cohort=clean_cohort(row.cohort),
        )
        session.add(run)
        session.flush()
    elif clean_cohort(row.cohort) not in (None, run.cohort):
        run.cohort = clean_cohort(row.cohort)
        session.add(run)
        session.flush()
    return run


def shown_images(
    *, session: Session, case: Case, image_sha256: str
) -> tuple[tuple[ImageView, ...], tuple[ImageView, ...]]:
    """(the images a location counts, the case's images in stored order): those the file
    says were shown, in its order, or else the ones a reader's viewer offers (as the
    runner sends them)."""
    view = case_view(session=session, case=case, slot=0, total=0)
    by_sha = {i.sha256: i for i in view.images}
    named = [s for s in image_sha256.split(",") if s]
    if named and all(s in by_sha for s in named):
        return tuple(by_sha[s] for s in named), view.images
    return view.reader_images, view.images


def row_location(
    *, session: Session, case: Case, row: ImportRow
) -> tuple[str | None, dict[str, Any]]:
    """``(location_json, meta entries)`` for the row's location; nothing if it has none."""
    if row.location.kind == "absent":
        return None, {}
    images, stored = shown_images(session=session, case=case, image_sha256=row.image_sha256)
    return stored_location(row.location, kind=case.kind, images=images, stored=stored)


def _response(
    existing: Response | None,
    *,
    session: Session,
    study_id: int,
    case: Case,
    responder: Responder,
    row: ImportRow,
) -> Response:
    """The file row's ``responses`` row: an idk carries no text, only an answered row a
    confidence, and an answered row without text its own verdict; the raw reply NUL-safe
    on PostgreSQL (reader_app.responses)."""
    assert case.id is not None
    keep_text = row.status in ("answered", "invalid") and bool(row.diagnosis)
    location_json, location_meta = row_location(session=session, case=case, row=row)
    own = {ROW_VERDICT: row.correct} if has_row_verdict(row) else {}
    return fill_response(
        existing,
        study_id=study_id,
        case_id=case.id,
        responder=responder,
        status=row.status,
        diagnosis=row.diagnosis if keep_text else None,
        likert=row.likert if row.status == "answered" else None,
        location_json=location_json,
        image_sha256=row.image_sha256.split(",") if row.image_sha256 else (),
        practice=case.practice,
        meta={**row.meta, "imported": True, **location_meta, **own},
        raw_reply=row.raw_reply,
    )


def write_rows(
    *,
    session: Session,
    study: Study,
    rows: list[ImportRow],
    fmt: str,
    params: dict[str, Any],
    replace: bool = False,
    verdict_conflicts: str = "error",
    actor: str = "cli",
) -> ImportSummary:
    """Write every row (flushes, no commit): all or nothing for the caller's transaction."""
    if not rows:
        raise RunImportError("the file has no rows to import")
    cases = study_cases(session=session, study=study, wanted={r.case_id for r in rows})
    verdicts = file_verdicts(rows, verdict_conflicts)
    summary = ImportSummary(format=fmt)
    readers: dict[str, Reader] = {}
    runs: dict[str, ModelRun] = {}
    for row in rows:
        case = cases[row.case_id]
        if row.kind == "human":
            if row.responder not in readers:
                readers[row.responder] = _reader(session, study, row)
            owner = Responder(reader_id=readers[row.responder].id)
            owned = col(Response.reader_id) == owner.reader_id
        else:
            if row.responder not in runs:
                runs[row.responder] = _run(session, study, row, params)
            owner = Responder(model_run_id=runs[row.responder].id)
            owned = col(Response.model_run_id) == owner.model_run_id
        existing = session.exec(select(Response).where(Response.case_id == case.id, owned)).first()
        if existing is not None and not replace:
            summary.skipped += 1
            continue
        assert study.id is not None and case.id is not None
        response = _response(
            existing, session=session, study_id=study.id, case=case, responder=owner, row=row
        )
        if existing is not None:
            summary.updated += 1
        else:
            summary.added += 1
        session.add(response)
        summary.by_status[row.status] = summary.by_status.get(row.status, 0) + 1
        summary.row_verdicts += has_row_verdict(row)
    session.flush()
    summary.verdicts_added = write_verdicts(
        session=session, study=study, cases=cases, verdicts=verdicts, actor=actor
    )
    for run in runs.values():
        finish_run(session=session, run=run)
    summary.runs = sorted(runs)
    summary.readers = sorted(readers)
    record_event(
        session=session,
        actor=actor,
        action="import_run",
        study_id=study.id,
        format=fmt,
        runs=summary.runs,
        readers=summary.readers,
        added=summary.added,
        updated=summary.updated,
        skipped=summary.skipped,
        verdicts=summary.verdicts_added,
        row_verdicts=summary.row_verdicts,
        **{k: v for k, v in params.items() if k in ("file", "sha256")},
    )
    session.flush()
    return summary
