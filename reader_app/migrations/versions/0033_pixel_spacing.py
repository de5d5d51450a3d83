"""case images gain their pixel spacing in mm: the viewer's distance tool

Revision ID: 0033_pixel_spacing
Revises: 0032_aided_arm

``pixel_mm_x`` and ``pixel_mm_y``: millimetres per pixel of the stored PNG, across
and down, from the source's DICOM PixelSpacing or NIfTI geometry, scaled by ingest's
downscale. Null for images ingested before, and for sources that give none.
``values_sha256``: the asset holding the same pixels' original values (the study
option ``original_values``), null when the study does not ask for them.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0033_pixel_spacing"
down_revision: str | Sequence[str] | None = "0032_aided_arm"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("case_images") as batch:
        batch.add_column(sa.Column("pixel_mm_x", sa.Float(), nullable=True))
        batch.add_column(sa.Column("pixel_mm_y", sa.Float(), nullable=True))
        batch.add_column(sa.Column("values_sha256", sa.String(length=64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("case_images") as batch:
        batch.drop_column("values_sha256")
        batch.drop_column("pixel_mm_y")
        batch.drop_column("pixel_mm_x")
