"""``import_manifest``: validate and render everything, then import in one transaction.

Phase 1 parses the manifest and study.toml. Phase 2 reads and renders every
case into a private staging folder, collecting *all* problems. Only if there
are none does phase 3 open one transaction that creates the study and its
cases (assets enter the store here); if that fails, it rolls back and removes
the assets it added. Either the whole study is imported or nothing changes.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from reader_app.audit import record_event
from reader_app.casebank import add_case, create_study, get_study
from reader_app.db import make_engine
from reader_app.ingest.assets import asset_path, sha256_hex
from reader_app.ingest.errors import ImportFailed, IngestError
from reader_app.ingest.manifest import Manifest, ManifestInvalid, load_manifest
from reader_app.ingest.prepare import PreparedCase, Refused, prepare_case
from reader_app.ingest.report import IngestionReport
from reader_app.ingest.study_config import load_study_config
from reader_app.models import CaseImage
from reader_app.settings import Settings

Progress = Callable[[int, int, str], None]  # (done, total, what is happening)
SLUG = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


@dataclass(frozen=True)
class StagedCase:
    """A rendered case whose PNGs wait in the staging folder, named by digest."""

    prepared: PreparedCase  # its images have png=b"": the bytes are on disk
    digests: list[str]


@dataclass(frozen=True)
class ImportResult:
    slug: str
    study_id: int
    cases: int
    images: int
    new_assets: int
    report: IngestionReport


def default_slug(manifest_path: Path) -> str:
    return Path(manifest_path).resolve().parent.name


def import_manifest(
    manifest_path: Path | str,
    *,
    settings: Settings,
    slug: str | None = None,
    progress: Progress | None = None,
    actor: str = "import",
) -> ImportResult:
    """Import a study from a manifest; raise ImportFailed (and change nothing) on any problem."""
    path = Path(manifest_path)
    slug = slug or default_slug(path)
    report = IngestionReport(manifest=path.name, slug=slug)
    if not SLUG.match(slug):
        why = "use letters, digits, '.', '_' or '-' (at most 64); see --study"
        raise ImportFailed([f"study slug {slug!r}: {why}"])
    try:
        manifest = load_manifest(path)
        practice = sum(e.practice for e in manifest.entries)
        config = load_study_config(path.parent / "study.toml", title=slug, practice_cases=practice)
    except ManifestInvalid as exc:
        raise ImportFailed(exc.errors) from exc
    except IngestError as exc:
        raise ImportFailed([str(exc)]) from exc
    engine = make_engine(settings.database_url, pooled=False)
    try:
        with Session(engine) as session:
            if get_study(session=session, slug=slug) is not None:
                raise ImportFailed([f"a study named {slug!r} already exists"])
        staging = Path(tempfile.mkdtemp(prefix=".import-", dir=settings.data_dir))
        try:
            prepared = _stage(manifest, config, settings, report, staging, progress)
            if report.refused or report.errors:
                raise ImportFailed(report.refused + report.errors, report.text())
            study_id = _commit(engine, settings, slug, config, prepared, staging, report, actor)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    finally:
        engine.dispose()
    if progress:
        progress(len(prepared) + 1, len(prepared) + 1, "done")
    return ImportResult(slug, study_id, report.cases, report.images, report.new_assets, report)


def _stage(
    manifest: Manifest,
    config: dict[str, Any],
    settings: Settings,
    report: IngestionReport,
    staging: Path,
    progress: Progress | None,
) -> list[StagedCase]:
    """Render every case; PNGs go to staging (not the store), keeping memory flat."""
    prepared: list[StagedCase] = []
    total = len(manifest.entries) + 1  # +1: the final transaction
    for done, entry in enumerate(manifest.entries):
        if progress:
            progress(done, total, f"case {entry.case_id}")
        try:
            case = prepare_case(
                entry, manifest, config=config, max_pixels=settings.max_pixels, report=report
            )
        except Refused as exc:
            report.problem(f"case {entry.case_id}: {exc}", refused=True)
            continue
        except IngestError as exc:
            report.problem(f"case {entry.case_id}: {exc}")
            continue
        except Exception as exc:  # a decoder bug must still name the case and file
            report.problem(f"{entry.where}: unexpected {type(exc).__name__}: {exc}")
            continue
        digests = []
        for image in case.images:
            digests.append(sha256_hex(image.png))
            (staging / f"{digests[-1]}.png").write_bytes(image.png)
        bare = replace(case, images=[replace(im, png=b"") for im in case.images])
        prepared.append(StagedCase(bare, digests))
    if progress:
        progress(total - 1, total, "saving")
    return prepared


def _commit(
    engine: Engine,
    settings: Settings,
    slug: str,
    config: dict[str, Any],
    prepared: list[StagedCase],
    staging: Path,
    report: IngestionReport,
    actor: str,
) -> int:
    digests = {d for case in prepared for d in case.digests}
    new = {d for d in digests if not asset_path(settings.asset_dir, d).exists()}
    report.cases = len(prepared)
    report.images = sum(len(c.digests) for c in prepared)
    report.new_assets = len(new)
    with Session(engine, expire_on_commit=False) as session:
        try:
            study = create_study(session=session, slug=slug, title=config["title"], config=config)
            for position, staged in enumerate(prepared):
                case, entry = staged.prepared, staged.prepared.entry
                images = [
                    replace(im, png=(staging / f"{digest}.png").read_bytes())
                    for im, digest in zip(case.images, staged.digests, strict=True)
                ]
                add_case(
                    session=session,
                    asset_dir=settings.asset_dir,
                    study=study,
                    source_id=entry.case_id,
                    kind=entry.kind,
                    images=images,
                    diagnosis=entry.diagnosis,
                    synonyms=entry.synonyms,
                    position=position,
                    practice=entry.practice,
                    history=entry.history,
                    modality=case.modality,
                    region=entry.region,
                    reviewed_by=entry.reviewed_by,
                )
            record_event(
                session=session,
                actor=actor,
                action="study.import",
                study_id=study.id,
                **report.summary(),
            )
            session.commit()
        except BaseException as exc:
            session.rollback()
            _remove_unreferenced(engine, settings.asset_dir, new)
            if isinstance(exc, IntegrityError):
                raise ImportFailed([f"could not save study {slug!r}: {exc.orig}"]) from exc
            raise
    report.imported = True
    assert study.id is not None
    return study.id


def _remove_unreferenced(engine: Engine, asset_dir: Path, digests: set[str]) -> None:
    """Undo this import's asset writes (keeping any that a committed case now uses)."""
    if not digests:
        return
    with Session(engine) as session:
        used = set(session.exec(select(CaseImage.sha256).where(col(CaseImage.sha256).in_(digests))))
    for digest in digests - used:
        asset_path(asset_dir, digest).unlink(missing_ok=True)


__all__ = ["ImportFailed", "ImportResult", "Progress", "import_manifest"]
