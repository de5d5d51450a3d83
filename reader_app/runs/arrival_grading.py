"""Grade a model run's answers as they arrive (``run-model --judge``).

A ``RunProgress`` callback for ``runs.runner.run_model``: each time the run
stores a new answered row, the run's pending answers go through the study's
grading (the key, grade memory, then the judges; ``grading.study_grade``),
so the leaderboard sees verdicts while the run is still going. It runs in the
runner's own thread and session, between two stored answers; requests in
flight carry on meanwhile.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlmodel import Session

from reader_app.grading.diagnosis_judge import JudgeConfig
from reader_app.grading.study_grade import StudyGradeResult, grade_study
from reader_app.models import Study
from reader_app.runs.record import find_run
from reader_app.runs.runner import ProgressFn, RunProgress


class GradeOnArrival:
    """Call it as the runner's progress callback; ``then`` is the display (or None)."""

    def __init__(
        self,
        *,
        session: Session,
        study: Study,
        run_name: str,
        judges: Sequence[JudgeConfig],
        actor: str,
        then: ProgressFn | None = None,
    ) -> None:
        self.session = session
        self.study = study
        self.run_name = run_name
        self.judges = tuple(judges)
        self.actor = actor
        self.then = then
        self.answered = 0
        self.passes = 0
        self.last: StudyGradeResult | None = None
        # over every pass: distinct answers put to the judges, agreed, split, failed
        self.judged = {"asked": 0, "agreed": 0, "split": 0, "failed": 0}

    def __call__(self, state: RunProgress) -> None:
        if self.then is not None:
            self.then(state)
        answered = state.counts.get("answered", 0)
        if answered > self.answered:  # a new answer to grade (idk/failure rows need none)
            self.answered = answered
            self.grade()

    def grade(self) -> StudyGradeResult | None:
        """One pass over the run's pending answers; None before the run exists."""
        run = find_run(session=self.session, study=self.study, name=self.run_name)
        if run is None or run.id is None:
            return None
        self.last = grade_study(
            session=self.session,
            study=self.study,
            judges=self.judges,
            actor=self.actor,
            model_run_id=run.id,
        )
        self.passes += 1
        if self.last.judges is not None:
            j = self.last.judges
            for key, value in zip(
                self.judged, (j.asked, j.locked, j.disagreements, j.errors), strict=True
            ):
                self.judged[key] += value
        return self.last

    def summary(self) -> str:
        j = self.judged
        passes = f"{self.passes} pass" + ("" if self.passes == 1 else "es")
        return (
            f"judges, as the answers arrived ({passes}): {j['asked']} distinct "
            f"answers asked, {j['agreed']} agreed, {j['split']} split, {j['failed']} failed"
        )
