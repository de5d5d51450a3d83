"""Run the study's LLM judges over the ungraded answers and lock agreed verdicts.

Items already started by a human adjudicator are left to the humans. A judge
verdict (one judge's, or two that agree) is stored with source ``judge``; a
disagreement, an error or an unparseable reply leaves the item in the human
queue (and, not being cached, it is asked again on the next run).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlmodel import Session

from reader_app.core.auth import require_role
from reader_app.grading.autograde import answered_items, autograde_study
from reader_app.grading.config import GradingConfigError, grading_config
from reader_app.grading.diagnosis_judge import (
    DbJudgeCache,
    JudgeClient,
    JudgeRequest,
    judge_requests,
)
from reader_app.grading.key import study_key
from reader_app.grading.memory import ConcurrentDecision, active_verdicts, record_verdict
from reader_app.grading.queue import active_decisions
from reader_app.llm.judges import JudgeConfig
from reader_app.models import Reader, Study


@dataclass(frozen=True)
class JudgeRunReport:
    asked: int  # items put to the judges
    locked: int  # items the judges agreed on (verdict stored)
    disagreements: int
    errors: int  # timeouts, HTTP errors, unparseable replies
    responses_graded: int


def run_judges(
    *,
    session: Session,
    actor: Reader,
    judges: Sequence[JudgeConfig] | None = None,
) -> JudgeRunReport:
    """Put every ungraded, not-yet-adjudicated item of the actor's study to the judges."""
    require_role(actor, "coordinator", "adjudicator")
    study = session.get(Study, actor.study_id)
    assert study is not None and study.id is not None
    configs = tuple(judges) if judges is not None else grading_config(study).judges
    return judge_pending(session=session, study=study, judges=configs, actor=actor.code)


def judge_pending(
    *,
    session: Session,
    study: Study,
    judges: Sequence[JudgeConfig],
    actor: str,
    model_run_id: int | None = None,
) -> JudgeRunReport:
    """The judges' pass over a study's ungraded items (or those a run's answers are in),
    for a caller that has checked who may ask: the CLI (``grade STUDY``, ``run-model
    --judge``) and ``run_judges``. Key and memory grading come first; commits."""
    assert study.id is not None
    configs = tuple(judges)
    if not configs:
        raise GradingConfigError("This study has no judges configured ([[grading.judges]]).")
    autograde_study(session=session, study_id=study.id, actor=actor, model_run_id=model_run_id)
    key = study_key(session=session, study_id=study.id)
    verdicts = active_verdicts(session=session, study_id=study.id)
    started = active_decisions(session=session, study_id=study.id)
    candidates = answered_items(session=session, study_id=study.id, model_run_id=model_run_id)
    items = [
        item
        for k, item in sorted(candidates.items())
        if k not in verdicts and k not in started and item.case_id in key
    ]
    requests = [
        JudgeRequest(
            reference=key[item.case_id].diagnosis,
            synonyms=key[item.case_id].synonyms,
            candidate=item.representative,
            normalized_answer=item.normalized_answer,
        )
        for item in items
    ]
    clients = [JudgeClient(c) for c in configs]
    try:
        outcomes = judge_requests(clients, requests, DbJudgeCache(session))
    finally:
        for client in clients:
            client.close()
    locked = disagree = errors = graded = 0
    label = "judge:" + "+".join(c.model for c in configs)
    for item, outcome in zip(items, outcomes, strict=True):
        if outcome.status == "disagree":
            disagree += 1
        elif outcome.status == "error":
            errors += 1
        if outcome.correct is None:
            continue
        try:
            record_verdict(
                session=session,
                study_id=study.id,
                case_id=item.case_id,
                normalized_answer=item.normalized_answer,
                correct=outcome.correct,
                source="judge",
                decided_by=label[:200],
                note=outcome.note,
                actor=actor,
            )
        except ConcurrentDecision:
            continue  # an adjudicator was faster; their verdict stands
        locked += 1
        graded += len(item.response_ids)
    session.commit()
    return JudgeRunReport(
        asked=len(items),
        locked=locked,
        disagreements=disagree,
        errors=errors,
        responses_graded=graded,
    )
