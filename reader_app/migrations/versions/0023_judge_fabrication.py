"""judge fabrication: whether a rubric judge found a fabricated finding in the report,
and each judge's reason kept with the judgement (``rubric_judgements.reasons_json``)

Revision ID: 0023_judge_fabrication
Revises: 0021_grounding
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0023_judge_fabrication"
down_revision: str | Sequence[str] | None = "0021_grounding"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # nullable: calls and judgements made before the judges were asked (or their reasons
    # kept with the judgement) stay unknown
    with op.batch_alter_table("rubric_judge_calls") as batch:
        batch.add_column(sa.Column("fabrication", sa.Boolean(), nullable=True))
    with op.batch_alter_table("rubric_judgements") as batch:
        batch.add_column(sa.Column("fabrication", sa.Boolean(), nullable=True))
        batch.add_column(sa.Column("reasons_json", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("rubric_judgements") as batch:
        batch.drop_column("reasons_json")
        batch.drop_column("fabrication")
    with op.batch_alter_table("rubric_judge_calls") as batch:
        batch.drop_column("fabrication")
