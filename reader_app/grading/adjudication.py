"""Adjudicator decisions, the two-adjudicator mode, verdict changes and agreement.

Single mode: one decision is the verdict. Double mode: two independent
first-round decisions; agreement locks the verdict, a disagreement goes to a
third adjudicator whose decision is final. Cohen kappa between the first-round
decisions is reported by ``adjudicator_agreement`` (``scoring.cohen_kappa``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from reader_app.core.audit import record_event
from reader_app.core.auth import AuthError, require_role
from reader_app.core.errors import ReaderStudyError
from reader_app.grading.autograde import AnswerItem, answered_items
from reader_app.grading.config import grading_config
from reader_app.grading.key import case_key
from reader_app.grading.key_admin import add_synonym_in_session
from reader_app.grading.matcher import matches_normalized
from reader_app.grading.memory import (
    ConcurrentDecision,
    active_verdict,
    record_verdict,
    retire_verdict,
)
from reader_app.grading.normalize import normalize_answer
from reader_app.grading.queue import item_stage
from reader_app.models import Adjudication, Case, Reader, Study
from scoring import cohen_kappa

MAX_NOTE_CHARS = 2000


class GradingError(ReaderStudyError, ValueError):
    """The decision cannot be taken; the message is meant for the adjudicator."""


@dataclass(frozen=True)
class DecisionResult:
    item_id: str
    stage: str
    final: bool  # a verdict was stored (else: waiting for the second or third adjudicator)
    correct: int | None  # the stored verdict when final
    responses_affected: int
    synonym_added: bool


def _find_item(session: Session, study_id: int, item_id: str) -> AnswerItem:
    for item in answered_items(session=session, study_id=study_id).values():
        if item.item_id == item_id:
            return item
    raise GradingError("This answer is no longer waiting for a decision.")


def _item_decisions(session: Session, item: AnswerItem) -> list[Adjudication]:
    return list(
        session.exec(
            select(Adjudication)
            .where(
                Adjudication.case_id == item.case_id,
                Adjudication.normalized_answer == item.normalized_answer,
                col(Adjudication.active).is_(True),
            )
            .order_by(col(Adjudication.decided_at), col(Adjudication.id))
        ).all()
    )


def _codes(session: Session, ids: Sequence[int]) -> list[str]:
    return [r.code for i in ids if (r := session.get(Reader, i)) is not None]


def decide(
    *,
    session: Session,
    adjudicator: Reader,
    item_id: str,
    correct: bool,
    note: str | None = None,
    add_synonym: bool = False,
) -> DecisionResult:
    """Record one adjudicator's decision on a queue item; store the verdict when final.

    ``add_synonym`` asks for the answer's spelling to join the key; it takes
    effect only when the final verdict is correct.
    """
    require_role(adjudicator, "adjudicator")
    assert adjudicator.id is not None
    study = session.get(Study, adjudicator.study_id)
    assert study is not None and study.id is not None
    note = (note or "").strip()[:MAX_NOTE_CHARS] or None
    item = _find_item(session, study.id, item_id)
    if active_verdict(
        session=session, case_id=item.case_id, normalized_answer=item.normalized_answer
    ):
        raise GradingError("This answer has been graded already.")
    decisions = _item_decisions(session, item)
    stage = item_stage(grading_config(study).grading.adjudication, adjudicator.id, decisions)
    if stage is None:
        raise GradingError("You have already given your decision on this answer.")
    mine = Adjudication(
        case_id=item.case_id,
        normalized_answer=item.normalized_answer,
        adjudicator_id=adjudicator.id,
        round=stage,
        correct=int(bool(correct)),
        note=note,
        add_synonym=bool(add_synonym),
    )
    session.add(mine)
    decisions.append(mine)
    final: int | None = None
    decided_by = adjudicator.code
    first = [d for d in decisions if d.round == "first"]
    if grading_config(study).grading.adjudication == "single" or stage == "third":
        final = mine.correct
        if stage == "third":
            split = "/".join(_codes(session, [d.adjudicator_id for d in first]))
            decided_by = f"{adjudicator.code} (third; {split} disagreed)"
    elif len(first) == 2 and first[0].correct == first[1].correct:
        final = mine.correct
        decided_by = "+".join(_codes(session, [d.adjudicator_id for d in first]))
    try:
        session.flush()
    except IntegrityError as exc:  # the unique (item, adjudicator) index: a double click
        session.rollback()
        raise GradingError("Your decision on this answer is already stored.") from exc
    record_event(
        session=session,
        actor=adjudicator.code,
        action="adjudication.decide",
        study_id=study.id,
        case_id=item.case_id,
        answer=item.normalized_answer,
        stage=stage,
        correct=mine.correct,
        note=note,
    )
    synonym_added = False
    if final is not None:
        notes = "; ".join(d.note for d in decisions if d.note) or None
        try:
            record_verdict(
                session=session,
                study_id=study.id,
                case_id=item.case_id,
                normalized_answer=item.normalized_answer,
                correct=final,
                source="adjudicator",
                decided_by=decided_by[:200],
                note=notes,
                actor=adjudicator.code,
            )
        except ConcurrentDecision as exc:
            session.rollback()
            raise GradingError(str(exc)) from exc
        if final == 1 and any(d.add_synonym and d.correct == 1 for d in decisions):
            add_synonym_in_session(
                session=session,
                actor=adjudicator,
                case_id=item.case_id,
                synonym=item.representative,
                reason="added by adjudication",
            )
            synonym_added = True
    session.commit()
    return DecisionResult(
        item_id=item_id,
        stage=stage,
        final=final is not None,
        correct=final,
        responses_affected=len(item.response_ids) if final is not None else 0,
        synonym_added=synonym_added,
    )


@dataclass(frozen=True)
class UndoResult:
    item_id: str  # the queue item, waiting again
    case_id: int
    normalized_answer: str
    correct: int  # the decision taken back
    verdict_retired: bool  # the answer is ungraded again (it had been graded by that decision)


def undo_last_decision(*, session: Session, adjudicator: Reader) -> UndoResult:
    """Take back the adjudicator's most recent decision; the answer is back in the queue.

    The decision stays in the database as history (``active`` false) and the undo
    is audited. A verdict that decision stored is retired with it. Refused when
    another decision on the same answer came after it (that adjudicator's work
    would change meaning), or when the decision added a synonym to the key (the
    key is changed on the Answer key page, with its own history).
    """
    require_role(adjudicator, "adjudicator")
    study = session.get(Study, adjudicator.study_id)
    assert study is not None and study.id is not None
    last = session.exec(
        select(Adjudication)
        .join(Case, col(Case.id) == col(Adjudication.case_id))
        .where(
            Case.study_id == study.id,
            Adjudication.adjudicator_id == adjudicator.id,
            col(Adjudication.active).is_(True),
        )
        .order_by(col(Adjudication.decided_at).desc(), col(Adjudication.id).desc())
    ).first()
    if last is None:
        raise GradingError("You have no decision to undo.")
    later = [
        d
        for d in _item_decisions(session, AnswerItem(last.case_id, last.normalized_answer))
        if d.id != last.id and (d.decided_at, d.id or 0) > (last.decided_at, last.id or 0)
    ]
    if later:
        raise GradingError(
            "Another adjudicator has decided on this answer since, so your decision "
            "can no longer be undone here."
        )
    verdict = active_verdict(
        session=session, case_id=last.case_id, normalized_answer=last.normalized_answer
    )
    ours = (
        verdict is not None
        and verdict.source == "adjudicator"
        and verdict.decided_at >= last.decided_at
    )
    if last.add_synonym and last.correct == 1 and ours:
        raise GradingError(
            "That decision added the answer to the key as a synonym, so it cannot be "
            "undone here and it stands. If the synonym is wrong, ask the study's "
            "coordinator to remove it from the answer key."
        )
    last.active = False
    session.add(last)
    record_event(
        session=session,
        actor=adjudicator.code,
        action="adjudication.undo",
        study_id=study.id,
        case_id=last.case_id,
        answer=last.normalized_answer,
        stage=last.round,
        correct=last.correct,
        decision_id=last.id,
    )
    if ours:
        assert verdict is not None
        retire_verdict(
            session=session,
            study_id=study.id,
            verdict=verdict,
            actor=adjudicator.code,
            reason="adjudication undone",
        )
    session.commit()
    return UndoResult(
        item_id=AnswerItem(last.case_id, last.normalized_answer).item_id,
        case_id=last.case_id,
        normalized_answer=last.normalized_answer,
        correct=last.correct,
        verdict_retired=ours,
    )


@dataclass(frozen=True)
class VerdictChange:
    case_id: int
    normalized_answer: str
    previous: int | None
    correct: int
    responses_affected: int


def change_verdict(
    *,
    session: Session,
    actor: Reader,
    case_id: int,
    answer: str,
    correct: bool,
    note: str | None = None,
) -> VerdictChange:
    """Overrule the verdict of one answer (coordinators and adjudicators).

    Every response with that normalized answer follows at once (the tidy
    frame reads active verdicts); the old verdict stays as history. Answers
    the key accepts are refused: change the key instead.
    """
    require_role(actor, "coordinator", "adjudicator")
    case = session.get(Case, case_id)
    if case is None or case.study_id != actor.study_id:
        raise AuthError("This case is not part of your study.")
    norm = normalize_answer(answer)
    if not norm:
        raise GradingError("An empty answer has no verdict.")
    entry = case_key(session=session, case_id=case_id)
    if entry is not None and matches_normalized(norm, entry) and not correct:
        raise GradingError("The answer key accepts this answer; change the key instead.")
    old = active_verdict(session=session, case_id=case_id, normalized_answer=norm)
    record_verdict(
        session=session,
        study_id=case.study_id,
        case_id=case_id,
        normalized_answer=norm,
        correct=correct,
        source="adjudicator",
        decided_by=actor.code,
        note=(note or "").strip()[:MAX_NOTE_CHARS] or "verdict changed",
        actor=actor.code,
    )
    session.commit()
    n = len(
        answered_items(session=session, study_id=case.study_id, case_id=case_id)
        .get((case_id, norm), AnswerItem(case_id, norm))
        .response_ids
    )
    return VerdictChange(
        case_id=case_id,
        normalized_answer=norm,
        previous=None if old is None else old.correct,
        correct=int(bool(correct)),
        responses_affected=n,
    )


@dataclass(frozen=True)
class PairAgreement:
    adjudicators: tuple[str, str]
    n_items: int
    n_agree: int
    kappa: float


@dataclass(frozen=True)
class AgreementReport:
    """First-round agreement in two-adjudicator mode."""

    n_items: int  # items with two first-round decisions
    n_agree: int
    kappa: float  # first decision vs second decision of each item
    n_resolved_by_third: int
    n_awaiting_third: int
    pairs: tuple[PairAgreement, ...]  # per pair of adjudicators

    @property
    def percent_agreement(self) -> float:
        return 100.0 * self.n_agree / self.n_items if self.n_items else float("nan")


def adjudicator_agreement(*, session: Session, actor: Reader) -> AgreementReport:
    """Cohen kappa between the two independent decisions on each double-graded item.

    Items reopened by a key change keep their old decisions out (inactive).
    With more than two adjudicators the overall kappa compares each item's
    earlier decision with its later one; ``pairs`` gives kappa per pair.
    """
    require_role(actor, "adjudicator", "coordinator", "analyst")
    rows = session.exec(
        select(Adjudication)
        .join(Case, col(Case.id) == Adjudication.case_id)
        .where(Case.study_id == actor.study_id, col(Adjudication.active).is_(True))
        .order_by(col(Adjudication.decided_at), col(Adjudication.id))
    ).all()
    by_item: dict[tuple[int, str], list[Adjudication]] = defaultdict(list)
    for d in rows:
        by_item[(d.case_id, d.normalized_answer)].append(d)
    firsts: list[int] = []
    seconds: list[int] = []
    per_pair: dict[tuple[int, int], list[tuple[int, int]]] = defaultdict(list)
    resolved = awaiting = 0
    for decisions in by_item.values():
        first = [d for d in decisions if d.round == "first"]
        if len(first) < 2:
            continue
        a, b = first[0], first[1]
        firsts.append(a.correct)
        seconds.append(b.correct)
        if a.adjudicator_id <= b.adjudicator_id:
            per_pair[(a.adjudicator_id, b.adjudicator_id)].append((a.correct, b.correct))
        else:
            per_pair[(b.adjudicator_id, a.adjudicator_id)].append((b.correct, a.correct))
        if a.correct != b.correct:
            if any(d.round == "third" for d in decisions):
                resolved += 1
            else:
                awaiting += 1
    pairs = []
    for (x, y), labels in sorted(per_pair.items()):
        codes = _codes(session, [x, y])
        pairs.append(
            PairAgreement(
                adjudicators=(codes[0], codes[1]),
                n_items=len(labels),
                n_agree=sum(p == q for p, q in labels),
                kappa=cohen_kappa([p for p, _ in labels], [q for _, q in labels]),
            )
        )
    return AgreementReport(
        n_items=len(firsts),
        n_agree=sum(p == q for p, q in zip(firsts, seconds, strict=True)),
        kappa=cohen_kappa(firsts, seconds),
        n_resolved_by_third=resolved,
        n_awaiting_third=awaiting,
        pairs=tuple(pairs),
    )
