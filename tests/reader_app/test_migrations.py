"""The Alembic revisions build exactly the schema the models describe, on both databases."""

from __future__ import annotations

from pathlib import Path

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy.engine import Engine
from sqlmodel import SQLModel

# Partial unique indexes ("one active row per ...") are written by hand in
# 0003_grading with a WHERE clause the models do not declare; 0025_import_safety's
# case-insensitive case id is an expression index (lower(source_id)).
HAND_WRITTEN_INDEXES = {
    "uq_verdict_active",
    "uq_adjudication_active",
    "uq_rubric_active",
    "uq_case_source_ci",
}


def _drift(engine: Engine) -> list[object]:
    with engine.connect() as conn:
        diffs = compare_metadata(MigrationContext.configure(conn), SQLModel.metadata)
    return [
        d
        for d in diffs
        if not (
            isinstance(d, tuple) and d[0] == "remove_index" and d[1].name in HAND_WRITTEN_INDEXES
        )
    ]


def test_migrated_schema_matches_the_models(engine: Engine) -> None:
    assert _drift(engine) == []


def test_the_migrations_have_one_head_in_the_newest_file() -> None:
    """One line of history: every revision after the first joins it, so a new
    migration has exactly one parent to name (issue 18), and the head is the
    revision in the file numbered last (so a new migration needs no edit here)."""
    from alembic.script import ScriptDirectory

    from reader_app.core.db import alembic_config

    script = ScriptDirectory.from_config(alembic_config("sqlite://"))
    files = sorted(Path(script.versions).glob("[0-9][0-9][0-9][0-9]_*.py"))
    revisions = list(script.walk_revisions())
    assert len(files) > 1 and len(revisions) == len(files)  # one revision per file
    (head,) = script.get_heads()
    path = script.get_revision(head).path
    assert path is not None and Path(path).name == files[-1].name
