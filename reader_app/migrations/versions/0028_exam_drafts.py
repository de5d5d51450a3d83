"""exam drafts: one unsent answer per (reader, case), kept by the server

Revision ID: 0028_exam_drafts
Revises: 0027_audit_images
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from reader_app.models import UTCDateTime

revision: str = "0028_exam_drafts"
down_revision: str | Sequence[str] | None = "0027_audit_images"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "exam_drafts",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("reader_id", sa.Integer(), sa.ForeignKey("readers.id"), nullable=False),
        sa.Column("case_id", sa.Integer(), sa.ForeignKey("cases.id"), nullable=False),
        sa.Column("diagnosis", sa.Text(), nullable=True),
        sa.Column("findings", sa.Text(), nullable=True),
        sa.Column("impression", sa.Text(), nullable=True),
        sa.Column("likert", sa.Integer(), nullable=True),
        sa.Column("idk", sa.Boolean(), nullable=False),
        sa.Column("no_focal_finding", sa.Boolean(), nullable=False),
        sa.Column("marker_json", sa.Text(), nullable=True),
        sa.Column("interaction_json", sa.Text(), nullable=True),
        sa.Column("active_ms", sa.Integer(), nullable=True),
        sa.Column("edited_at_ms", sa.BigInteger(), nullable=True),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
        sa.UniqueConstraint("reader_id", "case_id", name="uq_exam_draft"),
        sa.CheckConstraint(
            "likert is null or (likert >= 0 and likert <= 4)", name="ck_draft_likert"
        ),
    )


def downgrade() -> None:
    op.drop_table("exam_drafts")
