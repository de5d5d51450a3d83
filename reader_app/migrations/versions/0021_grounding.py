"""grounding: reference regions on the answer key, locations on responses, text-only runs

Revision ID: 0021_grounding
Revises: 0020_import_jobs
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0021_grounding"
down_revision: str | Sequence[str] | None = "0020_import_jobs"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("answer_keys") as batch:
        batch.add_column(sa.Column("reference_region", sa.Text(), nullable=True))
        batch.add_column(sa.Column("reference_mask", sa.LargeBinary(), nullable=True))
    with op.batch_alter_table("responses") as batch:
        batch.add_column(sa.Column("location_json", sa.Text(), nullable=True))
    with op.batch_alter_table("response_revisions") as batch:
        batch.add_column(sa.Column("location_json", sa.Text(), nullable=True))
    with op.batch_alter_table("model_runs") as batch:
        batch.add_column(
            sa.Column("no_images", sa.Boolean(), nullable=False, server_default=sa.false())
        )


def downgrade() -> None:
    with op.batch_alter_table("model_runs") as batch:
        batch.drop_column("no_images")
    with op.batch_alter_table("response_revisions") as batch:
        batch.drop_column("location_json")
    with op.batch_alter_table("responses") as batch:
        batch.drop_column("location_json")
    with op.batch_alter_table("answer_keys") as batch:
        batch.drop_column("reference_mask")
        batch.drop_column("reference_region")
