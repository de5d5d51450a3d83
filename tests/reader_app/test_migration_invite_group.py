"""Migration 0029_invite_group: the profile's group is back-filled beside the invite's."""

from __future__ import annotations

import json
from pathlib import Path

import sqlalchemy as sa
from alembic import command

from reader_app.core.db import alembic_config

NOW = "2026-01-01 00:00:00.000000"


def test_upgrade_fills_profile_group_from_the_stored_profile(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'old.db'}"
    config = alembic_config(url)
    command.upgrade(config, "0027_audit_images")
    engine = sa.create_engine(url)
    profiles = {
        "T01": (None, {"role": "trainee", "trainee_year": 3, "years_experience": 2}),
        "B01": ("board-certified", {"role": "board-certified", "years_experience": 9}),
        "N01": ("PGY4", {}),  # no profile yet
    }
    with engine.begin() as conn:
        conn.execute(
            sa.text(
                "insert into studies (id, slug, title, state, config_json, created_at) "
                "values (1, 's', 'S', 'open', '{}', :now)"
            ),
            {"now": NOW},
        )
        for code, (group, profile) in profiles.items():
            conn.execute(
                sa.text(
                    "insert into readers (study_id, code, role, group_name, profile_json, "
                    "created_at) values (1, :code, 'reader', :group, :profile, :now)"
                ),
                {"code": code, "group": group, "profile": json.dumps(profile), "now": NOW},
            )
    command.upgrade(config, "head")
    with engine.connect() as conn:
        rows = conn.execute(
            sa.text("select code, group_name, profile_group from readers order by code")
        ).all()
    # the group given at invite is untouched; the profile's group is derived by hand
    assert [tuple(r) for r in rows] == [
        ("B01", "board-certified", "board-certified"),
        ("N01", "PGY4", None),
        ("T01", None, "PGY3"),
    ]
    command.downgrade(config, "0027_audit_images")
    with engine.connect() as conn:
        columns = {c["name"] for c in sa.inspect(conn).get_columns("readers")}
    assert "profile_group" not in columns and "group_name" in columns
    engine.dispose()
