"""Where a reader stands before the exam: consent, then profile, then the cases."""

from __future__ import annotations

from typing import Literal

from reader_app.exam.consent import needs_consent
from reader_app.exam.profile import load_profile
from reader_app.models import Reader
from reader_app.study.config import StudyConfig

Step = Literal["consent", "profile", "exam"]


def onboarding_step(reader: Reader, config: StudyConfig) -> Step:
    if reader.role != "reader":
        return "exam"  # staff roles have no consent or profile step
    if needs_consent(reader, config):
        return "consent"
    if load_profile(reader) is None:
        return "profile"
    return "exam"
