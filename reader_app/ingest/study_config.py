"""``study.toml``: a study's settings, validated and stored as ``Study.config_json``.

Every key is filled in (defaults included), so the exam, the UI and the model
runner read one complete dictionary and never guess a default of their own.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from reader_app.ingest.errors import IngestError
from reader_app.ingest.render import WINDOW_PRESETS

DEFAULT_LIKERT = [
    "Not at all confident",
    "Slightly confident",
    "Moderately confident",
    "Very confident",
    "Completely confident",
]
REPORT_FIELDS = ("findings", "impression")  # the free-text columns a response can hold
KEYS = (
    "title",
    "consent",
    "practice_count",
    "allow_revisions",
    "likert_labels",
    "report_fields",
    "default_windows",
)


def default_config(title: str) -> dict[str, Any]:
    return {
        "title": title,
        "consent": "",
        "practice_count": 0,
        "allow_revisions": False,
        "likert_labels": list(DEFAULT_LIKERT),
        "report_fields": [],
        "default_windows": [],
    }


def load_study_config(path: Path, *, title: str, practice_cases: int) -> dict[str, Any]:
    """Read ``path`` (may be absent) and return the complete config; raise IngestError."""
    config = default_config(title)
    config["practice_count"] = practice_cases
    if not path.exists():
        return config
    name = path.name
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise IngestError(name, f"not valid TOML: {exc}") from exc
    unknown = sorted(set(raw) - set(KEYS))
    if unknown:
        raise IngestError(name, f"unknown key(s) {', '.join(unknown)}; known: {', '.join(KEYS)}")

    def bad(key: str, why: str) -> IngestError:
        return IngestError(name, f"key {key!r}: {why}")

    for key in ("title", "consent"):
        if key in raw:
            if not isinstance(raw[key], str):
                raise bad(key, "must be a string")
            config[key] = raw[key].strip() or config[key]
    if "practice_count" in raw:
        count = raw["practice_count"]
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise bad("practice_count", "must be a whole number >= 0")
        if count > practice_cases:
            raise bad(
                "practice_count",
                f"is {count} but the manifest marks {practice_cases} case(s) practice=true",
            )
        config["practice_count"] = count
    if "allow_revisions" in raw:
        if not isinstance(raw["allow_revisions"], bool):
            raise bad("allow_revisions", "must be true or false")
        config["allow_revisions"] = raw["allow_revisions"]
    if "likert_labels" in raw:
        labels = raw["likert_labels"]
        if (
            not isinstance(labels, list)
            or len(labels) != 5
            or not all(isinstance(x, str) and x.strip() for x in labels)
        ):
            raise bad("likert_labels", "must be a list of 5 non-empty strings (anchors 0..4)")
        config["likert_labels"] = [x.strip() for x in labels]
    if "report_fields" in raw:
        config["report_fields"] = _report_fields(raw["report_fields"], bad)
    if "default_windows" in raw:
        wins = raw["default_windows"]
        if not isinstance(wins, list) or not all(w in WINDOW_PRESETS for w in wins):
            raise bad("default_windows", f"must be a list of {', '.join(WINDOW_PRESETS)}")
        config["default_windows"] = list(dict.fromkeys(wins))
    return config


def _report_fields(value: object, bad: Any) -> list[str]:
    # true means both free-text fields; a list picks some; stored as a list either way.
    if isinstance(value, bool):
        return list(REPORT_FIELDS) if value else []
    if isinstance(value, list) and all(v in REPORT_FIELDS for v in value):
        return [f for f in REPORT_FIELDS if f in value]
    raise bad("report_fields", f"must be true, false or a list of {', '.join(REPORT_FIELDS)}")
