"""A study's grading settings, read from its config (``study.toml``).

report_fields = ["findings", "impression"]   # turns on rubric grading

[grading]
adjudication = "double"       # "single" (default) or "double"
rubric_gap = 8                # report judges further apart than this go to the human queue

[[grading.judges]]            # optional; one (its verdict stands) or two (must agree)
name = "judge-a"              # defined by the server's operator (READERSTUDY_JUDGES)

``GradingConfig.judge_names`` are what the study says; ``judges`` resolves them
against the server's judges when a judge is about to be asked (an unknown name
is a ``GradingConfigError`` then, not when a page merely reads the settings).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from reader_app.core.errors import ReaderStudyError
from reader_app.llm.judges import JudgeConfig, JudgeSetupError, resolve_judges
from reader_app.models import Study
from reader_app.study.config import (
    ADJUDICATION_MODES,
    DEFAULT_RUBRIC_GAP,
    REPORT_FIELDS,
    StudyConfigError,
    grading_settings,
    report_fields,
)

__all__ = [
    "ADJUDICATION_MODES",
    "REPORT_FIELDS",
    "GradingConfig",
    "GradingConfigError",
    "grading_config",
    "parse_grading_config",
]


class GradingConfigError(ReaderStudyError, ValueError):
    """The study's grading settings are not usable; the message names the setting."""


@dataclass(frozen=True)
class GradingConfig:
    adjudication: str = "single"
    judge_names: tuple[str, ...] = ()
    report_fields: tuple[str, ...] = ()
    rubric_gap: int = DEFAULT_RUBRIC_GAP

    @property
    def judges(self) -> tuple[JudgeConfig, ...]:
        """The study's judges as the server defines them (read now)."""
        try:
            return resolve_judges(self.judge_names)
        except JudgeSetupError as exc:
            raise GradingConfigError(str(exc)) from exc

    @property
    def double(self) -> bool:
        return self.adjudication == "double"

    @property
    def rubric_enabled(self) -> bool:
        return bool(self.report_fields)


def parse_grading_config(config: dict[str, Any]) -> GradingConfig:
    try:
        grading = grading_settings(config.get("grading"))
        fields_ = report_fields(config.get("report_fields"))
    except StudyConfigError as exc:
        raise GradingConfigError(str(exc)) from exc
    return GradingConfig(
        adjudication=grading.adjudication,
        rubric_gap=grading.rubric_gap,
        judge_names=grading.judges,
        report_fields=fields_,
    )


def grading_config(study: Study) -> GradingConfig:
    return parse_grading_config(json.loads(study.config_json or "{}"))
