"""Practice feedback: the reference answer, only for a practice case already answered.

The check is here, in the service, not in the page: a scored case never
yields its key, and a practice case yields it only once the reader's own
answer is stored (so it cannot be peeked at and then copied).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlmodel import Session, col, select

from reader_app.models import AnswerKey, Case, Reader, Response


@dataclass(frozen=True)
class PracticeFeedback:
    reference: str
    also_accepted: tuple[str, ...]
    your_diagnosis: str | None
    your_likert: int | None
    idk: bool


def practice_feedback(
    *, session: Session, reader: Reader, case_public_id: str
) -> PracticeFeedback | None:
    """The reference answer for a practice case this reader has answered, else None."""
    row = session.exec(
        select(Response, AnswerKey)
        .join(Case, col(Case.id) == Response.case_id)
        .join(AnswerKey, col(AnswerKey.case_id) == Case.id)
        .where(
            Case.public_id == case_public_id,
            Case.study_id == reader.study_id,
            col(Case.practice).is_(True),
            Response.reader_id == reader.id,
        )
    ).first()
    if row is None:
        return None
    response, key = row
    synonyms = tuple(s.strip() for s in key.synonyms.split("|") if s.strip())
    return PracticeFeedback(
        reference=key.diagnosis,
        also_accepted=synonyms,
        your_diagnosis=response.diagnosis,
        your_likert=response.likert,
        idk=response.idk,
    )
