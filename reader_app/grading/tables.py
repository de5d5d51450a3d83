"""Tables of the grading feature (migration 0003_grading).

The grade memory itself is ``reader_app.models.Verdict``; these tables hold
what leads to a verdict (adjudicator decisions, judge calls), the answer-key
history and the 0-40 report rubric grades.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import CheckConstraint, Column, Index, Text
from sqlmodel import Field, SQLModel

from reader_app.models import UTCDateTime, utcnow


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
