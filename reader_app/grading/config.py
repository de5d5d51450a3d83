"""A study's grading settings, read from its config (``study.toml``).

report_fields = ["findings", "impression"]   # turns on rubric grading

[grading]
adjudication = "double"       # "single" (default) or "double"

[[grading.judges]]            # optional; two or more, all must agree
url = "http://127.0.0.1:8000/v1"
model = "judge-a"
api_key_env = "READERSTUDY_JUDGE_API_KEY"   # the key itself never sits in a file
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from reader_app.grading.judges import JudgeConfig
from reader_app.models import Study

ADJUDICATION_MODES = ("single", "double")
REPORT_FIELDS = ("findings", "impression")


class GradingConfigError(ValueError):
    """The study's grading settings are not usable; the message names the setting."""


@dataclass(frozen=True)
class GradingConfig:
    adjudication: str = "single"
    judges: tuple[JudgeConfig, ...] = ()
    report_fields: tuple[str, ...] = ()

    @property
    def double(self) -> bool:
        return self.adjudication == "double"

    @property
    def rubric_enabled(self) -> bool:
        return bool(self.report_fields)


def _report_fields(value: Any) -> tuple[str, ...]:
    if value in (None, False, "", []):
        return ()
    if value is True:
        return REPORT_FIELDS
    items = [value] if isinstance(value, str) else list(value)
    fields = tuple(str(v).strip().lower() for v in items)
    bad = [f for f in fields if f not in REPORT_FIELDS]
    if bad:
        raise GradingConfigError(f"report_fields: unknown field(s) {bad}; use {REPORT_FIELDS}")
    return fields


def judges_from(value: Any) -> tuple[JudgeConfig, ...]:
    if not value:
        return ()
    judges = []
    for i, raw in enumerate(value):
        if not isinstance(raw, dict) or not raw.get("url") or not raw.get("model"):
            raise GradingConfigError(f"grading.judges[{i}]: needs url and model")
        judges.append(
            JudgeConfig(
                url=str(raw["url"]),
                model=str(raw["model"]),
                api_key_env=str(raw.get("api_key_env") or JudgeConfig.api_key_env),
                timeout_s=float(raw.get("timeout_s", JudgeConfig.timeout_s)),
                max_attempts=int(raw.get("max_attempts", JudgeConfig.max_attempts)),
            )
        )
    if len(judges) == 1:
        raise GradingConfigError("grading.judges: configure two judges (or none); one cannot lock")
    return tuple(judges)


def parse_grading_config(config: dict[str, Any]) -> GradingConfig:
    grading = config.get("grading") or {}
    if not isinstance(grading, dict):
        raise GradingConfigError("grading: must be a table")
    mode = str(grading.get("adjudication", "single")).lower()
    if mode not in ADJUDICATION_MODES:
        raise GradingConfigError(f"grading.adjudication: must be one of {ADJUDICATION_MODES}")
    return GradingConfig(
        adjudication=mode,
        judges=judges_from(grading.get("judges")),
        report_fields=_report_fields(config.get("report_fields")),
    )


def grading_config(study: Study) -> GradingConfig:
    return parse_grading_config(json.loads(study.config_json or "{}"))
