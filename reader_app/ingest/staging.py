"""Check a study folder and render every case into a staging folder (import phases 1 and 2).

``check`` parses the manifest and study.toml, then reads and renders every
case, its PNGs written to a private staging folder (not the store, keeping
memory flat), collecting *all* problems; it writes nothing else. It is the
one staging loop: ``importer.validate`` and ``importer.import_manifest`` run
it, and so does the browser's set-up (``reader_app.study_setup.validation``),
with the settings of the study it adds to and its burned-in decisions.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field, replace
from multiprocessing import get_context
from multiprocessing.context import BaseContext
from pathlib import Path

from sqlmodel import Session

from reader_app.core.db import make_engine
from reader_app.core.parent_watch import watch_parent
from reader_app.core.settings import Settings
from reader_app.ingest.errors import IngestError
from reader_app.ingest.manifest import Manifest, ManifestEntry, ManifestInvalid, load_manifest
from reader_app.ingest.prepare import CaseRefused, Limits, PreparedCase, Refused, prepare_case
from reader_app.ingest.report import IngestionReport
from reader_app.ingest.resume import ResumeFolder
from reader_app.ingest.study_config import load_study_config
from reader_app.study.assets import sha256_hex
from reader_app.study.case_reports import REPORT_FIELDS, effective_mode, missing_references
from reader_app.study.casebank import RenderedImage, get_study
from reader_app.study.config import StudyConfig

log = logging.getLogger(__name__)

SLUG = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


@dataclass(frozen=True)
class ImportProgress:
    """How far an import is: a step a case, then one for the transaction."""

    done: int  # steps done
    total: int  # the cases, + 1
    message: str  # what is happening
    images: int = 0  # images rendered so far
    strips: int = 0  # strip cases rendered so far


Progress = Callable[[ImportProgress], None]
Edit = Callable[[ManifestEntry], ManifestEntry | None]  # an entry changed, or None: left out


@dataclass(frozen=True)
class StagedCase:
    """A rendered case whose PNGs wait in the staging folder, named by digest."""

    prepared: PreparedCase  # its images have png=b"": the bytes are on disk
    digests: list[str]
    # per image, the digest of its original values (study option original_values), or None
    value_digests: list[str | None] = field(default_factory=list)

    @property
    def all_digests(self) -> list[str]:
        """Every asset this case writes: its PNGs and their original values."""
        return self.digests + [d for d in self.value_digests if d is not None]

    def images(self, staging: Path) -> list[RenderedImage]:
        """Its rendered images, the PNG bytes (and values) read back from ``staging``."""
        values = self.value_digests or [None] * len(self.digests)
        return [
            replace(
                im,
                png=(staging / f"{digest}.png").read_bytes(),
                values_png=None if value is None else (staging / f"{value}.png").read_bytes(),
            )
            for im, digest, value in zip(self.prepared.images, self.digests, values, strict=True)
        ]


@dataclass(frozen=True)
class Checked:
    """What phases 1 and 2 found: the staged cases, the config, every problem."""

    slug: str
    config: StudyConfig | None
    manifest: Manifest | None  # its valid entries, as loaded (before ``edit``)
    prepared: list[StagedCase]
    problems: list[str]  # refusals first, then errors; empty when the study can be imported
    report: IngestionReport


def default_slug(manifest_path: Path) -> str:
    return Path(manifest_path).resolve().parent.name


def check(
    path: Path,
    *,
    settings: Settings,
    staging: Path,
    slug: str | None = None,
    config: StudyConfig | None = None,
    slug_checked: bool = False,
    edit: Edit | None = None,
    progress: Progress | None = None,
    workers: int | None = None,
    resume: ResumeFolder | None = None,
) -> Checked:
    """Phases 1 and 2: every stage runs, whatever an earlier stage found.

    The set-up flows of the browser pass what they decide themselves: ``config``,
    the settings of the study cases are added to (study.toml is then not read);
    ``slug_checked``, the slug's form and target are checked by the caller (the
    study may exist); ``edit``, each loaded entry changed (a reviewer's name) or
    left out (None) before it is staged. ``workers``: processes staging the volume
    cases (default ``import_workers``: the cores, bounded by memory; 1: serial).
    ``resume``: ``staging`` is that folder, whose cases recorded by an earlier run
    are taken as they are, and each case staged now is recorded there.
    """
    slug = slug or default_slug(path)
    report = IngestionReport(manifest=path.name, slug=slug)
    errors: list[str] = []
    if not slug_checked and not SLUG.match(slug):
        why = "use letters, digits, '.', '_' or '-' (at most 64); see --study"
        return Checked(slug, None, None, [], [f"study slug {slug!r}: {why}"], report)
    manifest: Manifest | None = None
    try:
        manifest = load_manifest(path, strict=False)
        errors += manifest.errors
    except ManifestInvalid as exc:  # unreadable, or no case at all: no case to stage
        errors += exc.errors
    if config is None:
        practice = sum(e.practice for e in manifest.entries) if manifest else 0
        try:
            config = load_study_config(
                path.parent / "study.toml", title=slug, practice_cases=practice
            )
        except IngestError as exc:
            errors.append(str(exc))
    if config is not None and manifest is not None:
        config, report_problems = with_report_fields(manifest, config)
        errors += report_problems
    if not slug_checked and study_exists(settings, slug):
        errors.append(f"a study named {slug!r} already exists")
    prepared: list[StagedCase] = []
    if manifest is not None:
        entries = manifest.entries if edit is None else map(edit, manifest.entries)
        staged = replace(manifest, entries=tuple(e for e in entries if e is not None))
        defaults = config or StudyConfig(title=slug)
        prepared = _stage(staged, defaults, settings, report, staging, progress, workers, resume)
    report.errors[:0] = errors  # manifest and settings problems first
    return Checked(slug, config, manifest, prepared, report.refused + report.errors, report)


def study_exists(settings: Settings, slug: str) -> bool:
    engine = make_engine(settings.database_url, pooled=False)
    try:
        with Session(engine) as session:
            return get_study(session=session, slug=slug) is not None
    finally:
        engine.dispose()


PER_WORKER_BYTES = 768 * 2**20  # what one worker may hold at once: a volume, its strip, imports
# below this many volumes, starting the pool (each worker importing the readers, seconds
# on a busy machine) costs more than it saves
MIN_PARALLEL_VOLUMES = 8


def import_workers(n_volumes: int, settings: Settings) -> int:
    """Processes for staging ``n_volumes`` volume cases: bounded by the cores this
    process may use and by the memory available (each worker holds one decompressed
    volume, at most READERSTUDY_MAX_INFLATE_BYTES of a .nii.gz); 1 means serial."""
    if n_volumes < MIN_PARALLEL_VOLUMES:
        return 1
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    per_worker = max(PER_WORKER_BYTES, settings.max_inflate_bytes)
    by_memory = max(1, available_memory() // per_worker)
    return max(1, min(cores or 1, n_volumes, by_memory))


def available_memory() -> int:
    """MemAvailable of /proc/meminfo in bytes (a large figure where there is none)."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 1 << 40


def stage_case(
    entry: ManifestEntry, manifest: Manifest, config: StudyConfig, limits: Limits, staging: Path
) -> tuple[StagedCase | None, IngestionReport]:
    """Read and render one case, its PNGs written to ``staging``; with the report of
    this case alone (merged in manifest order by the caller). Runs in a worker process
    of a parallel import: everything it takes and returns pickles."""
    report = IngestionReport(manifest=manifest.path.name)
    try:
        case = prepare_case(entry, manifest, config=config, limits=limits, report=report)
    except CaseRefused as exc:
        for refused in exc.refusals:
            report.problem(f"case {entry.case_id}: {refused}", refused=True)
        if exc.error is not None:
            report.problem(f"case {entry.case_id}: {exc.error}")
        return None, report
    except Refused as exc:
        report.problem(f"case {entry.case_id}: {exc}", refused=True)
        return None, report
    except IngestError as exc:
        report.problem(f"case {entry.case_id}: {exc}")
        return None, report
    except Exception as exc:  # a decoder bug must still name the case and file
        report.problem(f"{entry.where}: unexpected {type(exc).__name__}: {exc}")
        return None, report
    digests: list[str] = []
    value_digests: list[str | None] = []
    for image in case.images:
        digests.append(sha256_hex(image.png))
        (staging / f"{digests[-1]}.png").write_bytes(image.png)
        value = None if image.values_png is None else sha256_hex(image.values_png)
        if value is not None and image.values_png is not None:
            (staging / f"{value}.png").write_bytes(image.values_png)
        value_digests.append(value)
    bare = replace(case, images=[replace(im, png=b"", values_png=None) for im in case.images])
    return StagedCase(bare, digests, value_digests), report


def _pool_context() -> BaseContext:
    """Workers started as fresh interpreters ("spawn"): not forked from this process (a
    server or a test worker has threads), and no fork server, which outlived the
    pytest-xdist workers that started it (orphaned fork servers and resource trackers
    after a full suite run) and whose pools broke there. Each worker imports the
    readers itself (about a second, once per pool)."""
    return get_context("spawn")


def _merge(into: IngestionReport, part: IngestionReport) -> None:
    for name in ("read", "raster_dropped", "refused", "errors", "reviewed", "flagged"):
        getattr(into, name).extend(getattr(part, name))
    into.headers.add(part.headers)


def _stage(
    manifest: Manifest,
    config: StudyConfig,
    settings: Settings,
    report: IngestionReport,
    staging: Path,
    progress: Progress | None,
    workers: int | None = None,
    resume: ResumeFolder | None = None,
) -> list[StagedCase]:
    """Render every case; PNGs go to staging (not the store), keeping memory flat.

    Volume cases (strips: a DICOM series or a NIfTI to decompress, resample and
    render) are staged in parallel by ``workers`` processes (``import_workers``
    by default); the cases and the report come out in manifest order either way,
    so the import that follows is the same, all or nothing. With ``resume``, a
    case an earlier run recorded there is taken, not staged again.
    """
    entries = manifest.entries
    total = len(entries) + 1  # +1: the final transaction
    limits = Limits.of(settings)
    results: list[tuple[StagedCase | None, IngestionReport]] = []
    images = strips = 0
    by_index: dict[int, tuple[StagedCase | None, IngestionReport]] = {}
    if resume is not None:
        for i, entry in enumerate(entries):
            hit = resume.get(entry, config, limits)
            if hit is not None:
                by_index[i] = hit
        if by_index:
            log.info("%d of %d cases staged by an earlier run", len(by_index), len(entries))
    n_volumes = sum(e.kind == "strip" for i, e in enumerate(entries) if i not in by_index)
    workers = import_workers(n_volumes, settings) if workers is None else workers

    def count(staged: StagedCase | None, entry: ManifestEntry) -> None:
        nonlocal images, strips
        if staged is not None:
            images += len(staged.digests)
            strips += entry.kind == "strip"

    def done_with(i: int, result: tuple[StagedCase | None, IngestionReport]) -> None:
        by_index[i] = result
        count(result[0], entries[i])
        if resume is not None:
            resume.put(entries[i], config, limits, result)

    for i in sorted(by_index):
        count(by_index[i][0], entries[i])
    if by_index and progress:
        message = f"{len(by_index)} cases staged by an earlier run"
        progress(ImportProgress(len(by_index), total, message, images, strips))
    todo = [i for i in range(len(entries)) if i not in by_index]
    if workers <= 1 or n_volumes < 2:
        for i in todo:
            if progress:
                message = f"case {entries[i].case_id}"
                progress(ImportProgress(len(by_index), total, message, images, strips))
            done_with(i, stage_case(entries[i], manifest, config, limits, staging))
    else:
        try:
            with ProcessPoolExecutor(
                workers,
                mp_context=_pool_context(),
                initializer=watch_parent,
                initargs=(os.getpid(),),
            ) as pool:
                futures = {
                    pool.submit(stage_case, entries[i], manifest, config, limits, staging): i
                    for i in todo
                }
                if progress:
                    message = f"{workers} processes"
                    progress(ImportProgress(len(by_index), total, message, images, strips))
                for future in as_completed(futures):
                    i = futures[future]
                    done_with(i, future.result())
                    if progress:
                        message = f"case {entries[i].case_id}"
                        progress(ImportProgress(len(by_index), total, message, images, strips))
        except BrokenProcessPool:
            # a worker ended abruptly (killed, or it could not start): the cases it left
            # are staged here, one at a time, so the import is the same; said in the log
            log.warning(
                "the staging pool broke after %d of %d cases; staging the rest one at a time",
                len(by_index),
                len(entries),
            )
            for i in todo:
                if i not in by_index:
                    done_with(i, stage_case(entries[i], manifest, config, limits, staging))
    results = [by_index[i] for i in range(len(entries))]
    prepared: list[StagedCase] = []
    for staged, part in results:
        _merge(report, part)
        if staged is not None:
            prepared.append(staged)
    if progress:
        progress(ImportProgress(total - 1, total, "saving", images, strips))
    return prepared


def with_report_fields(manifest: Manifest, config: StudyConfig) -> tuple[StudyConfig, list[str]]:
    """Report cases need a reference report; any report case turns on the rubric."""
    rows = [
        (e.where, effective_mode(e.answer, config.answer), e.reference_findings,
         e.reference_impression)
        for e in manifest.entries
    ]  # fmt: skip
    if any(mode == "report" for _, mode, _, _ in rows) and not config.report_fields:
        config = replace(config, report_fields=tuple(REPORT_FIELDS))
    return config, missing_references(rows)


__all__ = [
    "SLUG",
    "Checked",
    "Edit",
    "ImportProgress",
    "Progress",
    "StagedCase",
    "check",
    "default_slug",
    "import_workers",
    "stage_case",
    "study_exists",
    "with_report_fields",
]
