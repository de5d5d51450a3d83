"""exam timing: first-shown time kept across reloads, active reading time per response

``case_shown`` holds one row per (reader, case) written the first time the case
is shown; ``responses.first_shown_at`` copies it at submit and
``responses.active_ms`` is the time the case page was visible (pauses and
hidden tabs excluded).

Revision ID: 0013_exam_timing
Revises: 0003_grading, 0005_audit_truncate
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import reader_app.models

revision: str = "0013_exam_timing"
# one head again: this revision also joins the two branches 0003 and 0005
down_revision: str | Sequence[str] | None = ("0003_grading", "0005_audit_truncate")
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UTC = reader_app.models.UTCDateTime


def upgrade() -> None:
    op.create_table(
        "case_shown",
        sa.Column("reader_id", sa.Integer(), nullable=False),
        sa.Column("case_id", sa.Integer(), nullable=False),
        sa.Column("first_shown_at", UTC(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["case_id"], ["cases.id"]),
        sa.ForeignKeyConstraint(["reader_id"], ["readers.id"]),
        sa.PrimaryKeyConstraint("reader_id", "case_id"),
    )
    with op.batch_alter_table("responses") as batch:
        batch.add_column(sa.Column("first_shown_at", UTC(timezone=True), nullable=True))
        batch.add_column(sa.Column("active_ms", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("responses") as batch:
        batch.drop_column("active_ms")
        batch.drop_column("first_shown_at")
    op.drop_table("case_shown")
