"""responses.interaction_json: what the reader did in the viewer

Slices visited, windows used, zoom, pan and fullscreen time, as the browser
reported them with the answer (JSON text; NULL when nothing was reported).

Revision ID: 0016_viewer_interaction
Revises: 0015_run_leases
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016_viewer_interaction"
down_revision: str | Sequence[str] | None = "0015_run_leases"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("responses") as batch:
        batch.add_column(sa.Column("interaction_json", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("responses") as batch:
        batch.drop_column("interaction_json")
