"""aided arm: responses gain ``arm`` and ``aid_run_id``; one row per (reader, case, arm)

Revision ID: 0032_aided_arm
Revises: 0031_revision_record

An AI-aided study (SCORING.md section 10) stores two rows per reader and case: the
answer given before the model's was shown (``arm = 'unaided'``, what every row so
far is) and the final one (``arm = 'aided'``, naming the model run shown in
``aid_run_id``). The unique (reader, case) becomes (reader, case, arm) on SQLite and
PostgreSQL. ``aid_crossover`` records each reader's group of a crossover study.
"""

import warnings
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from reader_app.models import UTCDateTime

revision: str = "0032_aided_arm"
down_revision: str | Sequence[str] | None = "0031_revision_record"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # SQLite's batch mode reflects the tables responses points at; cases carries the
    # expression index uq_case_source_ci (0025), which SQLAlchemy cannot reflect and says
    # so on every fresh database. cases is not rebuilt here, so that index stays as it is.
    with (
        warnings.catch_warnings(),
        op.batch_alter_table("responses") as batch,
    ):
        warnings.filterwarnings("ignore", message=".*expression-based index uq_case_source_ci")
        batch.add_column(
            sa.Column("arm", sa.String(length=8), nullable=False, server_default="unaided")
        )
        batch.add_column(sa.Column("aid_run_id", sa.Integer(), nullable=True))
        batch.create_foreign_key(
            "fk_responses_aid_run_id_model_runs", "model_runs", ["aid_run_id"], ["id"]
        )
        batch.drop_constraint("uq_response_reader_case", type_="unique")
        batch.create_unique_constraint(
            "uq_response_reader_case_arm", ["reader_id", "case_id", "arm"]
        )
        batch.create_check_constraint("ck_response_arm", "arm in ('unaided','aided')")
        batch.create_check_constraint(
            "ck_response_aided",
            "arm = 'unaided' or (reader_id is not null and aid_run_id is not null)",
        )
    op.create_table(
        "aid_crossover",
        sa.Column("reader_id", sa.Integer(), sa.ForeignKey("readers.id"), primary_key=True),
        sa.Column("study_id", sa.Integer(), sa.ForeignKey("studies.id"), nullable=False),
        sa.Column("group_name", sa.String(length=1), nullable=False),
        sa.Column("seed", sa.Integer(), nullable=False),
        sa.Column("assigned_at", UTCDateTime(), nullable=False),
        sa.CheckConstraint("group_name in ('A','B')", name="ck_aid_crossover_group"),
    )
    op.create_index("ix_aid_crossover_study_id", "aid_crossover", ["study_id"])


def downgrade() -> None:
    op.drop_index("ix_aid_crossover_study_id", table_name="aid_crossover")
    op.drop_table("aid_crossover")
    op.execute("DELETE FROM responses WHERE arm = 'aided'")
    with op.batch_alter_table("responses") as batch:
        batch.drop_constraint("ck_response_aided", type_="check")
        batch.drop_constraint("ck_response_arm", type_="check")
        batch.drop_constraint("uq_response_reader_case_arm", type_="unique")
        batch.create_unique_constraint("uq_response_reader_case", ["reader_id", "case_id"])
        batch.drop_constraint("fk_responses_aid_run_id_model_runs", type_="foreignkey")
        batch.drop_column("aid_run_id")
        batch.drop_column("arm")
