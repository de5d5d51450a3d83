"""Volume cases staged by a pool of processes (staging.import_workers): the same study as
the serial path, all or nothing, with progress; on SQLite and PostgreSQL."""

from __future__ import annotations

import dataclasses
import logging
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from reader_app.core.db import make_engine
from reader_app.core.settings import Settings
from reader_app.ingest.errors import ImportFailed
from reader_app.ingest.importer import import_manifest
from reader_app.ingest.staging import (
    MIN_PARALLEL_VOLUMES,
    ImportProgress,
    check,
    import_workers,
)
from reader_app.models import Case, Study
from tests.reader_app.ingest.helpers import (
    case,
    phantom,
    study_images,
    write_manifest,
    write_nifti,
)

N_VOLUMES = 4


@pytest.fixture
def db(settings: Settings) -> Iterator[Engine]:
    engine = make_engine(settings.database_url, pooled=False)
    yield engine
    engine.dispose()


def _volumes(folder: Path, broken: bool = False) -> Path:
    """Four small NIfTI volumes (each its own phantom, so its own PNGs); with ``broken``,
    the third is a truncated .nii.gz."""
    folder.mkdir(parents=True)
    rows = []
    for i in range(N_VOLUMES):
        path = write_nifti(folder / f"v{i}.nii.gz", phantom(n=20 + 3 * i), ras=bool(i % 2))
        if broken and i == 2:
            path.write_bytes(path.read_bytes()[:200])
        rows.append(case(f"ct-{i}", path.name, kind="strip"))
    return write_manifest(folder, rows)


def test_parallel_import_equals_the_serial_one(
    settings: Settings, db: Engine, tmp_path: Path
) -> None:
    manifest = _volumes(tmp_path / "study")
    steps: list[ImportProgress] = []
    parallel = import_manifest(
        manifest, settings=settings, slug="parallel", workers=2, progress=steps.append
    )
    serial = import_manifest(manifest, settings=settings, slug="serial", workers=1)
    assert parallel.cases == serial.cases == N_VOLUMES
    assert parallel.images == serial.images > 0
    # the same PNGs (same digests) for the same cases, in the same order
    shown = study_images(db, "parallel")
    assert shown == study_images(db, "serial") and len(shown) == parallel.images
    # the report reads the cases in manifest order, whichever process finished first
    assert [line.split(" ")[1] for line in parallel.report.read] == [
        f"ct-{i}" for i in range(N_VOLUMES)
    ]
    assert parallel.report.read == serial.report.read
    # progress: a step per case as each finishes, then saving and done
    done = [p.done for p in steps]
    assert done == sorted(done) and done[-1] == N_VOLUMES + 1 == steps[-1].total
    assert {p.message for p in steps} >= {"saving", "done"}
    assert steps[-1].strips == N_VOLUMES


def test_a_broken_volume_stops_the_parallel_import_whole(
    settings: Settings, db: Engine, tmp_path: Path
) -> None:
    manifest = _volumes(tmp_path / "study", broken=True)
    with pytest.raises(ImportFailed, match="ct-2"):
        import_manifest(manifest, settings=settings, slug="broken", workers=2)
    with Session(db) as s:
        assert s.exec(select(Study)).all() == [] and s.exec(select(Case)).all() == []
    assert not list(settings.asset_dir.rglob("*.png"))
    assert not [p for p in settings.data_dir.iterdir() if p.name.startswith(".import-")]


def test_check_reports_the_same_problems_in_parallel(settings: Settings, tmp_path: Path) -> None:
    manifest = _volumes(tmp_path / "study", broken=True)
    found = []
    for workers in (1, 2):
        staging = tmp_path / f"staging-{workers}"
        staging.mkdir()
        checked = check(manifest, settings=settings, staging=staging, slug="s", workers=workers)
        found.append((checked.problems, [c.digests for c in checked.prepared]))
    assert found[0] == found[1] and len(found[0][1]) == N_VOLUMES - 1


def test_workers_bounded_by_cores_volumes_and_memory(settings: Settings) -> None:
    assert import_workers(0, settings) == import_workers(MIN_PARALLEL_VOLUMES - 1, settings) == 1
    cores = len(os.sched_getaffinity(0))
    assert 1 <= import_workers(100, settings) <= min(cores, 100)
    # a cap on a .nii.gz's decompressed size larger than this machine's memory: serial
    huge = dataclasses.replace(settings, max_inflate_bytes=1 << 50)
    assert import_workers(100, huge) == 1


def _pool_workers() -> list[int]:
    """This process's children that are multiprocessing spawn workers (not its resource
    tracker), from /proc."""
    found = []
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        for pid in (task / "children").read_text().split():
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
            if b"spawn_main" in cmdline and b"resource_tracker" not in cmdline:
                found.append(int(pid))
    return found


def test_a_killed_pool_worker_leaves_the_cases_to_serial_staging(
    settings: Settings, db: Engine, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A staging worker killed (SIGKILL) as the pool starts: the pool breaks, every case it
    left is staged here one at a time, and the study is the serial import's."""
    manifest = _volumes(tmp_path / "study")
    killed: list[int] = []

    def kill_a_worker(step: ImportProgress) -> None:
        # "2 processes" comes right after the cases are submitted: the workers are
        # still starting (a spawn imports the readers for about a second)
        if step.done == 0 and step.message.endswith("processes") and not killed:
            workers = _pool_workers()
            assert workers, "no staging worker found"
            os.kill(workers[0], signal.SIGKILL)
            killed.append(workers[0])

    with caplog.at_level(logging.WARNING, logger="reader_app.ingest.staging"):
        parallel = import_manifest(
            manifest, settings=settings, slug="parallel", workers=2, progress=kill_a_worker
        )
    assert killed
    broke = [r.getMessage() for r in caplog.records if "staging pool broke" in r.getMessage()]
    assert broke == [
        f"the staging pool broke after 0 of {N_VOLUMES} cases; staging the rest one at a time"
    ]
    serial = import_manifest(manifest, settings=settings, slug="serial", workers=1)
    assert parallel.cases == serial.cases == N_VOLUMES
    shown = study_images(db, "parallel")
    assert shown == study_images(db, "serial") and len(shown) == parallel.images > 0
    assert parallel.report.read == serial.report.read
