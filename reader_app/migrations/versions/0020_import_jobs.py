"""import_jobs: study set-up imports started from the browser, with their progress

Revision ID: 0020_import_jobs
Revises: 0017_report_answers
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import reader_app.models

revision: str = "0020_import_jobs"
down_revision: str | Sequence[str] | None = "0017_report_answers"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UTC = reader_app.models.UTCDateTime


def upgrade() -> None:
    op.create_table(
        "import_jobs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("actor", sa.String(length=200), nullable=False),
        sa.Column("actor_study_id", sa.Integer(), nullable=False),
        sa.Column("target_slug", sa.String(length=64), nullable=False),
        sa.Column("mode", sa.String(length=8), nullable=False),
        sa.Column("source_name", sa.String(length=255), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("cases_total", sa.Integer(), nullable=False),
        sa.Column("cases_done", sa.Integer(), nullable=False),
        sa.Column("images_done", sa.Integer(), nullable=False),
        sa.Column("strips_done", sa.Integer(), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("report_text", sa.Text(), nullable=False),
        sa.Column("study_id", sa.Integer(), nullable=True),
        sa.Column("started_at", UTC(timezone=True), nullable=False),
        sa.Column("updated_at", UTC(timezone=True), nullable=False),
        sa.Column("finished_at", UTC(timezone=True), nullable=True),
        sa.CheckConstraint("state in ('running','done','failed')", name="ck_import_job_state"),
        sa.CheckConstraint("mode in ('new','add')", name="ck_import_job_mode"),
        sa.ForeignKeyConstraint(["actor_study_id"], ["studies.id"]),
        sa.ForeignKeyConstraint(["study_id"], ["studies.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_import_jobs_actor_study_id", "import_jobs", ["actor_study_id"])


def downgrade() -> None:
    op.drop_index("ix_import_jobs_actor_study_id", table_name="import_jobs")
    op.drop_table("import_jobs")
