"""A study's settings as grading reads them: the one ``StudyConfig`` (reader_app/study/config.py).

report_fields = ["findings", "impression"]   # turns on rubric grading

[grading]
adjudication = "double"       # "single" (default) or "double"
rubric_gap = 8                # report judges further apart than this go to the human queue

[[grading.judges]]            # optional; one (its verdict stands) or two (must agree)
name = "judge-a"              # defined by the server's operator (READERSTUDY_JUDGES)

``grading_config`` reads strictly: a malformed ``[grading]`` table or ``report_fields`` is a
``GradingConfigError`` (an adjudicator must see a broken setup; the exam reads the same
settings leniently). ``config.grading.judges`` are the names the study gives;
``study_judges`` resolves them against the server's judges when a judge is about to be
asked (an unknown name is a ``GradingConfigError`` then, not when a page merely reads).
"""

from __future__ import annotations

from reader_app.core.errors import ReaderStudyError
from reader_app.llm.judges import JudgeConfig, JudgeSetupError, resolve_judges
from reader_app.models import Study
from reader_app.study.config import StudyConfig, StudyConfigError, study_settings

__all__ = ["GradingConfigError", "grading_config", "study_judges"]


class GradingConfigError(ReaderStudyError, ValueError):
    """The study's grading settings are not usable; the message names the setting."""


def grading_config(study: Study) -> StudyConfig:
    try:
        return study_settings(study, strict_grading=True)
    except StudyConfigError as exc:
        raise GradingConfigError(str(exc)) from exc


def study_judges(config: StudyConfig) -> tuple[JudgeConfig, ...]:
    """The study's judges as the server defines them (read now)."""
    try:
        return resolve_judges(config.grading.judges)
    except JudgeSetupError as exc:
        raise GradingConfigError(str(exc)) from exc
