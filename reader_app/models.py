"""SQLModel tables. The schema itself is created by Alembic (reader_app/migrations).

Human readers and model runs answer into one ``responses`` table: from there on
nothing knows or cares whether a row came from a person or a model.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    Column,
    DateTime,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
)
from sqlmodel import Field, SQLModel


def utcnow() -> datetime:
    return datetime.now(UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """Timezone-aware UTC datetimes on every backend (SQLite drops the zone)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime; use datetime.now(UTC)")
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


ROLES = ("reader", "coordinator", "adjudicator", "analyst")
CASE_KINDS = ("spot", "strip")
STUDY_STATES = ("open", "locked", "closed")
RESPONSE_STATUSES = ("answered", "idk", "invalid", "failure")


class Study(SQLModel, table=True):
    __tablename__ = "studies"

    id: int | None = Field(default=None, primary_key=True)
    slug: str = Field(index=True, unique=True, max_length=64)
    title: str = Field(max_length=200)
    state: str = Field(default="open", max_length=16)
    # study.toml contents (consent, practice count, revisions, Likert wording, report fields)
    config_json: str = Field(default="{}", sa_column=Column(Text, nullable=False, default="{}"))
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False)
    )

    __table_args__ = (
        CheckConstraint("state in ('open','locked','closed')", name="ck_study_state"),
    )


class Case(SQLModel, table=True):
    __tablename__ = "cases"

    id: int | None = Field(default=None, primary_key=True)
    study_id: int = Field(foreign_key="studies.id", index=True)
    # what readers and URLs see: random, reveals nothing about source or answer
    public_id: str = Field(unique=True, max_length=32)
    # the manifest's case id: coordinator-only, never rendered to a reader
    source_id: str = Field(max_length=200)
    kind: str = Field(max_length=8)
    position: int
    practice: bool = False
    history: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    modality: str | None = Field(default=None, max_length=32)
    region: str | None = Field(default=None, max_length=64)
    reviewed_by: str | None = Field(default=None, max_length=200)

    __table_args__ = (
        UniqueConstraint("study_id", "source_id", name="uq_case_source"),
        # and uq_case_source_ci on (study_id, lower(source_id)), written by hand in
        # migration 0025_import_safety: "Dup-One" and "dup-one" cannot both commit
        CheckConstraint("kind in ('spot','strip')", name="ck_case_kind"),
    )


class CaseImage(SQLModel, table=True):
    __tablename__ = "case_images"

    id: int | None = Field(default=None, primary_key=True)
    case_id: int = Field(foreign_key="cases.id", index=True)
    sha256: str = Field(max_length=64, index=True)
    label: str = Field(default="", max_length=200)
    seq: int = 0
    window: str | None = Field(default=None, max_length=32)
    # 'image' (spot), 'slice' or 'montage' (strip)
    role: str = Field(default="image", max_length=16)
    width: int = 0
    height: int = 0
    # millimetres per stored pixel across (x) and down (y), when the source says
    # (DICOM PixelSpacing, a NIfTI's geometry); None: the viewer measures in pixels
    pixel_mm_x: float | None = None
    pixel_mm_y: float | None = None
    # the original values of the same pixels (study option original_values; an asset like
    # the PNG, never sent to a model): render.encode_values
    values_sha256: str | None = Field(default=None, max_length=64)


class AnswerKey(SQLModel, table=True):
    __tablename__ = "answer_keys"

    id: int | None = Field(default=None, primary_key=True)
    case_id: int = Field(foreign_key="cases.id", unique=True)
    diagnosis: str = Field(sa_column=Column(Text, nullable=False))
    synonyms: str = Field(
        default="", sa_column=Column(Text, nullable=False, default="")
    )  # '|'-separated
    # grounding (SCORING.md section 8), ground truth like the diagnosis: never served.
    # Boxes as scoring.regions.format_region writes them, in stored-image pixels; a
    # mask as reader_app.grounding.store.encode_mask bytes (same pixels, slices first).
    reference_region: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    reference_mask: bytes | None = Field(default=None, sa_column=Column(LargeBinary, nullable=True))
    updated_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False)
    )


class Reader(SQLModel, table=True):
    __tablename__ = "readers"

    id: int | None = Field(default=None, primary_key=True)
    study_id: int = Field(foreign_key="studies.id", index=True)
    code: str = Field(max_length=64)
    role: str = Field(default="reader", max_length=16)
    # seniority as given at invite: what scoring and exports pool by (the profile does not
    # replace it; an invite without a group takes the profile's answer)
    group_name: str | None = Field(default=None, max_length=64)
    # the group the reader's own profile answer gives, kept beside it (migration 0029)
    profile_group: str | None = Field(default=None, max_length=64)
    email: str | None = Field(default=None, max_length=254)
    # sha256 of the sign-in token; the token itself is never stored
    token_hash: str | None = Field(default=None, unique=True, max_length=64)
    token_revoked_at: datetime | None = Field(
        default=None, sa_column=Column(UTCDateTime(), nullable=True)
    )
    profile_json: str = Field(default="{}", sa_column=Column(Text, nullable=False, default="{}"))
    consented_at: datetime | None = Field(
        default=None, sa_column=Column(UTCDateTime(), nullable=True)
    )
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False)
    )
    last_seen_at: datetime | None = Field(
        default=None, sa_column=Column(UTCDateTime(), nullable=True)
    )

    __table_args__ = (
        UniqueConstraint("study_id", "code", name="uq_reader_code"),
        CheckConstraint(
            "role in ('reader','coordinator','adjudicator','analyst')", name="ck_reader_role"
        ),
    )


class ReaderOrder(SQLModel, table=True):
    """One row per (reader, slot): the reader's case order, drawn once from ``seed``."""

    __tablename__ = "reader_orders"

    reader_id: int = Field(foreign_key="readers.id", primary_key=True)
    slot: int = Field(primary_key=True)
    case_id: int = Field(foreign_key="cases.id")
    seed: int

    __table_args__ = (UniqueConstraint("reader_id", "case_id", name="uq_order_case"),)


class ModelRun(SQLModel, table=True):
    __tablename__ = "model_runs"

    id: int | None = Field(default=None, primary_key=True)
    study_id: int = Field(foreign_key="studies.id", index=True)
    name: str = Field(max_length=200)
    model: str = Field(max_length=200)
    group_name: str | None = Field(default=None, max_length=64)  # e.g. provider
    endpoint_host: str | None = Field(default=None, max_length=255)
    params_json: str = Field(default="{}", sa_column=Column(Text, nullable=False, default="{}"))
    prompt_version: str | None = Field(default=None, max_length=64)
    # a text-only ablation: the same prompt and history, no image sent
    no_images: bool = False
    source: str = Field(default="runner", max_length=16)  # runner | import
    started_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False)
    )
    finished_at: datetime | None = Field(
        default=None, sa_column=Column(UTCDateTime(), nullable=True)
    )
    totals_json: str = Field(default="{}", sa_column=Column(Text, nullable=False, default="{}"))
    # runner sessions so far, incremented by one UPDATE (never read-modify-write)
    sessions: int = Field(
        default=0, sa_column=Column(Integer, nullable=False, default=0, server_default="0")
    )
    # free text for comparing families of models: frontier, open-weight, medical, ...
    # (RadLE's access/domain on import); the leaderboard filters and pools by it
    cohort: str | None = Field(default=None, max_length=64)
    # repeat runs (`run-model --repeats N`): the group they share (the base run name) and
    # this run's repeat index 1..N; both None for a single run
    run_group: str | None = Field(default=None, max_length=200)
    repeat_index: int | None = None

    __table_args__ = (UniqueConstraint("study_id", "name", name="uq_run_name"),)


class RunLease(SQLModel, table=True):
    """A runner process's claim on one (run, case) while it asks the model.

    Inserted before the request, deleted with the answer's commit; a process
    killed mid-request leaves it until ``expires_at``, after which another
    runner may take it over (one conditional UPDATE). Live holders renew it.
    """

    __tablename__ = "run_leases"

    id: int | None = Field(default=None, primary_key=True)
    model_run_id: int = Field(foreign_key="model_runs.id")
    case_id: int = Field(foreign_key="cases.id")
    holder: str = Field(max_length=120)
    expires_at: datetime = Field(sa_column=Column(UTCDateTime(), nullable=False))

    __table_args__ = (UniqueConstraint("model_run_id", "case_id", name="uq_run_lease_case"),)


class Response(SQLModel, table=True):
    __tablename__ = "responses"

    id: int | None = Field(default=None, primary_key=True)
    study_id: int = Field(foreign_key="studies.id", index=True)
    case_id: int = Field(foreign_key="cases.id", index=True)
    reader_id: int | None = Field(default=None, foreign_key="readers.id")
    model_run_id: int | None = Field(default=None, foreign_key="model_runs.id")
    diagnosis: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    likert: int | None = None
    idk: bool = False
    status: str = Field(max_length=16)
    shown_at: datetime | None = Field(default=None, sa_column=Column(UTCDateTime(), nullable=True))
    # the first time this reader was shown the case, kept across reloads (case_shown)
    first_shown_at: datetime | None = Field(
        default=None, sa_column=Column(UTCDateTime(), nullable=True)
    )
    # time the case page was visible to the reader: pauses and hidden tabs excluded
    active_ms: int | None = None
    submitted_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False)
    )
    image_sha256: str = Field(
        default="", sa_column=Column(Text, nullable=False, default="")
    )  # ','-joined
    practice: bool = False
    findings: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    impression: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    raw_reply: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    meta_json: str = Field(default="{}", sa_column=Column(Text, nullable=False, default="{}"))
    revision: int = 0
    # what the reader did in the viewer (slices, windows, zoom, fullscreen): JSON, or
    # NULL when the browser reported nothing (model runs, scripts, old rows)
    interaction_json: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    # the responder's location (reader_app.grounding.store): a point in stored-image pixels,
    # "no focal finding", or NULL when none was given
    location_json: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    # a model's reasoning text (message.reasoning_content / reasoning): stored and
    # exported for analysts, never shown to a reader; NULL for humans and most models
    reasoning_text: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    # the AI-aided arm (SCORING.md section 10, migration 0032): "unaided" (every answer
    # before the model's is shown, and every model run's) or "aided" (the reader's final
    # answer with the model's beside it); aid_run_id names the model run shown
    arm: str = Field(
        default="unaided",
        sa_column=Column(String(8), nullable=False, default="unaided", server_default="unaided"),
    )
    aid_run_id: int | None = Field(default=None, foreign_key="model_runs.id")

    __table_args__ = (
        UniqueConstraint("reader_id", "case_id", "arm", name="uq_response_reader_case_arm"),
        UniqueConstraint("model_run_id", "case_id", name="uq_response_run_case"),
        CheckConstraint("likert is null or (likert >= 0 and likert <= 4)", name="ck_likert_range"),
        CheckConstraint("(not idk) or (diagnosis is null and likert is null)", name="ck_idk_empty"),
        CheckConstraint("(reader_id is null) <> (model_run_id is null)", name="ck_one_responder"),
        CheckConstraint(
            "status in ('answered','idk','invalid','failure')", name="ck_response_status"
        ),
        CheckConstraint("arm in ('unaided','aided')", name="ck_response_arm"),
        CheckConstraint(
            "arm = 'unaided' or (reader_id is not null and aid_run_id is not null)",
            name="ck_response_aided",
        ),
        Index("ix_responses_reader", "reader_id"),
        Index("ix_responses_run", "model_run_id"),
    )


class AidCrossover(SQLModel, table=True):
    """A reader's place in a crossover aided study (migration 0032): the group drawn for
    them from ``seed`` (``A`` reads the first half of the cases aided, ``B`` the second),
    recorded once so the split never changes."""

    __tablename__ = "aid_crossover"

    reader_id: int = Field(foreign_key="readers.id", primary_key=True)
    study_id: int = Field(foreign_key="studies.id", index=True)
    group_name: str = Field(max_length=1)
    seed: int
    assigned_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False)
    )

    __table_args__ = (CheckConstraint("group_name in ('A','B')", name="ck_aid_crossover_group"),)


class CaseShown(SQLModel, table=True):
    """When a reader first saw a case: written once, so a reload cannot restart the clock."""

    __tablename__ = "case_shown"

    reader_id: int = Field(foreign_key="readers.id", primary_key=True)
    case_id: int = Field(foreign_key="cases.id", primary_key=True)
    first_shown_at: datetime = Field(sa_column=Column(UTCDateTime(), nullable=False))


class ResponseRevision(SQLModel, table=True):
    """Earlier answers, kept when a study allows revisions."""

    __tablename__ = "response_revisions"

    id: int | None = Field(default=None, primary_key=True)
    response_id: int = Field(foreign_key="responses.id", index=True)
    diagnosis: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    likert: int | None = None
    idk: bool = False
    status: str = Field(max_length=16)
    submitted_at: datetime = Field(sa_column=Column(UTCDateTime(), nullable=False))
    replaced_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False)
    )
    # a model run's replaced technical failure keeps its raw reply and error (meta)
    raw_reply: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    meta_json: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    location_json: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    # the replaced answer's own visible time and viewer record (a reader's revision)
    active_ms: int | None = None
    interaction_json: str | None = Field(default=None, sa_column=Column(Text, nullable=True))


class Verdict(SQLModel, table=True):
    """Grade memory: one verdict per (case, normalized answer), shared by humans and models."""

    __tablename__ = "verdicts"

    id: int | None = Field(default=None, primary_key=True)
    case_id: int = Field(foreign_key="cases.id", index=True)
    normalized_answer: str = Field(sa_column=Column(Text, nullable=False))
    correct: int
    source: str = Field(max_length=16)  # key | adjudicator | judge
    decided_by: str | None = Field(default=None, max_length=200)
    decided_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False)
    )
    note: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    active: bool = True  # history is kept: a changed verdict deactivates the old row

    __table_args__ = (
        CheckConstraint("correct in (0, 1)", name="ck_verdict_correct"),
        Index("ix_verdict_lookup", "case_id", "normalized_answer", "active"),
    )


class AuditEvent(SQLModel, table=True):
    """Append-only; database triggers refuse UPDATE and DELETE."""

    __tablename__ = "audit_events"

    id: int | None = Field(default=None, primary_key=True)
    at: datetime = Field(default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False))
    study_id: int | None = Field(default=None, foreign_key="studies.id", index=True)
    actor: str = Field(max_length=200)
    action: str = Field(max_length=64)
    detail_json: str = Field(default="{}", sa_column=Column(Text, nullable=False, default="{}"))


IMPORT_JOB_STATES = ("running", "done", "failed")


class ImportJob(SQLModel, table=True):
    """A study set-up import started from the browser; its progress survives a page reload.

    The import runs in a server-side thread (reader_app.study_setup.jobs), which
    writes its progress here; the page only reads this row.
    """

    __tablename__ = "import_jobs"

    id: int | None = Field(default=None, primary_key=True)
    actor: str = Field(max_length=200)  # the coordinator's code
    actor_study_id: int = Field(foreign_key="studies.id", index=True)  # where they signed in
    target_slug: str = Field(max_length=64)
    mode: str = Field(max_length=8)  # new | add
    # "a ZIP upload" or "a server folder": never its name (it may name a patient)
    source_name: str = Field(max_length=255)
    state: str = Field(default="running", max_length=16)
    cases_total: int = 0
    cases_done: int = 0
    images_done: int = 0
    strips_done: int = 0
    message: str = Field(default="", sa_column=Column(Text, nullable=False, default=""))
    report_text: str = Field(default="", sa_column=Column(Text, nullable=False, default=""))
    study_id: int | None = Field(default=None, foreign_key="studies.id")
    started_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False)
    )
    updated_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False)
    )
    finished_at: datetime | None = Field(
        default=None, sa_column=Column(UTCDateTime(), nullable=True)
    )
    # its temporary folder under <data dir>/.setup (a random "import-XXXX"): the sweep
    # removes it when the job is found interrupted (migration 0025_import_safety)
    workspace: str | None = Field(default=None, max_length=64)

    __table_args__ = (
        CheckConstraint(
            "state in ('running','done','failed','interrupted')", name="ck_import_job_state"
        ),
        CheckConstraint("mode in ('new','add')", name="ck_import_job_mode"),
    )


# Grading (migration 0003_grading). The grade memory itself is ``Verdict``;
# these tables hold what leads to a verdict (adjudicator decisions, judge
# calls), the answer-key history and the 0-40 report rubric grades.


class AnswerKeyVersion(SQLModel, table=True):
    """An earlier answer key of a case, kept when a coordinator changes it."""

    __tablename__ = "answer_key_history"

    id: int | None = Field(default=None, primary_key=True)
    case_id: int = Field(foreign_key="cases.id", index=True)
    diagnosis: str = Field(sa_column=Column(Text, nullable=False))
    synonyms: str = Field(default="", sa_column=Column(Text, nullable=False, default=""))
    valid_from: datetime = Field(sa_column=Column(UTCDateTime(), nullable=False))
    replaced_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False)
    )
    replaced_by: str = Field(max_length=200)
    reason: str | None = Field(default=None, sa_column=Column(Text, nullable=True))


class Adjudication(SQLModel, table=True):
    """One adjudicator's decision on one item (case, normalized answer).

    ``round`` is ``first`` for the independent decisions and ``third`` for the
    tie-break after two first-round decisions disagree. ``active`` turns false
    when the item is reopened (e.g. its reference diagnosis changed).
    """

    __tablename__ = "adjudications"

    id: int | None = Field(default=None, primary_key=True)
    case_id: int = Field(foreign_key="cases.id", index=True)
    normalized_answer: str = Field(sa_column=Column(Text, nullable=False))
    adjudicator_id: int = Field(foreign_key="readers.id", index=True)
    round: str = Field(default="first", max_length=8)
    correct: int
    note: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    add_synonym: bool = False
    decided_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False)
    )
    active: bool = True

    __table_args__ = (
        CheckConstraint("correct in (0, 1)", name="ck_adjudication_correct"),
        CheckConstraint("round in ('first','third')", name="ck_adjudication_round"),
        Index("ix_adjudication_item", "case_id", "normalized_answer", "active"),
    )


class JudgeCall(SQLModel, table=True):
    """Cache of LLM-judge replies: one row per (endpoint, model, prompt, candidate)."""

    __tablename__ = "judge_calls"

    id: int | None = Field(default=None, primary_key=True)
    cache_key: str = Field(max_length=64, unique=True)
    endpoint_host: str = Field(max_length=255)
    model: str = Field(max_length=200)
    prompt_version: str = Field(max_length=32)
    normalized_answer: str = Field(sa_column=Column(Text, nullable=False))
    correct: int
    reason: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    reply: str = Field(sa_column=Column(Text, nullable=False))
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False)
    )

    __table_args__ = (CheckConstraint("correct in (0, 1)", name="ck_judge_correct"),)


class RubricGrade(SQLModel, table=True):
    """A 0-40 report-rubric grade (SCORING.md section 6) of one response."""

    __tablename__ = "rubric_grades"

    id: int | None = Field(default=None, primary_key=True)
    response_id: int = Field(foreign_key="responses.id", index=True)
    adjudicator_id: int = Field(foreign_key="readers.id")
    score: int
    note: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    graded_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False)
    )
    active: bool = True

    __table_args__ = (CheckConstraint("score >= 0 and score <= 40", name="ck_rubric_score"),)


# Report answer mode (migration 0017_report_answers). ``case_reports`` holds a
# case's answer mode and its reference report: grading and analysis read it;
# the exam reads the ``answer`` column alone, so a reference report never
# reaches a reader. ``rubric_judge_calls`` caches one judge's 0-40 score of
# one report text (keyed by prompt version, endpoint, model, reference and
# text: a human and a model with the same text share one call);
# ``rubric_judgements`` is the judges' joint result for one response under one
# prompt version.


class CaseReport(SQLModel, table=True):
    __tablename__ = "case_reports"

    id: int | None = Field(default=None, primary_key=True)
    case_id: int = Field(foreign_key="cases.id", unique=True)
    answer: str = Field(default="diagnosis", max_length=16)
    reference_findings: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    reference_impression: str | None = Field(default=None, sa_column=Column(Text, nullable=True))

    __table_args__ = (
        CheckConstraint("answer in ('diagnosis','report')", name="ck_case_report_answer"),
    )


class RubricJudgeCall(SQLModel, table=True):
    __tablename__ = "rubric_judge_calls"

    id: int | None = Field(default=None, primary_key=True)
    cache_key: str = Field(max_length=64, unique=True)
    endpoint_host: str = Field(max_length=255)
    model: str = Field(max_length=200)
    prompt_version: str = Field(max_length=64)
    score: int
    reason: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    reply: str = Field(sa_column=Column(Text, nullable=False))
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False)
    )
    fabrication: bool | None = None  # the judge found a fabricated finding (None: not asked)

    __table_args__ = (CheckConstraint("score >= 0 and score <= 40", name="ck_rubric_call_score"),)


class RubricJudgement(SQLModel, table=True):
    __tablename__ = "rubric_judgements"

    id: int | None = Field(default=None, primary_key=True)
    response_id: int = Field(foreign_key="responses.id", index=True)
    prompt_version: str = Field(max_length=64)
    judges: str = Field(max_length=500)  # "model@host+model@host"
    scores_json: str = Field(sa_column=Column(Text, nullable=False))  # a score or null per judge
    status: str = Field(max_length=16)  # agree | disagree | error
    score: int | None = None  # set when status is agree
    gap: int
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False)
    )
    active: bool = True
    fabrication: bool | None = None  # any judge found a fabricated finding (None: not asked)
    # a reason or null per judge, in the order of ``judges`` (None: judged before it was kept)
    reasons_json: str | None = Field(default=None, sa_column=Column(Text, nullable=True))

    __table_args__ = (
        CheckConstraint("status in ('agree','disagree','error')", name="ck_rubric_judgement"),
        CheckConstraint(
            "score is null or (score >= 0 and score <= 40)", name="ck_rubric_judgement_score"
        ),
    )


class AuditArm(SQLModel, table=True):
    """One arm of a causal grounding audit (SCORING.md section 9): which run holds its
    answers, and the intervention's parameters, so a second call reuses it or refuses."""

    __tablename__ = "audit_arms"

    id: int | None = Field(default=None, primary_key=True)
    study_id: int = Field(foreign_key="studies.id", index=True)
    name: str = Field(max_length=200)  # the audit's name (the runs' base name)
    arm: str = Field(max_length=32)
    model_run_id: int = Field(foreign_key="model_runs.id")
    params_json: str = Field(default="{}", sa_column=Column(Text, nullable=False, default="{}"))
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False)
    )

    __table_args__ = (
        UniqueConstraint("study_id", "name", "arm", name="uq_audit_arm"),
        CheckConstraint(
            "arm in ('original','occlude_relevant','occlude_irrelevant','swap','text_only')",
            name="ck_audit_arm",
        ),
    )


class AuditImage(SQLModel, table=True):
    """What one audit arm sent for one image of one case, and how it was made.

    ``sha256`` names the bytes sent: a derived image in the audit store
    (``grounding_audit.store``, never a reader's asset store), or for ``swap`` the
    partner case's stored image. Derived images are sent to models only.
    """

    __tablename__ = "audit_images"

    id: int | None = Field(default=None, primary_key=True)
    study_id: int = Field(foreign_key="studies.id", index=True)
    case_id: int = Field(foreign_key="cases.id", index=True)
    arm: str = Field(max_length=32)
    position: int  # the image's place among those sent for the case, from 0
    source_sha256: str = Field(max_length=64)  # the case's stored image it stands for
    sha256: str = Field(max_length=64, index=True)  # the bytes sent
    region: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    seed: int | None = None
    fill: str | None = Field(default=None, max_length=16)
    partner_case_id: int | None = Field(default=None, foreign_key="cases.id")
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False)
    )

    __table_args__ = (
        UniqueConstraint("case_id", "arm", "position", "sha256", name="uq_audit_image"),
    )


class ExamDraft(SQLModel, table=True):
    """A reader's unsent answer to one case, as the case panel last reported it
    (reader_app.exam.drafts): deleted in the transaction that stores the answer."""

    __tablename__ = "exam_drafts"

    id: int | None = Field(default=None, primary_key=True)
    reader_id: int = Field(foreign_key="readers.id")
    case_id: int = Field(foreign_key="cases.id")
    diagnosis: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    findings: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    impression: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    likert: int | None = None
    idk: bool = False
    no_focal_finding: bool = False
    marker_json: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    interaction_json: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    active_ms: int | None = None
    # the browser's clock at the last edit: the panel keeps the newer of this and its tab's copy
    edited_at_ms: int | None = Field(default=None, sa_column=Column(BigInteger, nullable=True))
    updated_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False)
    )

    __table_args__ = (
        UniqueConstraint("reader_id", "case_id", name="uq_exam_draft"),
        CheckConstraint("likert is null or (likert >= 0 and likert <= 4)", name="ck_draft_likert"),
    )
