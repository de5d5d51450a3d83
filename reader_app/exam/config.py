"""The exam's view of a study's settings: ``StudyConfig`` (reader_app/stored_config.py).

Ingest stores every key; studies built another way (tests, older imports) may
lack some, and ``StudyConfig.from_stored`` gives each its one default, so a
malformed value never breaks a reader's exam.
"""

from __future__ import annotations

from reader_app.models import Study
from reader_app.study.config import DEFAULT_LIKERT, StudyConfig, stored_config

DEFAULT_LIKERT_LABELS = DEFAULT_LIKERT
ExamConfig = StudyConfig  # the exam reads title, consent, practice_count, likert_labels, ...


def exam_config(study: Study) -> ExamConfig:
    return StudyConfig.from_stored(stored_config(study), title=study.title)


__all__ = ["DEFAULT_LIKERT_LABELS", "ExamConfig", "exam_config"]
