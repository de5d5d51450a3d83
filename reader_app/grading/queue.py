"""The blinded adjudication queue.

An adjudicator is shown one *item* at a time: the case images, the reference,
the synonyms and one candidate answer. ``QueueItem`` has no field that could
tell who answered, whether a person or a model did, how many gave the same
answer or when: blinding is a property of the data the page receives, not of
what it chooses to render. The order is a per-adjudicator shuffle, so it does
not follow the order answers (or imported model runs) came in.

Two-adjudicator mode: an item needs two independent first-round decisions;
when they disagree it waits for a third adjudicator, who sees exactly the
same blinded item (and not the first two decisions).
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from sqlmodel import Session, col, select

from reader_app.core.auth import require_role
from reader_app.exam.next_case import ImageView, image_mm
from reader_app.grading.autograde import AnswerItem, answered_items, autograde_study
from reader_app.grading.config import grading_config
from reader_app.grading.key import KeyEntry, study_key
from reader_app.grading.matcher import Suggestion, rank_suggestions
from reader_app.grading.memory import active_verdicts
from reader_app.models import Adjudication, Case, CaseImage, Reader, Study


@dataclass(frozen=True)
class QueueItem:
    """Everything the adjudicator sees for one decision, and nothing about the responder."""

    item_id: str
    case_public_id: str
    case_kind: str  # spot | strip (the case's kind, not the responder's)
    history: str | None
    images: tuple[ImageView, ...]  # what the viewer shows (window, size, role)
    reference: str
    synonyms: tuple[str, ...]
    candidate: str
    stage: str  # "first" or "third" (tie-break in two-adjudicator mode)
    suggestions: tuple[Suggestion, ...]


@dataclass(frozen=True)
class QueueView:
    size: int  # items waiting for this adjudicator, the shown one included
    item: QueueItem | None


def item_stage(mode: str, adjudicator_id: int, decisions: Sequence[Adjudication]) -> str | None:
    """Which decision this adjudicator may make on an ungraded item, if any."""
    if any(d.adjudicator_id == adjudicator_id for d in decisions):
        return None  # decided already: independence means never twice
    if mode == "single":
        return "first"
    first = [d for d in decisions if d.round == "first"]
    if len(first) < 2:
        return "first"
    if any(d.round == "third" for d in decisions):
        return None
    return "third" if first[0].correct != first[1].correct else None


def active_decisions(
    *, session: Session, study_id: int
) -> dict[tuple[int, str], list[Adjudication]]:
    rows = session.exec(
        select(Adjudication)
        .join(Case, col(Case.id) == Adjudication.case_id)
        .where(Case.study_id == study_id, col(Adjudication.active).is_(True))
        .order_by(col(Adjudication.decided_at), col(Adjudication.id))
    ).all()
    out: dict[tuple[int, str], list[Adjudication]] = defaultdict(list)
    for d in rows:
        out[(d.case_id, d.normalized_answer)].append(d)
    return out


def _shuffle_key(adjudicator_id: int, item_id: str) -> str:
    return hashlib.sha256(f"{adjudicator_id}:{item_id}".encode()).hexdigest()


def waiting_items(
    *, session: Session, adjudicator: Reader, study: Study
) -> list[tuple[AnswerItem, str]]:
    """Ungraded items this adjudicator may decide, tie-breaks first, then shuffled."""
    assert adjudicator.id is not None and study.id is not None
    mode = grading_config(study).grading.adjudication
    verdicts = active_verdicts(session=session, study_id=study.id)
    decisions = active_decisions(session=session, study_id=study.id)
    out = []
    for key, item in answered_items(session=session, study_id=study.id).items():
        if key in verdicts:
            continue
        stage = item_stage(mode, adjudicator.id, decisions.get(key, []))
        if stage is not None:
            out.append((item, stage))
    aid = adjudicator.id
    out.sort(key=lambda pair: (pair[1] != "third", _shuffle_key(aid, pair[0].item_id)))
    return out


def build_item(
    *, session: Session, study_id: int, item: AnswerItem, stage: str, entry: KeyEntry | None
) -> QueueItem:
    case = session.get(Case, item.case_id)
    assert case is not None
    images = session.exec(
        select(CaseImage).where(CaseImage.case_id == case.id).order_by(col(CaseImage.seq))
    ).all()
    graded = {
        norm: v.correct
        for (cid, norm), v in active_verdicts(session=session, study_id=study_id).items()
        if cid == item.case_id
    }
    entry = entry or KeyEntry(case_id=case.source_id, diagnosis="", synonyms=())
    return QueueItem(
        item_id=item.item_id,
        case_public_id=case.public_id,
        case_kind=case.kind,
        history=case.history,
        images=tuple(
            ImageView(i.sha256, i.label, i.window, i.role, i.width, i.height, image_mm(i))
            for i in images
        ),
        reference=entry.diagnosis,
        synonyms=entry.synonyms,
        candidate=item.representative,
        stage=stage,
        suggestions=rank_suggestions(item.representative, entry, graded),
    )


def adjudication_queue(
    *,
    session: Session,
    adjudicator: Reader,
    skip: Sequence[str] = (),
    autograde: bool = True,
    first: str | None = None,
) -> QueueView:
    """The queue size and the next item for this adjudicator (after key auto-grading).

    ``skip`` holds item ids the adjudicator passed over in this sitting; they
    stay in the queue and come back once everything else is done. ``first``
    brings one waiting item to the front (the answer whose decision was undone).
    """
    require_role(adjudicator, "adjudicator")
    study = session.get(Study, adjudicator.study_id)
    assert study is not None and study.id is not None
    if autograde:
        autograde_study(session=session, study_id=study.id)
    waiting = waiting_items(session=session, adjudicator=adjudicator, study=study)
    if not waiting:
        return QueueView(size=0, item=None)
    skipped = set(skip)
    item, stage = next(
        ((i, s) for i, s in waiting if i.item_id == first),
        next(((i, s) for i, s in waiting if i.item_id not in skipped), waiting[0]),
    )
    entry = study_key(session=session, study_id=study.id).get(item.case_id)
    return QueueView(
        size=len(waiting),
        item=build_item(session=session, study_id=study.id, item=item, stage=stage, entry=entry),
    )
