"""revision record: a replaced answer keeps its own active time and viewer record

Revision ID: 0031_revision_record
Revises: 0030_run_usage

Until now a revision updated the answer's text in place and kept the first answer's
``active_ms`` and ``interaction_json`` on the response. From here the replaced answer's
figures go into ``response_revisions`` with the rest of it, and the response holds the
revision's own (issue 38). Earlier history rows have none (NULL).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0031_revision_record"
down_revision: str | Sequence[str] | None = "0030_run_usage"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("response_revisions") as batch:
        batch.add_column(sa.Column("active_ms", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("interaction_json", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("response_revisions") as batch:
        batch.drop_column("interaction_json")
        batch.drop_column("active_ms")
