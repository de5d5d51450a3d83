"""Automatic grading of a study's answers: the key first, then grade memory.

An *item* is one (case, normalized answer). Every answered, non-practice
response belongs to exactly one item, and one verdict grades the whole item,
whoever gave the answers in it. Key matches are the only automatic verdicts
made here; anything else waits for the judges or an adjudicator.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field

from sqlmodel import Session, col, select

from reader_app.grading.key import KeyEntry, case_key, study_key
from reader_app.grading.matcher import matches_normalized
from reader_app.grading.memory import active_verdicts, record_verdict, retire_verdict
from reader_app.grading.normalize import normalize_answer
from reader_app.models import Adjudication, Response, Verdict

SYSTEM_ACTOR = "system:autograde"


@dataclass
class AnswerItem:
    """All answered responses of one case that normalize to the same text."""

    case_id: int
    normalized_answer: str
    response_ids: list[int] = field(default_factory=list)
    texts: Counter[str] = field(default_factory=Counter)

    @property
    def key(self) -> tuple[int, str]:
        return (self.case_id, self.normalized_answer)

    @property
    def item_id(self) -> str:
        return item_id_for(self.case_id, self.normalized_answer)

    @property
    def representative(self) -> str:
        """The most common spelling (ties: alphabetical), never tied to a responder."""
        return min(self.texts.items(), key=lambda kv: (-kv[1], kv[0]))[0]


def item_id_for(case_id: int, normalized_answer: str) -> str:
    """An opaque, stable id for an item: reveals neither the case nor the answer."""
    return hashlib.sha256(f"{case_id}\x1f{normalized_answer}".encode()).hexdigest()[:20]


def answered_items(
    *,
    session: Session,
    study_id: int,
    case_id: int | None = None,
    model_run_id: int | None = None,
) -> dict[tuple[int, str], AnswerItem]:
    """Answered, non-practice responses grouped by (case, normalized answer); with
    ``model_run_id``, only that run's responses (a verdict still grades every
    identical answer: the item is the same)."""
    query = select(Response.id, Response.case_id, Response.diagnosis).where(
        Response.study_id == study_id,
        Response.status == "answered",
        col(Response.practice).is_(False),
    )
    if case_id is not None:
        query = query.where(Response.case_id == case_id)
    if model_run_id is not None:
        query = query.where(Response.model_run_id == model_run_id)
    items: dict[tuple[int, str], AnswerItem] = {}
    for rid, cid, diagnosis in session.exec(query.order_by(col(Response.id))).all():
        norm = normalize_answer(diagnosis)
        if not norm or rid is None:
            continue
        item = items.setdefault((cid, norm), AnswerItem(cid, norm))
        item.response_ids.append(rid)
        item.texts[" ".join((diagnosis or "").split())] += 1
    return items


@dataclass(frozen=True)
class GradeReport:
    """Answered responses by where their verdict comes from (after this run)."""

    by_key: int
    by_adjudicator: int
    by_judge: int
    by_import: int
    pending: int
    pending_items: int
    new_key_verdicts: int

    @property
    def total(self) -> int:
        return self.by_key + self.by_adjudicator + self.by_judge + self.by_import + self.pending


def autograde_study(
    *,
    session: Session,
    study_id: int,
    actor: str = SYSTEM_ACTOR,
    commit: bool = True,
    model_run_id: int | None = None,
) -> GradeReport:
    """Grade every ungraded item that matches the key exactly; report the rest.

    Idempotent. Internal (no role check): the adjudication queue and the CLI
    call it on behalf of a signed-in adjudicator or an operator. With
    ``model_run_id`` only that run's answers are looked at (and counted).
    """
    key = study_key(session=session, study_id=study_id)
    verdicts = active_verdicts(session=session, study_id=study_id)
    counts: Counter[str] = Counter()
    pending_items = new = 0
    items = answered_items(session=session, study_id=study_id, model_run_id=model_run_id)
    for item in items.values():
        verdict = verdicts.get(item.key)
        entry = key.get(item.case_id)
        if (
            verdict is None
            and entry is not None
            and matches_normalized(item.normalized_answer, entry)
        ):
            verdict = record_verdict(
                session=session,
                study_id=study_id,
                case_id=item.case_id,
                normalized_answer=item.normalized_answer,
                correct=1,
                source="key",
                decided_by="key",
                actor=actor,
            )
            new += 1
        if verdict is None:
            counts["pending"] += len(item.response_ids)
            pending_items += 1
        else:
            counts[verdict.source] += len(item.response_ids)
    if commit:
        session.commit()
    return GradeReport(
        by_key=counts["key"],
        by_adjudicator=counts["adjudicator"],
        by_judge=counts["judge"],
        by_import=counts["import"],
        pending=counts["pending"],
        pending_items=pending_items,
        new_key_verdicts=new,
    )


@dataclass(frozen=True)
class RegradeReport:
    """What a key change did to one case's verdicts."""

    accepted: int  # items the key now grades correct (new or overriding 'incorrect')
    reopened: int  # items whose verdict was retired: back in the queue
    responses_affected: int


def reopen_item(
    *,
    session: Session,
    study_id: int,
    case_id: int,
    normalized_answer: str,
    actor: str,
    reason: str,
) -> None:
    """Retire an item's verdict and its adjudicator decisions: it will be graded afresh."""
    for verdict in session.exec(
        select(Verdict).where(
            Verdict.case_id == case_id,
            Verdict.normalized_answer == normalized_answer,
            col(Verdict.active).is_(True),
        )
    ).all():
        retire_verdict(
            session=session, study_id=study_id, verdict=verdict, actor=actor, reason=reason
        )
    for decision in session.exec(
        select(Adjudication).where(
            Adjudication.case_id == case_id,
            Adjudication.normalized_answer == normalized_answer,
            col(Adjudication.active).is_(True),
        )
    ).all():
        decision.active = False
        session.add(decision)
    session.flush()


def regrade_case(
    *,
    session: Session,
    study_id: int,
    case_id: int,
    actor: str,
    reference_changed: bool,
    entry: KeyEntry | None = None,
) -> RegradeReport:
    """Bring one case's verdicts in line with its (changed) key; flushes, no commit.

    - an answer the key now accepts becomes correct (source key), also over an
      earlier 'incorrect' (the key is the authority); an earlier 'correct' stays;
    - a key verdict for an answer the key no longer accepts is retired;
    - when the reference diagnosis itself changed, every adjudicator and judge
      verdict of the case was made against the old reference: all are retired
      and their items go back to the queue.
    History is kept (inactive rows) and every change is audited.
    """
    entry = entry or case_key(session=session, case_id=case_id)
    items = answered_items(session=session, study_id=study_id, case_id=case_id)
    verdicts = {
        v.normalized_answer: v
        for v in session.exec(
            select(Verdict).where(Verdict.case_id == case_id, col(Verdict.active).is_(True))
        ).all()
    }
    accepted = reopened = affected = 0
    for norm in sorted(set(items) | {(case_id, n) for n in verdicts}):
        answer = norm[1]
        n_responses = len(items[norm].response_ids) if norm in items else 0
        verdict = verdicts.get(answer)
        if entry is not None and matches_normalized(answer, entry):
            if verdict is not None and verdict.correct == 1:
                continue
            if verdict is None and norm not in items:
                continue
            record_verdict(
                session=session,
                study_id=study_id,
                case_id=case_id,
                normalized_answer=answer,
                correct=1,
                source="key",
                decided_by="key",
                note="accepted by the answer key" if verdict is not None else None,
                actor=actor,
            )
            accepted += 1
            affected += n_responses
        elif verdict is not None and (verdict.source == "key" or reference_changed):
            reason = (
                "no longer in the answer key"
                if verdict.source == "key"
                else ("the reference diagnosis changed")
            )
            reopen_item(
                session=session,
                study_id=study_id,
                case_id=case_id,
                normalized_answer=answer,
                actor=actor,
                reason=reason,
            )
            reopened += 1
            affected += n_responses
        elif verdict is None and reference_changed:
            # half-finished double adjudication against the old reference
            reopen_item(
                session=session,
                study_id=study_id,
                case_id=case_id,
                normalized_answer=answer,
                actor=actor,
                reason="the reference diagnosis changed",
            )
    return RegradeReport(accepted=accepted, reopened=reopened, responses_affected=affected)
