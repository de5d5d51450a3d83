"""``import_manifest``: validate and render everything, then import in one transaction.

Phase 1 parses the manifest and study.toml. Phase 2 reads and renders every
case into a private staging folder, collecting *all* problems (both are
``staging.check``, the one staging loop). Only if there are none does phase 3
(``commit_staged``) open one transaction that creates the study and its cases
(assets enter the store here); if that fails, it rolls back and removes the
assets it added. Either the whole study is imported or nothing changes.

The browser's set-up (``reader_app.study_setup``) runs the same two steps, and
``commit_staged`` can also append the cases to an open study.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import func
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from reader_app.core.audit import record_event
from reader_app.core.db import make_engine
from reader_app.core.settings import Settings
from reader_app.ingest.errors import ImportFailed
from reader_app.ingest.report import IngestionReport, Problem, Validation
from reader_app.ingest.resume import ResumeFolder
from reader_app.ingest.staging import ImportProgress, Progress, StagedCase, check, default_slug
from reader_app.models import Case, CaseImage, Study
from reader_app.study.assets import AssetClaim, asset_path, claim_assets, remove_unclaimed
from reader_app.study.case_reports import effective_mode, store_case_report
from reader_app.study.casebank import add_case, create_study, get_study
from reader_app.study.config import StudyConfig

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ImportResult:
    slug: str
    study_id: int
    cases: int
    images: int
    new_assets: int
    report: IngestionReport


def validate(
    manifest_path: Path | str,
    *,
    settings: Settings,
    slug: str | None = None,
    progress: Progress | None = None,
) -> Validation:
    """Check a study folder as ``import_manifest`` would, and write nothing.

    Every problem of every stage (manifest rows, study.toml, files, the
    burned-in guard) is returned in one pass, each as a ``Problem`` (file,
    line, field, message), with the images the burned-in guard flagged (the
    review queue: clear an image with reviewed_by, or exclude its case).
    """
    staging = Path(tempfile.mkdtemp(prefix=".validate-", dir=settings.data_dir))
    try:
        checked = check(
            Path(manifest_path), settings=settings, staging=staging, slug=slug, progress=progress
        )
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return Validation(
        slug=checked.slug,
        problems=[Problem.parse(m) for m in checked.problems],
        flagged=list(checked.report.flagged),
        report=checked.report,
    )


def import_manifest(
    manifest_path: Path | str,
    *,
    settings: Settings,
    slug: str | None = None,
    progress: Progress | None = None,
    actor: str = "import",
    workers: int | None = None,
    resume: bool = False,
) -> ImportResult:
    """Import a study from a manifest; raise ImportFailed (and change nothing) on any problem.
    ``workers``: processes staging volume cases (staging.import_workers by default).
    ``resume``: stage in this manifest's own folder, taking the cases a killed or
    interrupted run of it had staged (``reader_app.ingest.resume``)."""
    path = Path(manifest_path)
    folder = ResumeFolder.open(settings, path, slug or default_slug(path)) if resume else None
    if folder is not None:
        staging = folder.folder
    else:
        staging = Path(tempfile.mkdtemp(prefix=".import-", dir=settings.data_dir))
    stopped = False  # killed or interrupted midway: a resume folder stays for the next run
    try:
        checked = check(
            path,
            settings=settings,
            staging=staging,
            slug=slug,
            progress=progress,
            workers=workers,
            resume=folder,
        )
        report = checked.report
        if checked.problems or checked.config is None:
            raise ImportFailed(checked.problems, report.text())
        prepared = checked.prepared
        engine = make_engine(settings.database_url, pooled=False)
        try:
            study_id = commit_staged(
                engine,
                settings,
                slug=checked.slug,
                config=checked.config,
                prepared=prepared,
                staging=staging,
                report=report,
                actor=actor,
            )
        finally:
            engine.dispose()
    except (KeyboardInterrupt, SystemExit):
        stopped = True
        raise
    finally:
        if folder is not None:
            folder.close(keep=stopped)
        else:
            shutil.rmtree(staging, ignore_errors=True)
    if progress:
        steps, strips = len(prepared) + 1, sum(c.prepared.entry.kind == "strip" for c in prepared)
        progress(ImportProgress(steps, steps, "done", report.images, strips))
    return ImportResult(
        checked.slug, study_id, report.cases, report.images, report.new_assets, report
    )


def commit_staged(
    engine: Engine,
    settings: Settings,
    *,
    slug: str,
    config: StudyConfig,
    prepared: list[StagedCase],
    staging: Path,
    report: IngestionReport,
    actor: str,
    adding: bool = False,
    audit: Mapping[str, Any] | None = None,
    also: Callable[[Session, int], None] | None = None,
) -> int:
    """Phase 3: one transaction, a new study or (``adding``) cases appended to an open one.

    ``audit`` adds fields to the import's audit event; ``also`` writes more in the
    same transaction (the browser's burned-in decisions). Saves everything or
    nothing (the assets this import added are removed); returns the study id.
    """
    digests = {d for case in prepared for d in case.all_digests}
    claim = claim_assets(settings.asset_dir, digests)  # before relying on any existing asset
    new = {d for d in digests if not asset_path(settings.asset_dir, d).exists()}
    report.cases = len(prepared)
    report.images = sum(len(c.digests) for c in prepared)
    report.new_assets = len(new)
    with Session(engine, expire_on_commit=False) as session:
        try:
            study, start = _target(session, slug, config, adding)
            assert study.id is not None
            for offset, staged in enumerate(prepared):
                add_staged_case(
                    session=session,
                    asset_dir=settings.asset_dir,
                    study=study,
                    staged=staged,
                    staging=staging,
                    position=start + offset,
                    config=config,
                )
            record_event(
                session=session,
                actor=actor,
                action="study.add_cases" if adding else "study.import",
                study_id=study.id,
                **(audit or {}),
                **report.summary(),
            )
            if also is not None:
                also(session, study.id)
            session.commit()
        except BaseException as exc:
            session.rollback()
            remove_unreferenced(engine, settings.asset_dir, new, claim)
            if isinstance(exc, IntegrityError) and duplicate_case_id(exc):
                raise ImportFailed(
                    [
                        f"study {slug!r} already has one of these case ids (compared ignoring "
                        "upper and lower case): another import saved it first"
                    ]
                ) from exc
            if isinstance(exc, IntegrityError):
                raise ImportFailed([f"could not save study {slug!r}: {exc.orig}"]) from exc
            raise
    claim.release()
    report.imported = True
    return study.id


def duplicate_case_id(exc: IntegrityError) -> bool:
    """The commit broke a study's unique case ids (``uq_case_source_ci``: ignoring case,
    migration 0025_import_safety, or ``uq_case_source``): checked at commit, so two
    imports that each scanned before the other saved cannot both add one."""
    text = str(exc.orig)
    return "uq_case_source" in text or "cases.study_id, cases.source_id" in text


def _target(session: Session, slug: str, config: StudyConfig, adding: bool) -> tuple[Study, int]:
    """The study the cases go into (created, unless adding), and its first new position."""
    study = get_study(session=session, slug=slug)
    if not adding:
        if study is not None:
            raise ImportFailed([f"a study named {slug!r} already exists"])
        study = create_study(
            session=session, slug=slug, title=config.title, config=config.to_json()
        )
        return study, 0
    if study is None:
        raise ImportFailed([f"study {slug!r} no longer exists"])
    if study.state != "open":
        raise ImportFailed(
            [f"study {slug!r} is {study.state}: cases are added only to an open study"]
        )
    last = session.exec(select(func.max(Case.position)).where(Case.study_id == study.id)).one()
    return study, (last if last is not None else -1) + 1


def add_staged_case(
    *,
    session: Session,
    asset_dir: Path,
    study: Study,
    staged: StagedCase,
    staging: Path,
    position: int,
    config: StudyConfig,
) -> Case:
    """One rendered case into the study (its PNGs read back from ``staging``), with its
    answer mode, reference report and reference region or mask; flushes only. The CLI
    and the browser import share it."""
    prepared = staged.prepared
    entry = prepared.entry
    row = add_case(
        session=session,
        asset_dir=asset_dir,
        study=study,
        source_id=entry.case_id,
        kind=entry.kind,
        images=staged.images(staging),
        diagnosis=entry.diagnosis,
        synonyms=entry.synonyms,
        position=position,
        practice=entry.practice,
        history=entry.history,
        modality=prepared.modality,
        region=entry.region,
        reviewed_by=entry.reviewed_by,
        reference_region=prepared.reference.region,
        reference_mask=prepared.reference.mask,
    )
    store_case_report(
        session=session,
        case=row,
        mode=effective_mode(entry.answer, config.answer),
        reference_findings=entry.reference_findings,
        reference_impression=entry.reference_impression,
    )
    return row


def remove_unreferenced(
    engine: Engine, asset_dir: Path, digests: set[str], claim: AssetClaim
) -> set[str]:
    """Undo this import's asset writes, keeping any that a committed case or an
    import still in flight uses (see ``assets.remove_unclaimed``)."""

    def committed(candidates: set[str]) -> set[str]:
        with Session(engine) as session:
            query = select(CaseImage.sha256).where(col(CaseImage.sha256).in_(candidates))
            values = select(CaseImage.values_sha256).where(
                col(CaseImage.values_sha256).in_(candidates)
            )
            return set(session.exec(query)) | {v for v in session.exec(values) if v}

    removed = remove_unclaimed(asset_dir, digests, claim, committed)
    if removed:
        log.info("failed import: removed %d asset(s) it had added", len(removed))
    return removed


__all__ = [
    "ImportFailed",
    "ImportProgress",
    "ImportResult",
    "Problem",
    "Progress",
    "Validation",
    "commit_staged",
    "import_manifest",
    "validate",
]
