"""Changing the answer key: coordinators edit, adjudicators add synonyms.

Every change keeps the old key (answer_key_history), writes an audit event and
re-grades the case at once (autograde.regrade_case), so the tidy frame and
every score computed from it follow the new key.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from sqlmodel import Session, col, select

from reader_app.core.audit import record_event
from reader_app.core.auth import AuthError, require_role
from reader_app.grading.autograde import RegradeReport, regrade_case
from reader_app.grading.key import AnswerKeyError, KeyEntry, make_entry, split_synonyms
from reader_app.grading.normalize import normalize_answer
from reader_app.models import AnswerKey, AnswerKeyVersion, Case, Reader, utcnow


@dataclass(frozen=True)
class KeyRow:
    """One case's key as the coordinator's page shows it."""

    case_id: int
    public_id: str
    source_id: str
    kind: str
    diagnosis: str
    synonyms: tuple[str, ...]
    # the grounding truth, for the coordinator's eyes only: boxes as stored, "mask", or ""
    reference: str = ""


@dataclass(frozen=True)
class KeyChange:
    case_id: int
    changed: bool
    regrade: RegradeReport | None


def _case_in_study(session: Session, actor: Reader, case_id: int) -> tuple[Case, AnswerKey]:
    row = session.exec(
        select(Case, AnswerKey)
        .join(AnswerKey, col(AnswerKey.case_id) == Case.id)
        .where(Case.id == case_id)
    ).first()
    if row is None or row[0].study_id != actor.study_id:
        raise AuthError("This case is not part of your study.")
    return row[0], row[1]


def list_key(*, session: Session, actor: Reader) -> list[KeyRow]:
    """The whole key of the actor's study, in case order (coordinators only)."""
    require_role(actor, "coordinator")
    rows = session.exec(
        select(Case, AnswerKey)
        .join(AnswerKey, col(AnswerKey.case_id) == Case.id)
        .where(Case.study_id == actor.study_id)
        .order_by(col(Case.position), col(Case.id))
    ).all()
    return [
        KeyRow(
            case_id=c.id or 0,
            public_id=c.public_id,
            source_id=c.source_id,
            kind=c.kind,
            diagnosis=k.diagnosis,
            synonyms=split_synonyms(k.synonyms),
            reference=k.reference_region or ("mask" if k.reference_mask else ""),
        )
        for c, k in rows
    ]


def _apply(
    session: Session,
    actor: Reader,
    case: Case,
    key: AnswerKey,
    entry: KeyEntry,
    reason: str | None,
    action: str,
) -> KeyChange:
    old_syns = split_synonyms(key.synonyms)
    if key.diagnosis == entry.diagnosis and old_syns == entry.synonyms:
        return KeyChange(case_id=case.id or 0, changed=False, regrade=None)
    assert case.id is not None
    reference_changed = normalize_answer(key.diagnosis) != normalize_answer(entry.diagnosis)
    session.add(
        AnswerKeyVersion(
            case_id=case.id,
            diagnosis=key.diagnosis,
            synonyms=key.synonyms,
            valid_from=key.updated_at,
            replaced_at=utcnow(),
            replaced_by=actor.code,
            reason=reason,
        )
    )
    record_event(
        session=session,
        actor=actor.code,
        action=action,
        study_id=case.study_id,
        case=case.source_id,
        before={"diagnosis": key.diagnosis, "synonyms": list(old_syns)},
        after={"diagnosis": entry.diagnosis, "synonyms": list(entry.synonyms)},
        reason=reason,
    )
    key.diagnosis = entry.diagnosis
    key.synonyms = entry.synonyms_text
    key.updated_at = utcnow()
    session.add(key)
    session.flush()
    report = regrade_case(
        session=session,
        study_id=case.study_id,
        case_id=case.id,
        actor=actor.code,
        reference_changed=reference_changed,
        entry=entry,
    )
    return KeyChange(case_id=case.id, changed=True, regrade=report)


def update_key(
    *,
    session: Session,
    actor: Reader,
    case_id: int,
    diagnosis: str,
    synonyms: str | Iterable[str],
    reason: str | None = None,
) -> KeyChange:
    """Replace one case's key (coordinators); history, audit and re-grading included."""
    require_role(actor, "coordinator")
    case, key = _case_in_study(session, actor, case_id)
    entry = make_entry(case.source_id, diagnosis, synonyms)
    change = _apply(session, actor, case, key, entry, reason, "answer_key.update")
    session.commit()
    return change


def add_synonym_in_session(
    *, session: Session, actor: Reader, case_id: int, synonym: str, reason: str | None = None
) -> KeyChange:
    """Add one accepted spelling to a case's key; flushes, the caller commits."""
    require_role(actor, "adjudicator", "coordinator")
    case, key = _case_in_study(session, actor, case_id)
    value = " ".join(synonym.split())
    if not normalize_answer(value):
        raise AnswerKeyError("an empty synonym cannot be added")
    if "|" in value:
        raise AnswerKeyError("'|' separates synonyms; it cannot be part of one")
    entry = make_entry(case.source_id, key.diagnosis, [*split_synonyms(key.synonyms), value])
    return _apply(session, actor, case, key, entry, reason, "answer_key.add_synonym")


def add_synonym(
    *, session: Session, actor: Reader, case_id: int, synonym: str, reason: str | None = None
) -> KeyChange:
    """Add one accepted spelling to a case's key (adjudicators and coordinators)."""
    change = add_synonym_in_session(
        session=session, actor=actor, case_id=case_id, synonym=synonym, reason=reason
    )
    session.commit()
    return change


@dataclass(frozen=True)
class KeyImport:
    changed: int
    unchanged: int
    not_in_file: int
    responses_affected: int


def import_key(
    *,
    session: Session,
    actor: Reader,
    entries: Mapping[str, KeyEntry],
    reason: str | None = "key file imported",
) -> KeyImport:
    """Apply a parsed key file to the actor's study: all or nothing.

    Cases are matched by the manifest case id; an id the study does not have
    refuses the whole file. Cases absent from the file keep their key.
    """
    require_role(actor, "coordinator")
    rows = session.exec(
        select(Case, AnswerKey)
        .join(AnswerKey, col(AnswerKey.case_id) == Case.id)
        .where(Case.study_id == actor.study_id)
    ).all()
    by_source = {c.source_id: (c, k) for c, k in rows}
    unknown = sorted(set(entries) - set(by_source))
    if unknown:
        raise AnswerKeyError(f"the study has no case(s) {', '.join(unknown[:20])}")
    changed = unchanged = affected = 0
    try:
        for source_id, entry in entries.items():
            case, key = by_source[source_id]
            change = _apply(session, actor, case, key, entry, reason, "answer_key.update")
            if change.changed:
                changed += 1
                affected += change.regrade.responses_affected if change.regrade else 0
            else:
                unchanged += 1
        session.commit()
    except BaseException:
        session.rollback()
        raise
    return KeyImport(
        changed=changed,
        unchanged=unchanged,
        not_in_file=len(by_source) - len(entries),
        responses_affected=affected,
    )


def key_history(*, session: Session, actor: Reader, case_id: int) -> list[AnswerKeyVersion]:
    """Earlier keys of a case, oldest first."""
    require_role(actor, "coordinator", "adjudicator")
    _case_in_study(session, actor, case_id)
    return list(
        session.exec(
            select(AnswerKeyVersion)
            .where(AnswerKeyVersion.case_id == case_id)
            .order_by(col(AnswerKeyVersion.replaced_at), col(AnswerKeyVersion.id))
        ).all()
    )
