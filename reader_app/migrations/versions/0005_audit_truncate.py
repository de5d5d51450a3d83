"""audit_events refuses TRUNCATE on PostgreSQL too

Row-level triggers (0001) do not fire on TRUNCATE; a statement-level trigger
does. SQLite has no TRUNCATE, so there is nothing to add there.

Revision ID: 0005_audit_truncate
Revises: 0001
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0005_audit_truncate"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(
        "CREATE TRIGGER audit_events_no_truncate BEFORE TRUNCATE ON audit_events "
        "FOR EACH STATEMENT EXECUTE FUNCTION audit_events_append_only()"
    )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER IF EXISTS audit_events_no_truncate ON audit_events")
