"""report answers: case answer mode and reference reports, rubric judging

Revision ID: 0017_report_answers
Revises: 0016_viewer_interaction
Create Date: 2026-12-01 04:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import reader_app.models

revision: str = "0017_report_answers"
down_revision: str | Sequence[str] | None = "0016_viewer_interaction"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UTC = reader_app.models.UTCDateTime


def upgrade() -> None:
    op.create_table(
        "case_reports",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("case_id", sa.Integer(), nullable=False),
        sa.Column("answer", sa.String(length=16), nullable=False),
        sa.Column("reference_findings", sa.Text(), nullable=True),
        sa.Column("reference_impression", sa.Text(), nullable=True),
        sa.CheckConstraint("answer in ('diagnosis','report')", name="ck_case_report_answer"),
        sa.ForeignKeyConstraint(["case_id"], ["cases.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("case_id"),
    )
    op.create_table(
        "rubric_judge_calls",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("cache_key", sa.String(length=64), nullable=False),
        sa.Column("endpoint_host", sa.String(length=255), nullable=False),
        sa.Column("model", sa.String(length=200), nullable=False),
        sa.Column("prompt_version", sa.String(length=64), nullable=False),
        sa.Column("score", sa.Integer(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("reply", sa.Text(), nullable=False),
        sa.Column("created_at", UTC(timezone=True), nullable=False),
        sa.CheckConstraint("score >= 0 and score <= 40", name="ck_rubric_call_score"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("cache_key"),
    )
    op.create_table(
        "rubric_judgements",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("response_id", sa.Integer(), nullable=False),
        sa.Column("prompt_version", sa.String(length=64), nullable=False),
        sa.Column("judges", sa.String(length=500), nullable=False),
        sa.Column("scores_json", sa.Text(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("score", sa.Integer(), nullable=True),
        sa.Column("gap", sa.Integer(), nullable=False),
        sa.Column("created_at", UTC(timezone=True), nullable=False),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.CheckConstraint("status in ('agree','disagree','error')", name="ck_rubric_judgement"),
        sa.CheckConstraint(
            "score is null or (score >= 0 and score <= 40)", name="ck_rubric_judgement_score"
        ),
        sa.ForeignKeyConstraint(["response_id"], ["responses.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_rubric_judgements_response_id", "rubric_judgements", ["response_id"])


def downgrade() -> None:
    op.drop_index("ix_rubric_judgements_response_id", table_name="rubric_judgements")
    op.drop_table("rubric_judgements")
    op.drop_table("rubric_judge_calls")
    op.drop_table("case_reports")
