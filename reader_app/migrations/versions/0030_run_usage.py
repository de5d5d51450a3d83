"""run usage: repeat runs tied by a run group, and a reply's reasoning text

- ``model_runs.run_group`` / ``repeat_index``: ``run-model --repeats N`` makes N
  runs of their own, each tied to its group (the base run name) by its repeat
  index (1..N); NULL for a single run;
- ``responses.reasoning_text``: a model's reasoning (``message.reasoning_content``
  or ``reasoning``), stored and exported, never shown to a reader. Tokens
  (prompt, completion, reasoning, cached), the provider's cost and the latency
  stay in ``meta_json`` beside the rest of the reply's metadata.

Revision ID: 0030_run_usage
Revises: 0029_invite_group
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0030_run_usage"
down_revision: str | Sequence[str] | None = "0029_invite_group"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("model_runs") as batch:
        batch.add_column(sa.Column("run_group", sa.String(length=200), nullable=True))
        batch.add_column(sa.Column("repeat_index", sa.Integer(), nullable=True))
    with op.batch_alter_table("responses") as batch:
        batch.add_column(sa.Column("reasoning_text", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("responses") as batch:
        batch.drop_column("reasoning_text")
    with op.batch_alter_table("model_runs") as batch:
        batch.drop_column("repeat_index")
        batch.drop_column("run_group")
