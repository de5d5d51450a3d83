"""grading: answer-key history, adjudications, judge cache, rubric grades

Also makes the grade memory's core rule a database rule: at most one active
verdict per (case, normalized answer), and likewise one active adjudicator
decision per (item, adjudicator) and one active rubric grade per response.
PostgreSQL indexes the md5 of the answer text (btree entries have a size cap).

Revision ID: 0003_grading
Revises: 0001
Create Date: 2026-11-30 05:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import reader_app.models

revision: str = "0003_grading"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UTC = reader_app.models.UTCDateTime


def _partial_unique(name: str, table: str, columns: list[str], text_column: str | None) -> None:
    if op.get_bind().dialect.name == "postgresql" and text_column:
        columns = [f"md5({c})" if c == text_column else c for c in columns]
    op.execute(f"CREATE UNIQUE INDEX {name} ON {table} ({', '.join(columns)}) WHERE active")


def upgrade() -> None:
    op.create_table(
        "answer_key_history",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("case_id", sa.Integer(), nullable=False),
        sa.Column("diagnosis", sa.Text(), nullable=False),
        sa.Column("synonyms", sa.Text(), nullable=False),
        sa.Column("valid_from", UTC(timezone=True), nullable=False),
        sa.Column("replaced_at", UTC(timezone=True), nullable=False),
        sa.Column("replaced_by", sa.String(length=200), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(["case_id"], ["cases.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_answer_key_history_case_id", "answer_key_history", ["case_id"])

    op.create_table(
        "adjudications",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("case_id", sa.Integer(), nullable=False),
        sa.Column("normalized_answer", sa.Text(), nullable=False),
        sa.Column("adjudicator_id", sa.Integer(), nullable=False),
        sa.Column("round", sa.String(length=8), nullable=False),
        sa.Column("correct", sa.Integer(), nullable=False),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("add_synonym", sa.Boolean(), nullable=False),
        sa.Column("decided_at", UTC(timezone=True), nullable=False),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.CheckConstraint("correct in (0, 1)", name="ck_adjudication_correct"),
        sa.CheckConstraint("round in ('first','third')", name="ck_adjudication_round"),
        sa.ForeignKeyConstraint(["case_id"], ["cases.id"]),
        sa.ForeignKeyConstraint(["adjudicator_id"], ["readers.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_adjudications_case_id", "adjudications", ["case_id"])
    op.create_index("ix_adjudications_adjudicator_id", "adjudications", ["adjudicator_id"])
    op.create_index(
        "ix_adjudication_item", "adjudications", ["case_id", "normalized_answer", "active"]
    )

    op.create_table(
        "judge_calls",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("cache_key", sa.String(length=64), nullable=False),
        sa.Column("endpoint_host", sa.String(length=255), nullable=False),
        sa.Column("model", sa.String(length=200), nullable=False),
        sa.Column("prompt_version", sa.String(length=32), nullable=False),
        sa.Column("normalized_answer", sa.Text(), nullable=False),
        sa.Column("correct", sa.Integer(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("reply", sa.Text(), nullable=False),
        sa.Column("created_at", UTC(timezone=True), nullable=False),
        sa.CheckConstraint("correct in (0, 1)", name="ck_judge_correct"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("cache_key"),
    )

    op.create_table(
        "rubric_grades",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("response_id", sa.Integer(), nullable=False),
        sa.Column("adjudicator_id", sa.Integer(), nullable=False),
        sa.Column("score", sa.Integer(), nullable=False),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("graded_at", UTC(timezone=True), nullable=False),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.CheckConstraint("score >= 0 and score <= 40", name="ck_rubric_score"),
        sa.ForeignKeyConstraint(["response_id"], ["responses.id"]),
        sa.ForeignKeyConstraint(["adjudicator_id"], ["readers.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_rubric_grades_response_id", "rubric_grades", ["response_id"])

    _partial_unique(
        "uq_verdict_active", "verdicts", ["case_id", "normalized_answer"], "normalized_answer"
    )
    _partial_unique(
        "uq_adjudication_active",
        "adjudications",
        ["case_id", "normalized_answer", "adjudicator_id"],
        "normalized_answer",
    )
    _partial_unique("uq_rubric_active", "rubric_grades", ["response_id"], None)


def downgrade() -> None:
    op.execute("DROP INDEX IF EXISTS uq_verdict_active")
    op.drop_table("rubric_grades")
    op.drop_table("judge_calls")
    op.drop_table("adjudications")
    op.drop_table("answer_key_history")
