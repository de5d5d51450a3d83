"""Check a study folder and render every case into a staging folder (import phases 1 and 2).

``check`` parses the manifest and study.toml, then reads and renders every
case, its PNGs written to a private staging folder (not the store, keeping
memory flat), collecting *all* problems; it writes nothing else. It is the
one staging loop: ``importer.validate`` and ``importer.import_manifest`` run
it, and so does the browser's set-up (``reader_app.study_setup.validation``),
with the settings of the study it adds to and its burned-in decisions.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from sqlmodel import Session

from reader_app.core.db import make_engine
from reader_app.core.settings import Settings
from reader_app.ingest.errors import IngestError
from reader_app.ingest.manifest import Manifest, ManifestEntry, ManifestInvalid, load_manifest
from reader_app.ingest.prepare import CaseRefused, Limits, PreparedCase, Refused, prepare_case
from reader_app.ingest.report import IngestionReport
from reader_app.ingest.study_config import load_study_config
from reader_app.study.assets import sha256_hex
from reader_app.study.case_reports import REPORT_FIELDS, effective_mode, missing_references
from reader_app.study.casebank import RenderedImage, get_study
from reader_app.study.config import StudyConfig

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

    def images(self, staging: Path) -> list[RenderedImage]:
        """Its rendered images, the PNG bytes read back from ``staging``."""
        return [
            replace(im, png=(staging / f"{digest}.png").read_bytes())
            for im, digest in zip(self.prepared.images, self.digests, strict=True)
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
) -> Checked:
    """Phases 1 and 2: every stage runs, whatever an earlier stage found.

    The set-up flows of the browser pass what they decide themselves: ``config``,
    the settings of the study cases are added to (study.toml is then not read);
    ``slug_checked``, the slug's form and target are checked by the caller (the
    study may exist); ``edit``, each loaded entry changed (a reviewer's name) or
    left out (None) before it is staged.
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
        prepared = _stage(staged, defaults, settings, report, staging, progress)
    report.errors[:0] = errors  # manifest and settings problems first
    return Checked(slug, config, manifest, prepared, report.refused + report.errors, report)


def study_exists(settings: Settings, slug: str) -> bool:
    engine = make_engine(settings.database_url, pooled=False)
    try:
        with Session(engine) as session:
            return get_study(session=session, slug=slug) is not None
    finally:
        engine.dispose()


def _stage(
    manifest: Manifest,
    config: StudyConfig,
    settings: Settings,
    report: IngestionReport,
    staging: Path,
    progress: Progress | None,
) -> list[StagedCase]:
    """Render every case; PNGs go to staging (not the store), keeping memory flat."""
    prepared: list[StagedCase] = []
    total = len(manifest.entries) + 1  # +1: the final transaction
    images = strips = 0
    for done, entry in enumerate(manifest.entries):
        if progress:
            progress(ImportProgress(done, total, f"case {entry.case_id}", images, strips))
        try:
            case = prepare_case(
                entry, manifest, config=config, limits=Limits.of(settings), report=report
            )
        except CaseRefused as exc:
            for refused in exc.refusals:
                report.problem(f"case {entry.case_id}: {refused}", refused=True)
            if exc.error is not None:
                report.problem(f"case {entry.case_id}: {exc.error}")
            continue
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
        images += len(digests)
        strips += entry.kind == "strip"
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
    "study_exists",
    "with_report_fields",
]
