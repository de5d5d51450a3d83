"""The AI-aided arm's exam services (SCORING.md section 10; study.toml ``aid``).

Sequential design: a reader answers a case unaided as always (``exam.submit``);
only once that row is stored does :func:`model_answer` hand out the model's
answer (the stored answer of the study's aid run on that case, never the key),
and :func:`submit_aided` stores the reader's final answer as a second row of the
case, ``arm = 'aided'``. :func:`pending_aided_case` finds a case answered unaided
but not yet aided, so a reload resumes at the aided step.

Crossover design: readers are split into groups A and B (:func:`crossover_group`,
balanced in seeded blocks of two and recorded in ``aid_crossover``); the scored
cases into two seeded halves (:func:`crossover_halves`). In period 1 group A reads
the first half aided and the second unaided, B the reverse; period 2 swaps the
arms and opens only ``washout_days`` after the reader's last period-1 answer
(:func:`washout_ends`). Every function that depends on the time takes ``now``, so
a test sets the clock instead of sleeping.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, func, select

from reader_app.core.errors import ReaderStudyError
from reader_app.exam.next_case import CaseView, case_view
from reader_app.exam.report_submit import ReportAnswer, submit_report
from reader_app.exam.submit import (
    Answer,
    SubmitResult,
    submit_answer,
)
from reader_app.models import (
    AidCrossover,
    Case,
    CaseImage,
    ModelRun,
    Reader,
    ReaderOrder,
    Response,
    Study,
    utcnow,
)
from reader_app.study.config import AidSettings, study_settings

ARMS = ("unaided", "aided")
GROUPS = ("A", "B")


class AidError(ReaderStudyError, ValueError):
    """The aided step cannot be shown or stored; the message says why."""


@dataclass(frozen=True)
class ModelAnswer:
    """What the aided step shows of the model's stored answer, per the study's ``show``."""

    run_id: int
    diagnosis: str | None  # None: not shown, or the model gave none
    likert: int | None
    idk: bool
    location_json: str | None  # the model's marker (stored-image pixels), when shown
    findings: str | None
    impression: str | None
    show: tuple[str, ...]


def aid_settings_of(session: Session, study_id: int) -> AidSettings | None:
    study = session.get(Study, study_id)
    return None if study is None else study_settings(study).aid


def aid_run(session: Session, study_id: int) -> ModelRun:
    """The study's aid run: a model run of this very study, named in ``aid.run``, that
    was sent the images (a text-only run saw no pixels); AidError otherwise."""
    settings = aid_settings_of(session, study_id)
    if settings is None:
        raise AidError("This study has no aided arm (study.toml `aid`).")
    run = session.exec(
        select(ModelRun).where(ModelRun.study_id == study_id, ModelRun.name == settings.run)
    ).first()
    if run is None:
        raise AidError(
            f"The aid run {settings.run!r} is not a model run of this study: run it first "
            "(`readerstudy run-model STUDY ... --name ...`) or import it."
        )
    if run.no_images:
        raise AidError(f"The aid run {settings.run!r} is text-only: it never saw the images.")
    return run


def _case_of(session: Session, reader: Reader, case_public_id: str) -> Case:
    case = session.exec(
        select(Case)
        .join(ReaderOrder, col(ReaderOrder.case_id) == Case.id)
        .where(Case.public_id == case_public_id, ReaderOrder.reader_id == reader.id)
    ).first()
    if case is None:
        raise AidError("This case is not part of your exam.")
    return case


def _row(session: Session, reader_id: int, case_id: int, arm: str) -> Response | None:
    return session.exec(
        select(Response).where(
            Response.reader_id == reader_id, Response.case_id == case_id, Response.arm == arm
        )
    ).first()


def model_answer(
    session: Session,
    reader: Reader,
    case_public_id: str,
    *,
    now: Callable[[], datetime] = utcnow,
    revising: bool = False,
) -> ModelAnswer:
    """The model's answer on a case, for this reader, only when it may be shown.

    Sequential: only after the reader's unaided row on the case is stored. Crossover:
    only on a case of the reader's aided half in the current period, and for period 2
    only once the washout has ended; ``revising``: also on a case whose aided row the
    reader may change now (:func:`revisable_arm`). Its images must be the case's own
    (same pixels).
    """
    assert reader.id is not None
    case = _case_of(session, reader, case_public_id)
    assert case.id is not None
    settings = aid_settings_of(session, case.study_id)
    if settings is None:
        raise AidError("This study has no aided arm (study.toml `aid`).")
    if case.practice:
        raise AidError("Practice cases have no aided step.")
    if settings.design == "sequential":
        if _row(session, reader.id, case.id, "unaided") is None:
            raise AidError("Give your own answer first: the model's answer comes after it.")
    elif crossover_arm(session, reader, case.id, now=now) != "aided" and not (
        revising and revisable_arm(session, reader, case.id, now=now) == "aided"
    ):
        raise AidError("This case is not one you read with the model's answer now.")
    run = aid_run(session, case.study_id)
    row = session.exec(
        select(Response).where(Response.model_run_id == run.id, Response.case_id == case.id)
    ).first()
    if row is None:
        raise AidError(f"The aid run {run.name!r} has no answer on this case.")
    own = set(session.exec(select(CaseImage.sha256).where(CaseImage.case_id == case.id)).all())
    seen = {s for s in row.image_sha256.split(",") if s}
    if not seen or not seen <= own:
        raise AidError(f"The aid run {run.name!r} did not see this case's images.")
    show = settings.show
    assert run.id is not None
    return ModelAnswer(
        run_id=run.id,
        diagnosis=row.diagnosis if "diagnosis" in show else None,
        likert=row.likert if "confidence" in show else None,
        idk=row.status == "idk" and "diagnosis" in show,
        location_json=row.location_json if "marker" in show else None,
        findings=row.findings if "report" in show else None,
        impression=row.impression if "report" in show else None,
        show=show,
    )


def submit_aided(
    *,
    session: Session,
    reader: Reader,
    case_public_id: str,
    answer: Answer | ReportAnswer,
    shown_at: datetime | None,
    image_sha256: list[str],
    meta: dict[str, object] | None = None,
    active_ms: int | None = None,
    location_json: str | None = None,
    now: Callable[[], datetime] = utcnow,
) -> SubmitResult:
    """Store the reader's final answer with the model's beside it (``arm = 'aided'``).

    Refused (AidError, nothing stored) whenever :func:`model_answer` would refuse to
    show the model's answer: no aided row without the model's answer having been due."""
    shown = model_answer(session, reader, case_public_id, now=now)
    return _submit(
        answer,
        session=session,
        reader=reader,
        case_public_id=case_public_id,
        shown_at=shown_at,
        image_sha256=image_sha256,
        meta={**(meta or {}), "aid_show": list(shown.show)},
        active_ms=active_ms,
        location_json=location_json,
        arm="aided",
        aid_run_id=shown.run_id,
    )


def pending_aided_case(session: Session, reader: Reader) -> str | None:
    """Sequential: the public id of a scored case answered unaided but not yet aided
    (the reader resumes there after a reload), or None."""
    assert reader.id is not None
    settings = aid_settings_of(session, reader.study_id)
    if settings is None or settings.design != "sequential":
        return None
    aided = select(Response.case_id).where(Response.reader_id == reader.id, Response.arm == "aided")
    row = session.exec(
        select(Case.public_id)
        .join(Response, col(Response.case_id) == Case.id)
        .join(
            ReaderOrder,
            (col(ReaderOrder.case_id) == Case.id) & (col(ReaderOrder.reader_id) == reader.id),
        )
        .where(
            Response.reader_id == reader.id,
            Response.arm == "unaided",
            col(Case.practice).is_(False),
            col(Response.case_id).not_in(aided),
        )
        .order_by(col(ReaderOrder.slot))
    ).first()
    return row


# --- crossover -------------------------------------------------------------------------


def crossover_group(session: Session, reader: Reader) -> str:
    """The reader's group (A or B), drawn once and recorded in ``aid_crossover``.

    Readers are taken in blocks of two in the order they first ask: within each block
    the seeded draw says which of the two is A, so the groups stay balanced."""
    assert reader.id is not None
    found = session.get(AidCrossover, reader.id)
    if found is not None:
        return found.group_name
    settings = aid_settings_of(session, reader.study_id)
    if settings is None or settings.design != "crossover":
        raise AidError("This study is not a crossover aided study.")
    k = int(
        session.exec(
            select(func.count())
            .select_from(AidCrossover)
            .where(AidCrossover.study_id == reader.study_id)
        ).one()
    )
    block = list(GROUPS)
    random.Random(f"{settings.seed}:{k // 2}").shuffle(block)
    row = AidCrossover(
        reader_id=reader.id, study_id=reader.study_id, group_name=block[k % 2], seed=settings.seed
    )
    session.add(row)
    try:
        session.commit()
    except IntegrityError:  # another tab of the same reader recorded it first
        session.rollback()
        again = session.get(AidCrossover, reader.id)
        assert again is not None
        return again.group_name
    return row.group_name


def crossover_halves(session: Session, study_id: int) -> tuple[list[int], list[int]]:
    """The study's scored cases in two seeded halves (case ids), the same for every reader."""
    settings = aid_settings_of(session, study_id)
    seed = settings.seed if settings is not None else 0
    ids = sorted(
        int(i)
        for i in session.exec(
            select(Case.id).where(Case.study_id == study_id, col(Case.practice).is_(False))
        ).all()
        if i is not None
    )
    random.Random(seed).shuffle(ids)
    half = (len(ids) + 1) // 2
    return sorted(ids[:half]), sorted(ids[half:])


def _aided_in_period(session: Session, reader: Reader, period: int) -> set[int]:
    first, second = crossover_halves(session, reader.study_id)
    group = crossover_group(session, reader)
    aided_first = first if group == "A" else second
    other = second if group == "A" else first
    return set(aided_first if period == 1 else other)


def _period_one_done(session: Session, reader: Reader) -> datetime | None:
    """When the reader's last period-1 answer was stored (each scored case read once,
    in the arm period 1 gives it), or None while period 1 is not finished."""
    assert reader.id is not None
    aided = _aided_in_period(session, reader, 1)
    first, second = crossover_halves(session, reader.study_id)
    last: datetime | None = None
    for case_id in [*first, *second]:
        row = _row(session, reader.id, case_id, "aided" if case_id in aided else "unaided")
        if row is None:
            return None
        last = row.submitted_at if last is None or row.submitted_at > last else last
    return last


def washout_ends(session: Session, reader: Reader) -> datetime | None:
    """When period 2 opens for the reader: their last period-1 answer plus the
    study's washout; None while period 1 is not finished."""
    settings = aid_settings_of(session, reader.study_id)
    if settings is None or settings.design != "crossover":
        raise AidError("This study is not a crossover aided study.")
    done = _period_one_done(session, reader)
    return None if done is None else done + timedelta(days=settings.washout_days)


def crossover_period(
    session: Session, reader: Reader, *, now: Callable[[], datetime] = utcnow
) -> int:
    """1 until period 1 is done; 0 during the washout (nothing to read); then 2."""
    ends = washout_ends(session, reader)
    if ends is None:
        return 1
    return 2 if now() >= ends else 0


def crossover_arm(
    session: Session, reader: Reader, case_id: int, *, now: Callable[[], datetime] = utcnow
) -> str | None:
    """The arm the reader reads ``case_id`` in now; None when it cannot be read now
    (the washout, or the case already read in this period's arm)."""
    assert reader.id is not None
    period = crossover_period(session, reader, now=now)
    if period == 0:
        return None
    arm = "aided" if case_id in _aided_in_period(session, reader, period) else "unaided"
    if _row(session, reader.id, case_id, arm) is not None:
        return None
    return arm


def crossover_record(session: Session, reader: Reader) -> dict[str, object]:
    """The reader's split as recorded, for the coordinator and the exports."""
    group = crossover_group(session, reader)
    first, second = crossover_halves(session, reader.study_id)
    row = session.get(AidCrossover, reader.id)
    assert row is not None
    return {
        "group": group,
        "seed": row.seed,
        "aided_period_1": first if group == "A" else second,
        "aided_period_2": second if group == "A" else first,
        "assigned_at": row.assigned_at.isoformat(),
    }


def revisable_arm(
    session: Session, reader: Reader, case_id: int, *, now: Callable[[], datetime] = utcnow
) -> str | None:
    """Which of the reader's rows on a scored case may be changed now (when the study
    allows revisions), or None: "unaided" in a study without an aided arm.

    Sequential: only the final (aided) answer, once given. The unaided answer is the
    measure of reading without the model and the model's answer is shown as soon as it
    is stored, so it is final from then on. Crossover: the row this period gave the
    case, while the period lasts; period 1's answers are final once its last case is
    read (the washout begins), since period 2 shows the other arm of the same cases."""
    assert reader.id is not None
    settings = aid_settings_of(session, reader.study_id)
    if settings is None:
        return "unaided"
    if settings.design == "sequential":
        return "aided" if _row(session, reader.id, case_id, "aided") is not None else None
    period = crossover_period(session, reader, now=now)
    if period == 0:
        return None
    arm = "aided" if case_id in _aided_in_period(session, reader, period) else "unaided"
    # the period's arm of a case differs from the other period's, so this row was
    # stored in this period
    return arm if _row(session, reader.id, case_id, arm) is not None else None


def submit_unaided(
    *,
    session: Session,
    reader: Reader,
    case_public_id: str,
    answer: Answer | ReportAnswer,
    shown_at: datetime | None,
    image_sha256: list[str],
    now: Callable[[], datetime] = utcnow,
) -> SubmitResult:
    """Crossover: store an unaided reading, refused during the washout or when the case
    is one this period reads aided. (Sequential studies use ``exam.submit`` as always.)"""
    case = _case_of(session, reader, case_public_id)
    assert case.id is not None
    if crossover_arm(session, reader, case.id, now=now) != "unaided":
        raise AidError("This case is not one you read on your own now.")
    meta: dict[str, object] = {"aid_period": crossover_period(session, reader, now=now)}
    return _submit(
        answer,
        session=session,
        reader=reader,
        case_public_id=case_public_id,
        shown_at=shown_at,
        image_sha256=image_sha256,
        meta=meta,
    )


def _submit(answer: Answer | ReportAnswer, **stored: Any) -> SubmitResult:
    """Store through the one path for the answer's kind: a report case's answer is a
    report (exam.report_submit), any other a diagnosis (exam.submit)."""
    if isinstance(answer, ReportAnswer):
        return submit_report(answer=answer, **stored)
    return submit_answer(answer=answer, **stored)


def model_answer_json(answer: ModelAnswer) -> str:
    """The model's answer as the aided box receives it (only the fields ``show`` allows)."""
    return json.dumps(
        {
            "diagnosis": answer.diagnosis,
            "likert": answer.likert,
            "idk": answer.idk,
            "location": json.loads(answer.location_json) if answer.location_json else None,
            "findings": answer.findings,
            "impression": answer.impression,
        },
        sort_keys=True,
    )


def pending_aided_view(session: Session, reader: Reader, total: int) -> CaseView | None:
    """The case of :func:`pending_aided_case` as the page draws it (slot and images)."""
    public_id = pending_aided_case(session, reader)
    if public_id is None:
        return None
    row = session.exec(
        select(Case, ReaderOrder.slot)
        .join(ReaderOrder, col(ReaderOrder.case_id) == Case.id)
        .where(Case.public_id == public_id, ReaderOrder.reader_id == reader.id)
    ).first()
    if row is None:
        return None
    case, slot = row
    return case_view(session=session, case=case, slot=slot, total=total)


@dataclass(frozen=True)
class CrossoverStep:
    """What a crossover reader is to read now (:func:`crossover_step`).

    ``period`` 1 or 2 with ``case`` and its ``arm``; ``period`` 0 during the washout,
    with ``reopens`` (UTC) and no case; ``case`` None outside the washout: all read."""

    period: int
    case: CaseView | None
    arm: str | None
    reopens: datetime | None


def crossover_step(
    session: Session, reader: Reader, total: int, *, now: Callable[[], datetime] = utcnow
) -> CrossoverStep:
    """The crossover reader's next case in slot order with the arm this period gives it:
    practice cases first (unaided, period 1 only), then every scored case once in
    period 1 and, after the washout, once more in the other arm. During the washout no
    case is handed out, only when period 2 opens."""
    assert reader.id is not None
    period = crossover_period(session, reader, now=now)
    if period == 0:
        return CrossoverStep(period=0, case=None, arm=None, reopens=washout_ends(session, reader))
    aided = _aided_in_period(session, reader, period)
    done = {
        (int(case_id), arm)
        for case_id, arm in session.exec(
            select(Response.case_id, Response.arm).where(Response.reader_id == reader.id)
        ).all()
    }
    for case, slot in session.exec(
        select(Case, ReaderOrder.slot)
        .join(ReaderOrder, col(ReaderOrder.case_id) == Case.id)
        .where(ReaderOrder.reader_id == reader.id)
        .order_by(col(ReaderOrder.slot))
    ).all():
        assert case.id is not None
        if case.practice:
            if period == 1 and (case.id, "unaided") not in done:
                return CrossoverStep(
                    period,
                    case_view(session=session, case=case, slot=slot, total=total),
                    "unaided",
                    None,
                )
            continue
        arm = "aided" if case.id in aided else "unaided"
        if (case.id, arm) not in done:
            view = case_view(session=session, case=case, slot=slot, total=total)
            return CrossoverStep(period, view, arm, None)
    return CrossoverStep(period=period, case=None, arm=None, reopens=None)
