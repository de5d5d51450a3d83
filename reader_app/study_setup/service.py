"""What the set-up page calls: receive a ZIP or pick a server folder, check, import.

Coordinators only (checked here, not just by hiding the page). Each step is
audited with counts and content hashes, never a file, folder or path name (they
may hold a patient's name): the upload (size, sha256) or the server folder
(the manifest's sha256), refusals (the rule's code), and, in the import's own
transaction, who cleared or excluded which case and the sha256 of the pixels
they saw.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from sqlmodel import Session, select

from reader_app.core.audit import record_event
from reader_app.core.auth import Invite, invite_reader, require_role
from reader_app.core.errors import ReaderStudyError
from reader_app.core.settings import Settings
from reader_app.ingest.report import Problem
from reader_app.ingest.staging import SLUG
from reader_app.models import Case, ImportJob, Reader, Study
from reader_app.study.casebank import get_study
from reader_app.study.config import stored_config
from reader_app.study_setup.jobs import ADD, NEW, ImportPlan, start_import
from reader_app.study_setup.validation import CLEAR, EXCLUDE, Scan, scan
from reader_app.study_setup.workspace import (
    SourceRefused,
    file_sha256,
    find_manifest,
    new_workspace,
    remove_workspace,
    server_folder,
)
from reader_app.study_setup.zip_directory import UnsafeZip
from reader_app.study_setup.zipsafe import DISK_FULL, receive_upload, safe_extract


class SetupError(ReaderStudyError, ValueError):
    """A refusal the page shows as it is."""


@dataclass(frozen=True)
class Source:
    manifest: Path
    name: str  # the ZIP's file name, or the folder: shown on screen, never stored
    audit: dict[str, Any] = field(default_factory=dict)  # counts and hashes only
    workspace: Path | None = None  # ours to remove; None for a server folder


def receive_zip(
    *, session: Session, settings: Settings, actor: Reader, upload: BinaryIO, name: str
) -> Source:
    """Save the upload (hashing it), audit it and extract it safely; refuse and clean up."""
    require_role(actor, "coordinator")
    limit = settings.max_upload_mb * 1_000_000
    workspace = new_workspace(settings)
    sha256 = None
    try:
        received = receive_upload(upload, name, workspace / "upload.zip", max_bytes=limit)
        sha256 = received.sha256
        audit = {"size": received.size, "sha256": received.sha256}
        record_event(
            session=session,
            actor=actor.code,
            action="setup.upload",
            study_id=actor.study_id,
            **audit,
        )
        session.commit()
        (workspace / "files").mkdir()
        safe_extract(received.path, workspace / "files", max_bytes=limit)
        received.path.unlink()
        manifest = find_manifest(workspace / "files")
    except (UnsafeZip, SourceRefused, OSError) as exc:
        if isinstance(exc, OSError) and exc.errno not in DISK_FULL:
            remove_workspace(settings, workspace)
            raise
        remove_workspace(settings, workspace)
        session.rollback()
        full = isinstance(exc, OSError)
        record_event(
            session=session,
            actor=actor.code,
            action="setup.refused",
            study_id=actor.study_id,
            rule="disk-full" if full else getattr(exc, "rule", "no-manifest"),
            sha256=sha256,
        )
        session.commit()
        if full:
            raise SetupError(
                "the server's disk is full: the ZIP could not be saved and unpacked there; "
                "nothing was kept (ask the operator to free space, then upload it again)"
            ) from exc
        raise SetupError(str(exc)) from exc
    except BaseException:
        remove_workspace(settings, workspace)
        raise
    return Source(manifest=manifest, name=name, audit=audit, workspace=workspace)


def choose_folder(*, session: Session, settings: Settings, actor: Reader, raw: str) -> Source:
    require_role(actor, "coordinator")
    try:
        folder = server_folder(settings, raw)
        manifest = find_manifest(folder)
    except SourceRefused as exc:
        raise SetupError(str(exc)) from exc
    assert settings.import_root is not None
    rel = folder.relative_to(settings.import_root.resolve()).as_posix() or "."
    audit = {"server_folder": True, "manifest_sha256": file_sha256(manifest)}
    record_event(
        session=session,
        actor=actor.code,
        action="setup.server_folder",
        study_id=actor.study_id,
        **audit,
    )
    session.commit()
    return Source(manifest=manifest, name=rel, audit=audit)


def discard(settings: Settings, source: Source | None) -> None:
    if source is not None:
        remove_workspace(settings, source.workspace)


def _target(
    session: Session, actor: Reader, mode: str, slug: str
) -> tuple[Study | None, list[Problem]]:
    if mode == ADD:
        study = session.get(Study, actor.study_id)
        if study is None or study.state != "open":
            state = study.state if study else "gone"
            return study, [
                Problem.at(
                    "(study)",
                    None,
                    None,
                    f"this study is {state}: cases are added only to an open study",
                )
            ]
        return study, []
    if not SLUG.match(slug):
        why = "use letters, digits, '.', '_' or '-' (at most 64), starting with a letter or digit"
        return None, [Problem.at("(study)", None, "slug", f"study name {slug!r}: {why}")]
    if get_study(session=session, slug=slug) is not None:
        return None, [Problem.at("(study)", None, "slug", f"a study named {slug!r} already exists")]
    return None, []


def check(
    *, session: Session, settings: Settings, actor: Reader, source: Source, mode: str, slug: str
) -> Scan:
    """Every problem and every flagged image; writes nothing."""
    require_role(actor, "coordinator")
    study, problems = _target(session, actor, mode, slug)
    config = existing = None
    if mode == ADD and study is not None:
        config = stored_config(study)
        existing = frozenset(
            s.casefold()
            for s in session.exec(select(Case.source_id).where(Case.study_id == study.id))
        )
        slug = study.slug
    result = scan(
        source.manifest,
        settings=settings,
        title=slug,
        config=config,
        existing_case_ids=existing or frozenset(),
    )
    return Scan(
        result.manifest,
        result.title,
        result.cases,
        result.strips,
        problems + result.problems,
        result.flagged,
    )


def begin_import(
    *,
    session: Session,
    settings: Settings,
    actor: Reader,
    source: Source,
    result: Scan,
    mode: str,
    slug: str,
    decisions: Mapping[str, str],
) -> int:
    """Start the import job once there is no problem and every flagged case is decided."""
    require_role(actor, "coordinator")
    if result.problems:
        raise SetupError("fix the problems listed above first; nothing was written")
    undecided = [
        f.case_id for f in result.flagged if decisions.get(f.case_id) not in (CLEAR, EXCLUDE)
    ]
    if undecided:
        raise SetupError(f"decide every flagged image first: {', '.join(undecided)}")
    study, problems = _target(session, actor, mode, slug)
    if problems:
        raise SetupError(problems[0].text)
    flagged = {f.case_id for f in result.flagged}
    plan = ImportPlan(
        mode=mode,
        slug=study.slug if study is not None else slug,
        manifest=source.manifest,
        source_name=source.name,
        source=source.audit,
        decisions={k: v for k, v in decisions.items() if k in flagged},
        config=stored_config(study) if study is not None else None,
        reviewed={f.case_id: f.digests for f in result.flagged},
        workspace=source.workspace,
    )
    return start_import(settings, actor=actor.code, actor_study_id=actor.study_id, plan=plan)


def coordinator_link_for(*, session: Session, actor: Reader, job: ImportJob) -> Invite:
    """A sign-in link to the study this coordinator just created (and only that)."""
    require_role(actor, "coordinator")
    if job.mode != NEW or job.state != "done" or job.study_id is None:
        raise SetupError("this import did not create a study")
    if job.actor_study_id != actor.study_id or job.actor != actor.code:
        raise SetupError("only the coordinator who created the study can get its link here")
    study = session.get(Study, job.study_id)
    assert study is not None
    invite = invite_reader(
        session=session, study=study, code=actor.code, role="coordinator", actor=actor.code
    )
    session.commit()
    return invite
