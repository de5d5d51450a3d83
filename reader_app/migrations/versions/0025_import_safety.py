"""import safety: case ids unique whatever their case, interrupted import jobs, no names kept

Revision ID: 0025_import_safety
Revises: 0023_judge_fabrication

- ``uq_case_source_ci``: one case id per study compared case-insensitively
  (``lower(source_id)``), checked at commit, so two coordinators adding
  ``Dup-One`` and ``dup-one`` at once cannot both commit (issue 32 item 11).
- ``import_jobs.state`` may be ``interrupted`` (no heartbeat: the server died
  mid-import), and ``import_jobs.workspace`` names the job's own temporary
  folder (``import-XXXX``, random) so the sweep can remove it (item 12).
- The file, folder and path names older import jobs kept (a ZIP's name, the
  report's paths) are cleared: they may hold a patient's name (item 6).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0025_import_safety"
down_revision: str | Sequence[str] | None = "0023_judge_fabrication"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

STATES = "state in ('running','done','failed','interrupted')"


def upgrade() -> None:
    op.create_index(
        "uq_case_source_ci", "cases", ["study_id", sa.text("lower(source_id)")], unique=True
    )
    with op.batch_alter_table("import_jobs") as batch:
        batch.drop_constraint("ck_import_job_state", type_="check")
        batch.create_check_constraint("ck_import_job_state", STATES)
        batch.add_column(sa.Column("workspace", sa.String(length=64), nullable=True))
    op.execute(
        "UPDATE import_jobs SET source_name = 'an earlier import', report_text = '', "
        "message = state"
    )


def downgrade() -> None:
    op.execute("UPDATE import_jobs SET state = 'failed' WHERE state = 'interrupted'")
    with op.batch_alter_table("import_jobs") as batch:
        batch.drop_column("workspace")
        batch.drop_constraint("ck_import_job_state", type_="check")
        batch.create_check_constraint("ck_import_job_state", "state in ('running','done','failed')")
    op.drop_index("uq_case_source_ci", table_name="cases")
