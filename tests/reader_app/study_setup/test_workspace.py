"""Per-import folders: made under <data dir>/.setup, swept when stale, never anything else."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from reader_app.core.settings import Settings, load_settings
from reader_app.study_setup.workspace import (
    STALE_AFTER_S,
    SourceRefused,
    find_manifest,
    new_workspace,
    remove_workspace,
    sweep_stale,
)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return load_settings({"READERSTUDY_DATA_DIR": str(tmp_path / "data")})


def test_stale_workspaces_are_swept_fresh_ones_kept(settings: Settings) -> None:
    old, fresh = new_workspace(settings), new_workspace(settings)
    long_ago = time.time() - STALE_AFTER_S - 60
    os.utime(old, (long_ago, long_ago))
    assert sweep_stale(settings) == 1
    assert not old.exists() and fresh.exists()


def test_remove_workspace_touches_only_its_own_folders(settings: Settings, tmp_path: Path) -> None:
    precious = tmp_path / "import-precious"
    precious.mkdir()
    remove_workspace(settings, precious)  # not under <data dir>/.setup: left alone
    remove_workspace(settings, settings.data_dir)
    assert precious.exists() and settings.data_dir.exists()
    mine = new_workspace(settings)
    remove_workspace(settings, mine)
    assert not mine.exists()


def test_manifest_found_at_the_top_or_in_the_one_folder(tmp_path: Path) -> None:
    (tmp_path / "a" / "study").mkdir(parents=True)
    (tmp_path / "a" / "study" / "manifest.yaml").write_text("[]")
    assert find_manifest(tmp_path / "a") == tmp_path / "a" / "study" / "manifest.yaml"
    (tmp_path / "a" / "manifest.csv").write_text("case_id\n")
    assert find_manifest(tmp_path / "a") == tmp_path / "a" / "manifest.csv"
    (tmp_path / "b" / "one").mkdir(parents=True)
    (tmp_path / "b" / "two").mkdir()
    with pytest.raises(SourceRefused, match="no manifest"):
        find_manifest(tmp_path / "b")


def test_a_running_job_without_a_heartbeat_for_two_minutes_is_stalled() -> None:
    from datetime import UTC, datetime, timedelta

    from reader_app.models import ImportJob
    from reader_app.study_setup.jobs import stalled

    at = datetime(2026, 12, 1, 5, 0, tzinfo=UTC)
    job = ImportJob(
        actor="C01",
        actor_study_id=1,
        target_slug="s",
        mode="new",
        source_name="a ZIP upload",
        updated_at=at,
    )
    assert not stalled(job, at + timedelta(minutes=2))  # exactly 2 min: not yet
    assert stalled(job, at + timedelta(minutes=2, seconds=1))
    job.state = "done"
    assert not stalled(job, at + timedelta(days=1))  # a finished job never stalls
