"""Simulate a study's readers, model runs and grading through the real services.

Readers answer through the exam (ensure_order, next_case, submit_answer),
model runs enter through the runs importer (import_run_file, JSONL bytes),
and grading goes through the answer key (autograde_study) and an
adjudicator's decisions (adjudication_queue, decide). A plan says, per case
id, what a responder does: ``("correct", L)``, ``("wrong", L)``, ``("idk",)``
or nothing (the case is left unanswered).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any

from sqlmodel import Session

from reader_app.exam.next_case import case_view
from reader_app.exam.order import ensure_order, stored_order
from reader_app.exam.submit import submit_answer, validate_answer
from reader_app.grading.adjudication import decide
from reader_app.grading.autograde import autograde_study
from reader_app.grading.key import study_key
from reader_app.grading.queue import adjudication_queue
from reader_app.models import Case, Reader, Study, utcnow
from reader_app.runs.importers import import_run_file
from tests.factories import make_reader

Step = tuple[Any, ...]
Plan = Mapping[str, Step]


def key_by_source(session: Session, study: Study) -> dict[str, str]:
    return {e.case_id: e.diagnosis for e in study_key(session=session, study_id=study.id).values()}


def _text(step: Step, key: str, case_id: str) -> tuple[str | None, int | None, bool]:
    if step[0] == "idk":
        return None, None, True
    if step[0] == "correct":
        return key, int(step[1]), False
    return f"Not {key.lower()} ({case_id})", int(step[1]), False


def simulate_reader(
    session: Session,
    study: Study,
    code: str,
    plan: Plan,
    *,
    group: str = "board-certified",
    seconds: float = 30.0,
) -> Reader:
    """Invite a ready reader and answer, in their own random order, the cases in ``plan``
    (practice cases with IDK); cases not in the plan stay unanswered."""
    reader = make_reader(session, study, code=code, ready=True, group=group).reader
    reader.group_name = group
    session.add(reader)
    session.commit()
    key = key_by_source(session, study)
    ensure_order(session=session, reader=reader)
    order = stored_order(session=session, reader=reader)
    for slot, case_id in enumerate(order):
        case = session.get(Case, case_id)
        assert case is not None
        step = plan.get(case.source_id) or (("idk",) if case.practice else None)
        if step is None:
            continue  # left unanswered
        view = case_view(session=session, case=case, slot=slot, total=len(order))
        diagnosis, likert, idk = _text(step, key[case.source_id], case.source_id)
        submit_answer(
            session=session,
            reader=reader,
            case_public_id=view.public_id,
            answer=validate_answer(diagnosis, likert, idk),
            shown_at=utcnow() - timedelta(seconds=seconds),
            image_sha256=view.reader_sha256,
        )
    return reader


def import_model_run(
    session: Session, study: Study, name: str, plan: Plan, *, group: str = "vendor"
) -> None:
    key = key_by_source(session, study)
    records: list[dict[str, Any]] = []
    for case_id, step in plan.items():
        diagnosis, likert, idk = _text(step, key[case_id], case_id)
        if idk:
            records.append({"case_id": case_id, "output": "I don't know"})
        else:
            records.append({"case_id": case_id, "diagnosis": diagnosis, "likert": likert})
    data = "\n".join(json.dumps(r) for r in records).encode("utf-8")
    import_run_file(
        session=session, study=study, source=data, fmt="jsonl", name=name, model=name, group=group
    )


def grade_everything(session: Session, study: Study, adjudicator_code: str = "ADJ") -> int:
    """Key matches by the key; every other answer judged incorrect by an adjudicator."""
    autograde_study(session=session, study_id=study.id or 0)
    adjudicator = make_reader(session, study, code=adjudicator_code, role="adjudicator").reader
    decided = 0
    while (view := adjudication_queue(session=session, adjudicator=adjudicator)).item is not None:
        decide(session=session, adjudicator=adjudicator, item_id=view.item.item_id, correct=False)
        decided += 1
    return decided


def plan_for(case_ids: Sequence[str], pattern: str) -> dict[str, Step]:
    """A plan from a compact pattern, one letter per case: C/c correct at L4/L1,
    W/w wrong at L4/L1, M correct at L2, I idk, '.' unanswered."""
    steps: dict[str, Step] = {
        "C": ("correct", 4),
        "c": ("correct", 1),
        "M": ("correct", 2),
        "W": ("wrong", 4),
        "w": ("wrong", 1),
        "I": ("idk",),
    }
    return {cid: steps[p] for cid, p in zip(case_ids, pattern, strict=False) if p != "."}
