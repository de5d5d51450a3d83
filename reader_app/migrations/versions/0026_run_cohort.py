"""run cohort: a model run's free-text cohort (frontier, open-weight, medical, ...)

Revision ID: 0026_run_cohort
Revises: 0025_import_safety
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0026_run_cohort"
down_revision: str | Sequence[str] | None = "0025_import_safety"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("model_runs") as batch:
        batch.add_column(sa.Column("cohort", sa.String(length=64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("model_runs") as batch:
        batch.drop_column("cohort")
