"""invite group: the reader's profile answer stored beside the group given at invite

Revision ID: 0029_invite_group
Revises: 0028_exam_drafts

Until now the profile overwrote ``readers.group_name`` (W01 invited as PGY4 became
board-certified). From here the invite's group stays and the profile's answer goes
to ``profile_group``; rows that already have a profile get it back-filled from
``profile_json`` (the group it derives: ``PGY<n>`` for a trainee, else the role).
"""

import json
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0029_invite_group"
down_revision: str | Sequence[str] | None = "0028_exam_drafts"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _profile_group(profile_json: str | None) -> str | None:
    try:
        data = json.loads(profile_json or "{}")
    except ValueError:
        return None
    role = data.get("role") if isinstance(data, dict) else None
    if not role:
        return None
    return f"PGY{data.get('trainee_year')}" if role == "trainee" else str(role)[:64]


def upgrade() -> None:
    with op.batch_alter_table("readers") as batch:
        batch.add_column(sa.Column("profile_group", sa.String(length=64), nullable=True))
    readers = sa.table(
        "readers",
        sa.column("id", sa.Integer()),
        sa.column("profile_json", sa.Text()),
        sa.column("profile_group", sa.String(length=64)),
    )
    bind = op.get_bind()
    rows = bind.execute(sa.select(readers.c.id, readers.c.profile_json)).all()
    for reader_id, profile_json in rows:
        group = _profile_group(profile_json)
        if group is not None:
            bind.execute(
                readers.update().where(readers.c.id == reader_id).values(profile_group=group)
            )


def downgrade() -> None:
    with op.batch_alter_table("readers") as batch:
        batch.drop_column("profile_group")
