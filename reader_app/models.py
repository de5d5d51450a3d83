"""SQLModel tables. The schema itself is created by Alembic (reader_app/migrations).

Human readers and model runs answer into one ``responses`` table: from there on
nothing knows or cares whether a row came from a person or a model.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    CheckConstraint,
    Column,
    DateTime,
    Index,
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


class AnswerKey(SQLModel, table=True):
    __tablename__ = "answer_keys"

    id: int | None = Field(default=None, primary_key=True)
    case_id: int = Field(foreign_key="cases.id", unique=True)
    diagnosis: str = Field(sa_column=Column(Text, nullable=False))
    synonyms: str = Field(
        default="", sa_column=Column(Text, nullable=False, default="")
    )  # '|'-separated
    updated_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False)
    )


class Reader(SQLModel, table=True):
    __tablename__ = "readers"

    id: int | None = Field(default=None, primary_key=True)
    study_id: int = Field(foreign_key="studies.id", index=True)
    code: str = Field(max_length=64)
    role: str = Field(default="reader", max_length=16)
    group_name: str | None = Field(default=None, max_length=64)  # seniority
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
    source: str = Field(default="runner", max_length=16)  # runner | import
    started_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False)
    )
    finished_at: datetime | None = Field(
        default=None, sa_column=Column(UTCDateTime(), nullable=True)
    )
    totals_json: str = Field(default="{}", sa_column=Column(Text, nullable=False, default="{}"))

    __table_args__ = (UniqueConstraint("study_id", "name", name="uq_run_name"),)


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

    __table_args__ = (
        UniqueConstraint("reader_id", "case_id", name="uq_response_reader_case"),
        UniqueConstraint("model_run_id", "case_id", name="uq_response_run_case"),
        CheckConstraint("likert is null or (likert >= 0 and likert <= 4)", name="ck_likert_range"),
        CheckConstraint("(not idk) or (diagnosis is null and likert is null)", name="ck_idk_empty"),
        CheckConstraint("(reader_id is null) <> (model_run_id is null)", name="ck_one_responder"),
        CheckConstraint(
            "status in ('answered','idk','invalid','failure')", name="ck_response_status"
        ),
        Index("ix_responses_reader", "reader_id"),
        Index("ix_responses_run", "model_run_id"),
    )


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
