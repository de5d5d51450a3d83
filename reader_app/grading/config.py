"""A study's grading settings, read from its config (``study.toml``).

report_fields = ["findings", "impression"]   # turns on rubric grading

[grading]
adjudication = "double"       # "single" (default) or "double"
rubric_gap = 8                # report judges further apart than this go to the human queue

[[grading.judges]]            # optional; two or more, all must agree
url = "http://127.0.0.1:8000/v1"
model = "judge-a"
api_key_env = "READERSTUDY_JUDGE_API_KEY"   # the key itself never sits in a file
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from typing import Any

from reader_app.errors import ReaderStudyError
from reader_app.grading.diagnosis_judge import JudgeConfig
from reader_app.models import Study
from reader_app.study_config import (
    ADJUDICATION_MODES,
    DEFAULT_RUBRIC_GAP,
    REPORT_FIELDS,
    JudgeSpec,
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
    "judges_from",
    "parse_grading_config",
]


class GradingConfigError(ReaderStudyError, ValueError):
    """The study's grading settings are not usable; the message names the setting."""


@dataclass(frozen=True)
class GradingConfig:
    adjudication: str = "single"
    judges: tuple[JudgeConfig, ...] = ()
    report_fields: tuple[str, ...] = ()
    rubric_gap: int = DEFAULT_RUBRIC_GAP

    @property
    def double(self) -> bool:
        return self.adjudication == "double"

    @property
    def rubric_enabled(self) -> bool:
        return bool(self.report_fields)


def _judge(spec: JudgeSpec) -> JudgeConfig:
    given = {f.name: getattr(spec, f.name) for f in fields(spec)}
    return JudgeConfig(**{k: v for k, v in given.items() if v is not None})


def judges_from(value: Any) -> tuple[JudgeConfig, ...]:
    """``[[grading.judges]]`` tables -> judges (StudyConfig's schema, JudgeConfig's defaults)."""
    try:
        return tuple(_judge(j) for j in grading_settings({"judges": value or []}).judges)
    except StudyConfigError as exc:
        raise GradingConfigError(str(exc)) from exc


def parse_grading_config(config: dict[str, Any]) -> GradingConfig:
    try:
        grading = grading_settings(config.get("grading"))
        fields_ = report_fields(config.get("report_fields"))
    except StudyConfigError as exc:
        raise GradingConfigError(str(exc)) from exc
    return GradingConfig(
        adjudication=grading.adjudication,
        rubric_gap=grading.rubric_gap,
        judges=tuple(_judge(j) for j in grading.judges),
        report_fields=fields_,
    )


def grading_config(study: Study) -> GradingConfig:
    return parse_grading_config(json.loads(study.config_json or "{}"))
