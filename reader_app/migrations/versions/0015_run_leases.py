"""model runs: per-case leases, an atomic session counter, revisions keep raw reply and error

- ``run_leases``: one row per (run, case) a runner process is asking, so two
  processes never ask the same case (unique constraint; expired leases are
  taken over by a conditional UPDATE);
- ``model_runs.sessions``: incremented by one UPDATE, backfilled from
  ``totals_json``;
- ``response_revisions.raw_reply`` / ``meta_json``: a replaced technical
  failure keeps its raw reply and error.

Revision ID: 0015_run_leases
Revises: 0013_exam_timing
"""

import json
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import reader_app.models

revision: str = "0015_run_leases"
down_revision: str | Sequence[str] | None = "0013_exam_timing"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UTC = reader_app.models.UTCDateTime


def upgrade() -> None:
    op.create_table(
        "run_leases",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("model_run_id", sa.Integer(), nullable=False),
        sa.Column("case_id", sa.Integer(), nullable=False),
        sa.Column("holder", sa.String(length=120), nullable=False),
        sa.Column("expires_at", UTC(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["model_run_id"], ["model_runs.id"]),
        sa.ForeignKeyConstraint(["case_id"], ["cases.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("model_run_id", "case_id", name="uq_run_lease_case"),
    )
    with op.batch_alter_table("model_runs") as batch:
        batch.add_column(sa.Column("sessions", sa.Integer(), nullable=False, server_default="0"))
    with op.batch_alter_table("response_revisions") as batch:
        batch.add_column(sa.Column("raw_reply", sa.Text(), nullable=True))
        batch.add_column(sa.Column("meta_json", sa.Text(), nullable=True))
    bind = op.get_bind()
    runs = sa.table(
        "model_runs",
        sa.column("id", sa.Integer),
        sa.column("totals_json", sa.Text),
        sa.column("sessions", sa.Integer),
    )
    for run_id, totals in bind.execute(sa.select(runs.c.id, runs.c.totals_json)).all():
        try:
            sessions = int(json.loads(totals or "{}").get("sessions", 0))
        except (ValueError, TypeError, AttributeError):
            sessions = 0
        if sessions:
            bind.execute(runs.update().where(runs.c.id == run_id).values(sessions=sessions))


def downgrade() -> None:
    with op.batch_alter_table("response_revisions") as batch:
        batch.drop_column("meta_json")
        batch.drop_column("raw_reply")
    with op.batch_alter_table("model_runs") as batch:
        batch.drop_column("sessions")
    op.drop_table("run_leases")
