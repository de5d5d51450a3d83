"""audit images: the causal grounding audit's arms and the images they sent

Revision ID: 0027_audit_images
Revises: 0026_run_cohort
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from reader_app.models import UTCDateTime

revision: str = "0027_audit_images"
down_revision: str | Sequence[str] | None = "0026_run_cohort"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ARMS = "'original','occlude_relevant','occlude_irrelevant','swap','text_only'"


def upgrade() -> None:
    op.create_table(
        "audit_arms",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("study_id", sa.Integer(), sa.ForeignKey("studies.id"), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("arm", sa.String(length=32), nullable=False),
        sa.Column("model_run_id", sa.Integer(), sa.ForeignKey("model_runs.id"), nullable=False),
        sa.Column("params_json", sa.Text(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.UniqueConstraint("study_id", "name", "arm", name="uq_audit_arm"),
        sa.CheckConstraint(f"arm in ({ARMS})", name="ck_audit_arm"),
    )
    op.create_index("ix_audit_arms_study_id", "audit_arms", ["study_id"])
    op.create_table(
        "audit_images",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("study_id", sa.Integer(), sa.ForeignKey("studies.id"), nullable=False),
        sa.Column("case_id", sa.Integer(), sa.ForeignKey("cases.id"), nullable=False),
        sa.Column("arm", sa.String(length=32), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("source_sha256", sa.String(length=64), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("region", sa.Text(), nullable=True),
        sa.Column("seed", sa.Integer(), nullable=True),
        sa.Column("fill", sa.String(length=16), nullable=True),
        sa.Column("partner_case_id", sa.Integer(), sa.ForeignKey("cases.id"), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.UniqueConstraint("case_id", "arm", "position", "sha256", name="uq_audit_image"),
    )
    op.create_index("ix_audit_images_study_id", "audit_images", ["study_id"])
    op.create_index("ix_audit_images_case_id", "audit_images", ["case_id"])
    op.create_index("ix_audit_images_sha256", "audit_images", ["sha256"])


def downgrade() -> None:
    op.drop_table("audit_images")
    op.drop_table("audit_arms")
