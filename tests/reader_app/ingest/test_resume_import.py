"""A stopped import taken up again (``reader_app.ingest.resume``): the next run of the
same manifest and study renders only what the stopped one had not, and imports the
same study a fresh run would; on SQLite and PostgreSQL."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from reader_app.core.db import make_engine
from reader_app.core.settings import PROJECT_ROOT, Settings
from reader_app.ingest.errors import ImportFailed
from reader_app.ingest.importer import import_manifest
from reader_app.ingest.resume import PREFIX, ResumeFolder
from reader_app.ingest.staging import ImportProgress
from reader_app.models import Study
from tests.reader_app.ingest.helpers import (
    case,
    phantom,
    study_images,
    write_manifest,
    write_nifti,
)

READERSTUDY = Path(PROJECT_ROOT) / ".venv" / "bin" / "readerstudy"


@pytest.fixture
def db(settings: Settings) -> Iterator[Engine]:
    engine = make_engine(settings.database_url, pooled=False)
    yield engine
    engine.dispose()


def _study(folder: Path, n: int) -> Path:
    """``n`` small NIfTI volumes, each its own (the slice count differs), one strip each."""
    folder.mkdir(parents=True)
    rows = []
    for i in range(n):
        write_nifti(folder / f"v{i}.nii.gz", phantom(n=12 + i), ras=bool(i % 2))
        rows.append(case(f"ct-{i}", f"v{i}.nii.gz", kind="strip"))
    return write_manifest(folder, rows)


def _folders(settings: Settings) -> list[Path]:
    return sorted(settings.data_dir.glob(f"{PREFIX}*"))


def interrupt_after(n: int, manifest: Path, settings: Settings, slug: str) -> None:
    """Run a resumable import and interrupt it (as Ctrl+C would) once ``n`` cases are
    staged, one at a time."""

    def stop(step: ImportProgress) -> None:
        if step.done >= n and step.message.startswith("case "):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        import_manifest(manifest, settings=settings, slug=slug, workers=1, resume=True,
                        progress=stop)  # fmt: skip


def test_an_interrupted_import_is_taken_up_where_it_stopped(
    settings: Settings, db: Engine, tmp_path: Path
) -> None:
    manifest = _study(tmp_path / "study", 5)
    interrupt_after(3, manifest, settings, "ct")
    (folder,) = _folders(settings)
    assert len(list((folder / "cases").glob("*.pickle"))) == 3
    with Session(db) as s:
        assert s.exec(select(Study)).all() == []  # nothing imported yet

    steps: list[ImportProgress] = []
    result = import_manifest(
        manifest, settings=settings, slug="ct", workers=1, resume=True, progress=steps.append
    )
    messages = [p.message for p in steps]
    assert messages[0] == "3 cases staged by an earlier run"
    assert [m for m in messages if m.startswith("case ")] == ["case ct-3", "case ct-4"]
    assert _folders(settings) == []  # a run that ended removes its folder
    # the same study, image for image, as a fresh import of the manifest
    fresh = import_manifest(manifest, settings=settings, slug="fresh", workers=1)
    assert result.images == fresh.images and result.cases == fresh.cases == 5
    assert [r[1:] for r in study_images(db, "ct")] == [r[1:] for r in study_images(db, "fresh")]
    assert result.report.read == fresh.report.read


def test_a_changed_file_is_rendered_again_and_other_runs_start_fresh(
    settings: Settings, db: Engine, tmp_path: Path
) -> None:
    manifest = _study(tmp_path / "study", 4)
    interrupt_after(2, manifest, settings, "ct")
    # v0 replaced by other pixels (same name): its record no longer fits
    write_nifti(manifest.parent / "v0.nii.gz", np.flip(phantom(n=12), axis=2).copy())
    stat = (manifest.parent / "v0.nii.gz").stat()
    os.utime(manifest.parent / "v0.nii.gz", ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    steps: list[ImportProgress] = []
    import_manifest(manifest, settings=settings, slug="ct", workers=1, resume=True,
                    progress=steps.append)  # fmt: skip
    staged = [p.message for p in steps if p.message.startswith("case ")]
    assert staged == ["case ct-0", "case ct-2", "case ct-3"]  # ct-1's record was kept
    # the same manifest under another study name has a folder of its own: nothing taken
    interrupt_after(1, manifest, settings, "ct2")
    steps.clear()
    import_manifest(manifest, settings=settings, slug="other", workers=1, resume=True,
                    progress=steps.append)  # fmt: skip
    assert len([p for p in steps if p.message.startswith("case ")]) == 4
    assert len(_folders(settings)) == 1  # ct2's, stopped, waits for its next run


def test_a_refused_import_removes_its_folder_and_a_held_folder_is_not_shared(
    settings: Settings, db: Engine, tmp_path: Path
) -> None:
    manifest = _study(tmp_path / "study", 3)
    (manifest.parent / "v1.nii.gz").write_bytes(b"not a volume")
    with pytest.raises(ImportFailed, match="ct-1"):
        import_manifest(manifest, settings=settings, slug="ct", workers=1, resume=True)
    assert _folders(settings) == []
    held = ResumeFolder.open(settings, manifest, "ct")
    assert held is not None
    try:
        assert ResumeFolder.open(settings, manifest, "ct") is None  # one run at a time
        write_nifti(manifest.parent / "v1.nii.gz", phantom(n=13))
        # a second run meanwhile stages privately, and leaves the held folder alone
        result = import_manifest(manifest, settings=settings, slug="ct", workers=1, resume=True)
        assert result.cases == 3 and _folders(settings) == [held.folder]
    finally:
        held.close(keep=False)
    assert _folders(settings) == []


def test_a_killed_cli_import_is_continued_by_the_next_run(
    settings: Settings, db: Engine, tmp_path: Path
) -> None:
    """``readerstudy import`` killed with SIGKILL midway, then run again: the second run
    says how many cases the first had staged, renders the rest, and imports the study."""
    manifest = _study(tmp_path / "study", 10)
    env = dict(
        os.environ,
        READERSTUDY_DATABASE_URL=settings.database_url,
        READERSTUDY_DATA_DIR=str(settings.data_dir),
    )
    command = [str(READERSTUDY), "import", str(manifest), "--study", "ct"]
    child = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            records = [p for f in _folders(settings) for p in (f / "cases").glob("*.pickle")]
            if len(records) >= 3:
                break
            assert child.poll() is None, child.stderr.read() if child.stderr else ""
            time.sleep(0.02)
        else:
            pytest.fail("the import never got going")
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait(30)
    assert child.returncode == -signal.SIGKILL
    (folder,) = _folders(settings)
    before = len(list((folder / "cases").glob("*.pickle")))
    assert 3 <= before < 10
    with Session(db) as s:
        assert s.exec(select(Study)).all() == []
    again = subprocess.run(
        [*command, "--quiet"],
        env={**env, "READERSTUDY_LOG_LEVEL": "INFO"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert again.returncode == 0, again.stderr
    assert f"{before} of 10 cases staged by an earlier run" in again.stderr
    assert "imported study 'ct': 10 case(s)" in again.stdout
    assert _folders(settings) == []
    fresh = import_manifest(manifest, settings=settings, slug="fresh", workers=1)
    assert [r[1:] for r in study_images(db, "ct")] == [r[1:] for r in study_images(db, "fresh")]
    assert fresh.cases == 10
