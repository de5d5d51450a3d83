"""Grade a study's pending answers in place: the key, grade memory, then the judges.

What ``readerstudy grade STUDY`` and ``run-model --judge`` do. Verdicts go
into grade memory (``verdicts``, one per case and normalized answer) with an
audit event each, so the tidy frame, the leaderboard and every export see
them at once, and an identical answer later, from a reader or a model, reuses
them. Nothing is guessed: what the judges split on or fail on stays pending
for the adjudicators.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlmodel import Session

from reader_app.grading.autograde import GradeReport, autograde_study
from reader_app.grading.diagnosis_judge import JudgeConfig
from reader_app.grading.run_judges import JudgeRunReport, judge_pending
from reader_app.models import Study


@dataclass(frozen=True)
class StudyGradeResult:
    grade: GradeReport  # where the answers' verdicts come from, after this pass
    judges: JudgeRunReport | None  # None: no judges asked

    def summary(self) -> str:
        g = self.grade
        line = (
            f"answered responses by key {g.by_key}, by adjudicator {g.by_adjudicator}, "
            f"by judge {g.by_judge}, by import {g.by_import}, pending {g.pending} "
            f"({g.pending_items} distinct answers)"
        )
        if self.judges is not None:
            j = self.judges
            line += (
                f"; judges asked about {j.asked} distinct answers: {j.locked} agreed, "
                f"{j.disagreements} split, {j.errors} failed"
            )
        return line


def grade_study(
    *,
    session: Session,
    study: Study,
    judges: Sequence[JudgeConfig] = (),
    actor: str,
    model_run_id: int | None = None,
) -> StudyGradeResult:
    """Key and grade memory, then (given one or two judges) the judges; commits.

    With ``model_run_id`` only the items that run's answers fall in are graded
    and counted. The caller decides who may grade (the CLI is the operator).
    """
    assert study.id is not None
    asked = None
    if judges:
        asked = judge_pending(
            session=session, study=study, judges=judges, actor=actor, model_run_id=model_run_id
        )
    report = autograde_study(
        session=session, study_id=study.id, actor=actor, commit=True, model_run_id=model_run_id
    )
    return StudyGradeResult(grade=report, judges=asked)
