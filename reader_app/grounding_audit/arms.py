"""What each arm of the audit sends, case by case: runner jobs and their provenance.

``original`` and ``text_only`` send the stored reader PNGs (``text_only``: none
of them, the runner's ``no_images``). ``occlude_relevant`` and
``occlude_irrelevant`` send derived PNGs, stored content-addressed in the audit
store ``<asset_dir>/audit`` (``store_dir``): readers are served from the asset
store through ``case_images`` only, so these bytes can never reach one. ``swap``
sends a same-diagnosis partner case's stored PNGs. Every image an arm sends is
recorded in ``audit_images`` with its source, region, seed and fill.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Final

from sqlmodel import Session, col, select

from reader_app.exam.next_case import ImageView
from reader_app.grading.normalize import normalize_answer
from reader_app.grounding.hits import Reference, case_references
from reader_app.grounding_audit.images import (
    FILLS,
    NoRoomError,
    area_text,
    decode,
    encode,
    fill_value,
    irrelevant_area,
    occlude,
    region_plane,
)
from reader_app.models import AnswerKey, AuditImage, Case, Study
from reader_app.runs.case_job import CaseJob
from reader_app.runs.grounded import strip_slice_number
from reader_app.runs.runner import case_jobs
from reader_app.study.assets import load_asset, store_asset
from scoring import AUDIT_ARMS as ARMS

DERIVED: Final = ("occlude_relevant", "occlude_irrelevant")


def store_dir(asset_dir: Path) -> Path:
    """The audit store: derived images, apart from every image a reader can be served."""
    return asset_dir / "audit"


@dataclass(frozen=True)
class ArmPlan:
    arm: str
    jobs: list[CaseJob]
    asset_dir: Path  # where the runner loads this arm's images from
    left_out: dict[str, str] = field(default_factory=dict)  # source id -> why


@dataclass(frozen=True)
class AuditSettings:
    fill: str = "median"
    seed: int = 0
    tolerance: float = 0.0

    def __post_init__(self) -> None:
        if self.fill not in FILLS:
            raise ValueError(f"--fill must be one of {', '.join(FILLS)}, not {self.fill!r}")

    def of_arm(self, arm: str) -> dict[str, object]:
        """The parameters an arm's images depend on (recorded; must match on reuse)."""
        if arm in DERIVED:
            return {"fill": self.fill, "seed": self.seed, "tolerance": self.tolerance}
        if arm == "swap":
            return {"seed": self.seed}
        return {}


def audited_jobs(*, session: Session, study: Study) -> tuple[list[CaseJob], dict[int, Reference]]:
    """The scored diagnosis cases that carry a reference region, as the runner would ask
    them (slices, stored order), and their references."""
    refs = case_references(session=session, study_id=study.id or 0)
    jobs = [
        j
        for j in case_jobs(session=session, study=study, strip_mode="slices")
        if j.case_id in refs and j.answer == "diagnosis"
    ]
    return jobs, refs


def _slice_of(job: CaseJob, image: ImageView) -> int | None:
    return strip_slice_number(job.images, image) if job.kind == "strip" else None


def _derive(
    *,
    session: Session,
    study: Study,
    job: CaseJob,
    reference: Reference,
    arm: str,
    settings: AuditSettings,
    asset_dir: Path,
) -> CaseJob:
    """The job with each image occluded (relevant region or its moved twin); NoRoomError
    when the irrelevant region fits nowhere on some image."""
    out_dir = store_dir(asset_dir)
    sent: list[ImageView] = []
    for position, image in enumerate(job.images):
        pixels = decode(load_asset(asset_dir, image.sha256))
        slice_no = _slice_of(job, image)
        region = region_plane(reference, slice_no, pixels.shape[:2], settings.tolerance)
        if region.any():
            area = (
                region
                if arm == "occlude_relevant"
                else irrelevant_area(region, settings.seed, slice_no, job.source_id)
            )
            data = encode(occlude(pixels, area, fill_value(pixels, region, settings.fill)))
            described: str | None = area_text(area)
        else:  # a slice without a region is sent as stored
            data, described = load_asset(asset_dir, image.sha256), None
        sha = store_asset(out_dir, data)
        _provenance(
            session,
            study=study,
            job=job,
            arm=arm,
            position=position,
            source=image.sha256,
            sha=sha,
            region=described,
            seed=settings.seed if arm == "occlude_irrelevant" else None,
            fill=settings.fill,
        )
        sent.append(replace(image, sha256=sha))
    return replace(job, images=tuple(sent))


def _provenance(
    session: Session,
    *,
    study: Study,
    job: CaseJob,
    arm: str,
    position: int,
    source: str,
    sha: str,
    region: str | None = None,
    seed: int | None = None,
    fill: str | None = None,
    partner: int | None = None,
) -> None:
    known = session.exec(
        select(AuditImage.id).where(
            AuditImage.case_id == job.case_id,
            AuditImage.arm == arm,
            AuditImage.position == position,
            AuditImage.sha256 == sha,
        )
    ).first()
    if known is None:
        session.add(
            AuditImage(
                study_id=study.id or 0,
                case_id=job.case_id,
                arm=arm,
                position=position,
                source_sha256=source,
                sha256=sha,
                region=region,
                seed=seed,
                fill=fill,
                partner_case_id=partner,
            )
        )


def _partners(*, session: Session, study: Study) -> tuple[dict[int, str], dict[str, list[int]]]:
    """Each scored case's normalised key diagnosis, and the cases under each."""
    rows = session.exec(
        select(Case.id, Case.source_id, AnswerKey.diagnosis)
        .join(AnswerKey, col(AnswerKey.case_id) == Case.id)
        .where(Case.study_id == study.id, col(Case.practice).is_(False))
        .order_by(col(Case.source_id))
    ).all()
    label = {cid: normalize_answer(dx) for cid, _src, dx in rows if cid is not None}
    by_label: dict[str, list[int]] = {}
    for cid, _src, _dx in rows:
        if cid is not None:
            by_label.setdefault(label[cid], []).append(cid)
    return label, by_label


def _draw(seed: int, source_id: str, choices: list[int]) -> int:
    """A partner drawn with the seed, the same for the same case whatever the database."""
    digest = hashlib.sha256(f"{seed}:{source_id}".encode()).digest()
    return choices[int.from_bytes(digest[:8], "big") % len(choices)]


def plan_arm(
    *, session: Session, study: Study, arm: str, settings: AuditSettings, asset_dir: Path
) -> ArmPlan:
    """The arm's jobs, its images stored and their provenance added (the caller commits)."""
    if arm not in ARMS:
        raise ValueError(f"unknown arm {arm!r}; the arms are {', '.join(ARMS)}")
    jobs, refs = audited_jobs(session=session, study=study)
    if arm in ("original", "text_only"):
        if arm == "original":
            for job in jobs:
                for position, image in enumerate(job.images):
                    _provenance(
                        session,
                        study=study,
                        job=job,
                        arm=arm,
                        position=position,
                        source=image.sha256,
                        sha=image.sha256,
                    )
        return ArmPlan(arm, jobs, asset_dir)
    left_out: dict[str, str] = {}
    planned: list[CaseJob] = []
    if arm in DERIVED:
        for job in jobs:
            try:
                planned.append(
                    _derive(
                        session=session,
                        study=study,
                        job=job,
                        reference=refs[job.case_id],
                        arm=arm,
                        settings=settings,
                        asset_dir=asset_dir,
                    )
                )
            except NoRoomError as exc:
                left_out[job.source_id] = str(exc)
        return ArmPlan(arm, planned, store_dir(asset_dir), left_out)
    label, by_label = _partners(session=session, study=study)
    every = {j.case_id: j for j in case_jobs(session=session, study=study, strip_mode="slices")}
    for job in jobs:
        choices = [c for c in by_label.get(label.get(job.case_id, ""), []) if c != job.case_id]
        choices = [c for c in choices if c in every and every[c].answer == "diagnosis"]
        if not choices:
            left_out[job.source_id] = "no other case has the same answer-key diagnosis"
            continue
        # a partner must send other bytes: a copy of the case's own images is no swap
        own_bytes = {image.sha256 for image in job.images}
        choices = [c for c in choices if not own_bytes & {i.sha256 for i in every[c].images}]
        if not choices:
            left_out[job.source_id] = (
                "every case with the same answer-key diagnosis has the same image bytes"
            )
            continue
        partner = every[_draw(settings.seed, job.source_id, choices)]
        for position, image in enumerate(partner.images):
            own = job.images[position].sha256 if position < len(job.images) else ""
            _provenance(
                session,
                study=study,
                job=job,
                arm=arm,
                position=position,
                source=own,
                sha=image.sha256,
                seed=settings.seed,
                partner=partner.case_id,
            )
        planned.append(replace(job, images=partner.images, kind=partner.kind))
    return ArmPlan(arm, planned, asset_dir, left_out)
