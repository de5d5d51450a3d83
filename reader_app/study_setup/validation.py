"""The ONE adapter between browser set-up and the importer (reader_app.ingest).

Each step runs the importer's own pieces, the ones ``readerstudy import`` runs
(``staging.check``, the one staging loop, and ``importer.commit_staged``, the
one transaction), so the browser and the CLI accept and refuse the same
studies. The browser passes what it decides itself: the study's name and
target (checked by ``service``), the stored settings when adding cases, and
the burned-in decisions.

- ``scan``: every problem (file, line, field, message) and every image the
  burned-in guard flags, rendered for review. Writes nothing to the database
  or the asset store (its staging folder is removed).
- ``run_import``: the decisions applied (cleared: ``reviewed_by`` is the
  signed-in coordinator; excluded: the case is left out), every case rendered
  into a staging folder with progress. A cleared case whose rendered pixels
  differ from the ones shown at review (their sha256) is refused: a decision
  clears the pixels seen, not a case id.
- ``save``: one transaction, a new study or cases added to an open one, with the
  audit events of the import and of each burned-in decision; all or nothing.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from sqlalchemy.engine import Engine
from sqlmodel import Session

from reader_app.core.audit import record_event
from reader_app.core.settings import Settings
from reader_app.ingest.errors import ImportFailed
from reader_app.ingest.importer import commit_staged
from reader_app.ingest.manifest import ManifestEntry
from reader_app.ingest.report import IngestionReport, Problem
from reader_app.ingest.staging import Checked, Edit, Progress, StagedCase, check
from reader_app.study.casebank import RenderedImage
from reader_app.study.config import StudyConfig

CLEAR, EXCLUDE = "clear", "exclude"
# While checking, every case has a stand-in reviewer: the guard still flags its
# images, but the case is rendered (for the review screen) instead of refused.
IN_REVIEW = "(burned-in review)"


@dataclass(frozen=True)
class Flagged:
    """A case the burned-in guard refuses until a named person has looked at its pixels."""

    case_id: str
    where: str  # "manifest.csv line 3"
    file: str  # the flagged file, relative to the manifest
    reason: str
    manifest_reviewed_by: str | None  # what the CSV said; the screen decides
    images: tuple[RenderedImage, ...]
    digests: tuple[str, ...] = ()  # the sha256 of each PNG shown: what a decision clears


@dataclass(frozen=True)
class Scan:
    manifest: Path
    title: str | None
    cases: int
    strips: int
    problems: list[Problem]
    flagged: list[Flagged]


def _check(
    manifest_path: Path,
    settings: Settings,
    staging: Path,
    *,
    slug: str,
    config: dict[str, Any] | None,
    edit: Edit,
    progress: Progress | None = None,
) -> Checked:
    """The importer's check (``config`` given: adding to a study, whose settings rule).

    Staged serially (``workers=1``): this runs in the process that serves the readers,
    whose cores a pool of staging processes would take from them (issue 43), and a
    pool started from the threaded server hung the browser import. The command line
    (``readerstudy import``) stages volumes in parallel."""
    return check(
        manifest_path,
        settings=settings,
        staging=staging,
        slug=slug,
        config=None if config is None else StudyConfig.from_stored(config, title=slug),
        slug_checked=True,  # service checks the name and the target study itself
        edit=edit,
        progress=progress,
        workers=1,
    )


def scan(
    manifest_path: Path,
    *,
    settings: Settings,
    title: str,
    config: dict[str, Any] | None = None,
    existing_case_ids: frozenset[str] = frozenset(),
) -> Scan:
    """Every problem and every flagged image; nothing is written to the study or the store."""
    staging = Path(tempfile.mkdtemp(prefix=".scan-", dir=settings.data_dir))
    try:
        checked = _check(
            manifest_path,
            settings,
            staging,
            slug=title,
            config=config,
            edit=lambda entry: replace(entry, reviewed_by=IN_REVIEW),
        )
        entries = checked.manifest.entries if checked.manifest else ()
        flagged = _flagged(checked, {e.case_id: e for e in entries}, staging)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    problems = [
        Problem.at_row(e.where, "case_id", "this study already has that case id")
        for e in entries
        if e.case_id.casefold() in existing_case_ids
    ]
    rows = {e.case_id: e.where for e in entries}
    problems += [Problem.parse(message).on_row(rows) for message in checked.problems]
    study_title = checked.config.title if checked.config else None
    strips = sum(e.kind == "strip" for e in entries)
    return Scan(manifest_path, study_title, len(entries), strips, problems, flagged)


def _flagged(
    checked: Checked, entries: Mapping[str, ManifestEntry], staging: Path
) -> list[Flagged]:
    """Each rendered case the guard flagged (its first flagged file), with its images."""
    staged = {case.prepared.entry.case_id: case for case in checked.prepared}
    flagged: dict[str, Flagged] = {}
    for image in checked.report.flagged:
        case = staged.get(image.case_id)
        if case is None or image.case_id in flagged:  # not rendered: its problem is listed
            continue
        entry = entries[image.case_id]
        flagged[image.case_id] = Flagged(
            image.case_id,
            entry.where,
            image.file,
            image.reason,
            entry.reviewed_by,
            tuple(case.images(staging)),
            tuple(case.digests),
        )
    return list(flagged.values())


def run_import(
    manifest_path: Path,
    *,
    settings: Settings,
    slug: str,
    decisions: Mapping[str, str],
    reviewer: str,
    progress: Progress,
    config: dict[str, Any] | None = None,
    reviewed: Mapping[str, tuple[str, ...]] | None = None,
    staging_folders: list[Path] | None = None,
) -> tuple[StudyConfig, list[StagedCase], IngestionReport, Path]:
    """Apply the decisions and stage every case; raise ImportFailed on any problem.

    ``reviewed``: each flagged case's PNG digests as shown at review; a cleared case
    must render to exactly those. ``staging_folders`` gets the staging folder (the
    job's heartbeat keeps it fresh). Returns what ``save`` needs, with the staging
    folder the caller must remove.
    """

    def decide(entry: ManifestEntry) -> ManifestEntry | None:
        decision = decisions.get(entry.case_id)
        if decision == EXCLUDE:
            return None
        return replace(entry, reviewed_by=reviewer) if decision == CLEAR else entry

    staging = Path(tempfile.mkdtemp(prefix=".stage-", dir=settings.data_dir))
    if staging_folders is not None:
        staging_folders.append(staging)
    try:
        checked = _check(
            manifest_path,
            settings,
            staging,
            slug=slug,
            config=config,
            edit=decide,
            progress=progress,
        )
        if checked.problems or checked.config is None:
            raise ImportFailed(checked.problems, checked.report.text())
        changed = _changed_since_review(checked.prepared, decisions, reviewed or {})
        if changed:
            raise ImportFailed(changed)
        if not checked.prepared:
            raise ImportFailed(["every case was excluded: nothing to import"])
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return checked.config, checked.prepared, checked.report, staging


def _changed_since_review(
    staged: list[StagedCase], decisions: Mapping[str, str], reviewed: Mapping[str, tuple[str, ...]]
) -> list[str]:
    """A problem for each cleared case whose pixels are not the ones the reviewer saw."""
    return [
        f"case {case.prepared.entry.case_id}: its images changed after the burned-in review "
        "(their pixels differ from the ones cleared); check the study again and review them"
        for case in staged
        if decisions.get(case.prepared.entry.case_id) == CLEAR
        and tuple(case.digests) != tuple(reviewed.get(case.prepared.entry.case_id, ()))
    ]


def save(
    engine: Engine,
    settings: Settings,
    *,
    adding: bool,
    slug: str,
    config: StudyConfig,
    staged: list[StagedCase],
    staging: Path,
    report: IngestionReport,
    actor: str,
    decisions: Mapping[str, str],
    source: Mapping[str, Any],
    reviewed: Mapping[str, tuple[str, ...]] | None = None,
) -> int:
    """Save everything or nothing; return the study id."""

    def record_decisions(session: Session, study_id: int) -> None:
        for case_id, decision in sorted(decisions.items()):
            record_event(
                session=session,
                actor=actor,
                action="case.burned_in_cleared" if decision == CLEAR else "case.excluded",
                study_id=study_id,
                case=case_id,
                reviewer=actor,
                reason="burned-in review" if decision == EXCLUDE else "no burned-in text",
                pixels_sha256=list((reviewed or {}).get(case_id, ())),
            )

    return commit_staged(
        engine,
        settings,
        slug=slug,
        config=config,
        prepared=staged,
        staging=staging,
        report=report,
        actor=actor,
        adding=adding,
        audit={"via": "browser", **source},
        also=record_decisions,
    )
