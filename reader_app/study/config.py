"""``StudyConfig``: a study's settings (``study.toml``), one typed schema with one set of defaults.

The importer parses ``study.toml`` strictly (``StudyConfig.parse``: an unknown
key or a bad value is refused, naming the key) and stores ``to_json()`` as
``Study.config_json``. Import, the exam and grading read it back through
``study_settings(study)`` (the one reader of that column), which falls back to
the same defaults for a missing or malformed value, so a study built another
way (tests, older imports) never breaks a reader's exam; grading asks it with
``strict_grading=True``, so an adjudicator sees a broken ``[grading]`` table.

    title = "Chest study"
    consent = "..."
    practice_count = 1
    allow_revisions = false
    likert_labels = ["...", "...", "...", "...", "..."]   # anchors 0..4
    report_fields = ["findings", "impression"]          # or true / false
    default_windows = ["lung"]
    original_values = false        # true: readers may window the slices' original values
    theme = "dark"                 # the exam page: "dark" (reading room) or "light"
    answer = "diagnosis"           # or "report" (Findings + Impression); the manifest may override
    grounding = true               # readers mark where the finding is (SCORING.md section 8)
    grounding_required = true      # false: the marker is optional
    grounding_tolerance_px = 0     # a box grows by this many stored-image pixels for a hit
    aid = { run = "gpt-x", design = "sequential", show = ["diagnosis", "confidence"] }
                                   # the AI-aided arm (SCORING.md section 10; docs/aided.md):
                                   # "crossover" also takes washout_days and seed

    [grading]
    adjudication = "double"        # "single" (default) or "double"
    rubric_gap = 8                 # report judges further apart go to an adjudicator
    [[grading.judges]]             # optional; one (its verdict stands) or two (must agree)
    name = "judge-a"               # a judge the server defines (READERSTUDY_JUDGES)

A study never names a judge's URL or key variable: those are the server's
(``reader_app.llm.judges``), and a study that tries is refused, naming the field.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from reader_app.core.errors import ReaderStudyError
from reader_app.core.text_rules.imported import MAX_CONSENT, MAX_LABEL, MAX_TITLE, text_problem
from reader_app.llm.judges import JUDGE_NAME
from reader_app.llm.prompts import builtin_prompts
from reader_app.models import Study
from reader_app.study.window_presets import PER_SLICE, WINDOW_PRESETS

DEFAULT_LIKERT: tuple[str, str, str, str, str] = (
    "Not at all confident",
    "Slightly confident",
    "Moderately confident",
    "Very confident",
    "Completely confident",
)
REPORT_FIELDS = ("findings", "impression")  # the free-text columns a response can hold
ADJUDICATION_MODES = ("single", "double")
THEMES = ("dark", "light")
ANSWER_MODES = ("diagnosis", "report")  # what a case asks for; the manifest may override
# what a model run sends of a strip's slices: the reader's PNGs as they are, or each slice
# rescaled to its own full 8-bit range (Bench 2's per-slice normalisation)
MODEL_SLICES = ("as-shown", "per-slice")
KEYS = (
    "title",
    "consent",
    "practice_count",
    "allow_revisions",
    "likert_labels",
    "report_fields",
    "default_windows",
    "original_values",
    "theme",
    "answer",
    "grounding",
    "grounding_required",
    "grounding_tolerance_px",
    "grading",
    "report_prompt",
    "model_slices",
    "aid",
)
AID_KEYS = ("run", "design", "show", "washout_days", "seed")
AID_DESIGNS = ("sequential", "crossover")
# what of the model's stored answer the aided step shows (never the answer key)
AID_SHOW = ("diagnosis", "confidence", "marker", "report")
MAX_WASHOUT_DAYS = 365
GRADING_KEYS = ("adjudication", "judges", "rubric_gap")
DEFAULT_RUBRIC_GAP = 8  # judges further apart than this (0..40) go to an adjudicator
JUDGE_KEYS = ("name",)
MAX_JUDGES = 2
# what a study.toml may not say about a judge: the server's configuration
SERVER_JUDGE_KEYS = {
    "url": "a study cannot name a judge's endpoint",
    "api_key_env": "a study cannot name a variable to read a key from",
}


class StudyConfigError(ReaderStudyError, ValueError):
    """A setting cannot be used; ``key`` names it (``grading.judges[1].url``)."""

    def __init__(self, key: str, why: str) -> None:
        super().__init__(f"key {key!r}: {why}")
        self.key = key


@dataclass(frozen=True)
class GradingSettings:
    adjudication: str = "single"
    judges: tuple[str, ...] = ()  # names of judges the server defines
    rubric_gap: int = DEFAULT_RUBRIC_GAP

    @property
    def double(self) -> bool:
        return self.adjudication == "double"


@dataclass(frozen=True)
class AidSettings:
    """The AI-aided arm: which model run's stored answers readers see, and how."""

    run: str
    design: str = "sequential"
    show: tuple[str, ...] = ("diagnosis", "confidence")
    washout_days: int = 0  # crossover: days between the two periods
    seed: int = 0  # crossover: the seed of the group split and the case halves


@dataclass(frozen=True)
class StudyConfig:
    title: str
    consent: str = ""  # empty: no consent step
    practice_count: int | None = None  # None: every case the manifest marks practice
    allow_revisions: bool = False
    likert_labels: tuple[str, str, str, str, str] = DEFAULT_LIKERT
    report_fields: tuple[str, ...] = ()
    default_windows: tuple[str, ...] = ()
    # readers window the grey slices' original values (HU on CT), stored at import beside
    # the renders; off by default: models see only the preset renders (parity)
    original_values: bool = False
    theme: str = "dark"  # the exam page: "dark" (reading room) or "light"
    answer: str = "diagnosis"  # the study's answer mode; a manifest row may override it
    grounding: bool = False  # readers place one marker per case (or "no focal finding")
    grounding_required: bool = True
    grounding_tolerance_px: float = 0.0
    grading: GradingSettings = field(default_factory=GradingSettings)
    # the built-in prompt report cases get (run-model's --report-prompt wins); None: the
    # region-neutral default (runs.record.DEFAULT_REPORT_PROMPT)
    report_prompt: str | None = None
    model_slices: str = "as-shown"
    aid: AidSettings | None = None  # None: no aided arm

    @property
    def rubric_enabled(self) -> bool:
        """Report fields turn on rubric grading."""
        return bool(self.report_fields)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        for key in ("likert_labels", "report_fields", "default_windows"):
            data[key] = list(data[key])
        data["grading"]["judges"] = [{"name": n} for n in data["grading"]["judges"]]
        if data["aid"] is not None:
            data["aid"]["show"] = list(data["aid"]["show"])
        return data

    @classmethod
    def parse(cls, raw: dict[str, Any], *, title: str, practice_cases: int) -> StudyConfig:
        """Strict: the first unusable key raises StudyConfigError naming it."""
        unknown = sorted(set(raw) - set(KEYS))
        if unknown:
            raise StudyConfigError(unknown[0], f"unknown key(s) {', '.join(unknown)}; known: "
                                   f"{', '.join(KEYS)}")  # fmt: skip
        config = cls(title=title, practice_count=practice_cases)
        for key in ("title", "consent"):
            if key in raw:
                value = raw[key]
                if not isinstance(value, str):
                    raise StudyConfigError(key, "must be a string")
                limit = MAX_TITLE if key == "title" else MAX_CONSENT
                why = text_problem(value.strip(), max_chars=limit, multiline=key == "consent")
                if why:
                    raise StudyConfigError(key, why)
                if key == "title":
                    config = replace(config, title=value.strip() or config.title)
                else:
                    config = replace(config, consent=value.strip())
        if "practice_count" in raw:
            count = raw["practice_count"]
            if isinstance(count, bool) or not isinstance(count, int) or count < 0:
                raise StudyConfigError("practice_count", "must be a whole number >= 0")
            if count > practice_cases:
                raise StudyConfigError(
                    "practice_count",
                    f"is {count} but the manifest marks {practice_cases} case(s) practice=true",
                )
            config = replace(config, practice_count=count)
        if "allow_revisions" in raw:
            if not isinstance(raw["allow_revisions"], bool):
                raise StudyConfigError("allow_revisions", "must be true or false")
            config = replace(config, allow_revisions=raw["allow_revisions"])
        if "likert_labels" in raw:
            config = replace(config, likert_labels=_labels(raw["likert_labels"]))
        if "report_fields" in raw:
            config = replace(config, report_fields=report_fields(raw["report_fields"]))
        if "default_windows" in raw:
            wins = raw["default_windows"]
            names = (*WINDOW_PRESETS, PER_SLICE)
            if not isinstance(wins, list) or not all(w in names for w in wins):
                raise StudyConfigError("default_windows", f"must be a list of {', '.join(names)}")
            config = replace(config, default_windows=tuple(dict.fromkeys(wins)))
        if "theme" in raw:
            if raw["theme"] not in THEMES:
                raise StudyConfigError("theme", f"must be one of {', '.join(THEMES)}")
            config = replace(config, theme=raw["theme"])
        if "answer" in raw:
            if raw["answer"] not in ANSWER_MODES:
                raise StudyConfigError("answer", f"must be one of {', '.join(ANSWER_MODES)}")
            config = replace(config, answer=raw["answer"])
        for key in ("grounding", "grounding_required", "original_values"):
            if key in raw:
                if not isinstance(raw[key], bool):
                    raise StudyConfigError(key, "must be true or false")
                config = replace(config, **{key: raw[key]})
        if "grounding_tolerance_px" in raw:
            tol = raw["grounding_tolerance_px"]
            if not _tolerance_ok(tol):
                raise StudyConfigError(
                    "grounding_tolerance_px", "must be a number of pixels >= 0 (at most 10000)"
                )
            config = replace(config, grounding_tolerance_px=float(tol))
        if "grading" in raw:
            config = replace(config, grading=grading_settings(raw["grading"]))
        if "model_slices" in raw:
            if raw["model_slices"] not in MODEL_SLICES:
                raise StudyConfigError("model_slices", f"must be one of {', '.join(MODEL_SLICES)}")
            config = replace(config, model_slices=raw["model_slices"])
        if "report_prompt" in raw:
            config = replace(config, report_prompt=_report_prompt(raw["report_prompt"]))
        if "aid" in raw:
            config = replace(config, aid=aid_settings(raw["aid"]))
        return config

    @classmethod
    def from_stored(cls, raw: dict[str, Any], *, title: str) -> StudyConfig:
        """Lenient: each missing or malformed value takes its default, so a reader's exam
        never breaks. (Grading reads with ``study_settings(..., strict_grading=True)``,
        which raises: an adjudicator must see a broken setup.)"""
        config = cls(title=str(raw.get("title") or title))
        consent = raw.get("consent")
        count = raw.get("practice_count")
        labels = raw.get("likert_labels")
        windows = raw.get("default_windows")
        try:
            likert = _labels(labels) if labels is not None else DEFAULT_LIKERT
        except StudyConfigError:
            likert = DEFAULT_LIKERT
        try:
            fields_ = report_fields(raw.get("report_fields"))
        except StudyConfigError:
            fields_ = ()
        try:
            grading = grading_settings(raw.get("grading"))
        except StudyConfigError:
            grading = GradingSettings()
        return replace(
            config,
            consent=consent.strip() if isinstance(consent, str) else "",
            practice_count=(
                count
                if isinstance(count, int) and not isinstance(count, bool) and count >= 0
                else None
            ),
            allow_revisions=raw.get("allow_revisions") is True,
            likert_labels=likert,
            report_fields=fields_,
            grading=grading,
            theme="light" if raw.get("theme") == "light" else "dark",
            answer="report" if raw.get("answer") == "report" else "diagnosis",
            grounding=raw.get("grounding") is True,
            original_values=raw.get("original_values") is True,
            grounding_required=raw.get("grounding_required") is not False,
            grounding_tolerance_px=(
                float(raw["grounding_tolerance_px"])
                if _tolerance_ok(raw.get("grounding_tolerance_px"))
                else 0.0
            ),
            report_prompt=_stored_report_prompt(raw.get("report_prompt")),
            aid=_stored_aid(raw.get("aid")),
            model_slices="per-slice" if raw.get("model_slices") == "per-slice" else "as-shown",
            default_windows=(
                (windows,)
                if isinstance(windows, str)
                else tuple(str(w) for w in windows if str(w))
                if isinstance(windows, list | tuple)
                else ()
            ),
        )


def stored_config(study: Study) -> dict[str, Any]:
    """The study's settings as stored (``Study.config_json``), for a plan that carries them."""
    data: dict[str, Any] = json.loads(study.config_json or "{}")
    return data


def study_settings(study: Study, *, strict_grading: bool = False) -> StudyConfig:
    """The study's settings: lenient (each malformed value its default) unless
    ``strict_grading``, where a malformed ``[grading]`` table or ``report_fields`` raises
    ``StudyConfigError`` naming the key (grading must not run on a broken setup)."""
    raw = stored_config(study)
    config = StudyConfig.from_stored(raw, title=study.title)
    if strict_grading:
        config = replace(
            config,
            grading=grading_settings(raw.get("grading")),
            report_fields=report_fields(raw.get("report_fields")),
        )
    return config


def aid_settings(value: Any) -> AidSettings:
    """The ``aid`` table, strictly: each bad value is refused, naming ``aid.<key>``.

    Only the shape is checked here: the run is made after the study (``run-model``), so
    that it is a model run of this study on the same pixels is checked when readers
    reach the aided step (``reader_app.exam.aid.aid_run``)."""
    if not isinstance(value, dict):
        raise StudyConfigError("aid", "must be a table: { run = ..., design = ..., show = [...] }")
    unknown = sorted(set(value) - set(AID_KEYS))
    if unknown:
        raise StudyConfigError(f"aid.{unknown[0]}", f"unknown key; known: {', '.join(AID_KEYS)}")
    run = value.get("run")
    if not isinstance(run, str) or not run.strip() or len(run.strip()) > 200:
        raise StudyConfigError("aid.run", "must name the model run shown (1-200 characters)")
    design = value.get("design", "sequential")
    if design not in AID_DESIGNS:
        raise StudyConfigError("aid.design", f"must be one of {', '.join(AID_DESIGNS)}")
    show = value.get("show", ["diagnosis", "confidence"])
    if (
        not isinstance(show, list)
        or not show
        or not all(isinstance(s, str) and s in AID_SHOW for s in show)
    ):
        raise StudyConfigError(
            "aid.show", f"must be a non-empty list of {', '.join(AID_SHOW)} (never the key)"
        )
    numbers: dict[str, int] = {}
    for key, limit in (("washout_days", MAX_WASHOUT_DAYS), ("seed", 2**31 - 1)):
        if key not in value:
            continue
        if design != "crossover":
            raise StudyConfigError(f"aid.{key}", "is a crossover setting (design = crossover)")
        number = value[key]
        if isinstance(number, bool) or not isinstance(number, int) or not 0 <= number <= limit:
            raise StudyConfigError(f"aid.{key}", f"must be a whole number from 0 to {limit}")
        numbers[key] = number
    if design == "crossover" and "washout_days" not in value:
        raise StudyConfigError("aid.washout_days", "a crossover needs its washout in days")
    return AidSettings(
        run=run.strip(),
        design=design,
        show=tuple(dict.fromkeys(show)),
        washout_days=numbers.get("washout_days", 0),
        seed=numbers.get("seed", 0),
    )


def _stored_aid(value: Any) -> AidSettings | None:
    """The stored ``aid`` (``to_json`` writes every field; a sequential one has washout
    and seed 0), or None where it is absent or no longer valid."""
    if not isinstance(value, dict):
        return None
    keys = AID_KEYS if value.get("design") == "crossover" else ("run", "design", "show")
    try:
        return aid_settings({k: value[k] for k in keys if k in value})
    except StudyConfigError:
        return None


def _report_prompt(value: Any) -> str:
    prompts = [p for p in builtin_prompts() if p.startswith("bench2")]
    if not isinstance(value, str) or value not in prompts:
        raise StudyConfigError(
            "report_prompt", f"must name a built-in report prompt: {', '.join(prompts)}"
        )
    return value


def _stored_report_prompt(value: Any) -> str | None:
    try:
        return _report_prompt(value) if value is not None else None
    except StudyConfigError:
        return None


def _tolerance_ok(value: Any) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and 0 <= value <= 10_000
    )


def _labels(value: Any) -> tuple[str, str, str, str, str]:
    if isinstance(value, list | tuple) and len(value) == 5:
        labels = [v.strip() if isinstance(v, str) else "" for v in value]
        if all(labels) and not any(text_problem(x, max_chars=MAX_LABEL) for x in labels):
            return (labels[0], labels[1], labels[2], labels[3], labels[4])
    raise StudyConfigError("likert_labels", "must be a list of 5 non-empty strings (anchors 0..4)")


def report_fields(value: Any) -> tuple[str, ...]:
    """true: both free-text fields; a list picks some (a single name is a list of one)."""
    if value in (None, False, "", []):
        return ()
    if value is True:
        return REPORT_FIELDS
    items = [value] if isinstance(value, str) else value
    if isinstance(items, list | tuple):
        fields = {str(v).strip().lower() for v in items}
        if fields <= set(REPORT_FIELDS):
            return tuple(f for f in REPORT_FIELDS if f in fields)
    raise StudyConfigError(
        "report_fields", f"must be true, false or a list of {', '.join(REPORT_FIELDS)}"
    )


def grading_settings(value: Any) -> GradingSettings:
    """The ``[grading]`` table (strict; also used on stored configs)."""
    if value is None:
        return GradingSettings()
    if not isinstance(value, dict):
        raise StudyConfigError("grading", "must be a table")
    unknown = sorted(set(value) - set(GRADING_KEYS))
    if unknown:
        raise StudyConfigError(
            f"grading.{unknown[0]}", f"unknown; known: {', '.join(GRADING_KEYS)}"
        )
    mode = str(value.get("adjudication", "single")).lower()
    if mode not in ADJUDICATION_MODES:
        raise StudyConfigError("grading.adjudication", f"must be one of {ADJUDICATION_MODES}")
    raw_judges = value.get("judges") or []
    if not isinstance(raw_judges, list):
        raise StudyConfigError("grading.judges", "must be a list of tables ([[grading.judges]])")
    judges = tuple(_judge(i, raw) for i, raw in enumerate(raw_judges))
    if len(judges) > MAX_JUDGES:
        raise StudyConfigError("grading.judges", f"one or two judges, not {len(judges)}")
    if len(set(judges)) < len(judges):
        raise StudyConfigError("grading.judges", "the same judge twice would agree with itself")
    gap = value.get("rubric_gap", DEFAULT_RUBRIC_GAP)
    if isinstance(gap, bool) or not isinstance(gap, int) or not 0 <= gap <= 40:
        raise StudyConfigError("grading.rubric_gap", "must be a whole number 0..40")
    return GradingSettings(adjudication=mode, judges=judges, rubric_gap=gap)


def _judge(i: int, raw: Any) -> str:
    """A ``[[grading.judges]]`` table ``{name = "judge-a"}`` (or the bare name)."""
    key = f"grading.judges[{i}]"
    if isinstance(raw, dict):
        for field_, why in SERVER_JUDGE_KEYS.items():
            if field_ in raw:
                raise StudyConfigError(
                    f"{key}.{field_}",
                    f"{why}: judges, their endpoints and keys are the server's "
                    "(READERSTUDY_JUDGES); a study picks one by name",
                )
        unknown = sorted(set(raw) - set(JUDGE_KEYS))
        if unknown:
            raise StudyConfigError(
                f"{key}.{unknown[0]}",
                "unknown; a study names a judge only (name = ...): its model and request "
                "settings are the server's (READERSTUDY_JUDGES)",
            )
        raw = raw.get("name")
    if not isinstance(raw, str) or not JUDGE_NAME.fullmatch(raw):
        raise StudyConfigError(f"{key}.name", "needs the name of a judge the server defines")
    return raw


__all__ = [
    "ANSWER_MODES",
    "DEFAULT_LIKERT",
    "GradingSettings",
    "StudyConfig",
    "StudyConfigError",
    "grading_settings",
    "report_fields",
    "stored_config",
    "study_settings",
]
