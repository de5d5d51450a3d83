"""The case bank: studies, opaque cases, their rendered images and answer keys.

Importers (manifest, demo) and tests all create cases through these functions,
so the rules live in one place: public ids are random, images are stored by
content hash, and no source path or header ever reaches the database.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlmodel import Session, col, func, select

from reader_app.models import AnswerKey, Case, CaseImage, Study
from reader_app.study.assets import store_asset


@dataclass(frozen=True)
class RenderedImage:
    """One PNG as a reader will see it, plus how to label it."""

    png: bytes
    width: int
    height: int
    label: str = ""
    window: str | None = None
    role: str = "image"  # image | slice | montage
    # millimetres per pixel of THIS PNG (x across, y down); None: the source gives none
    pixel_mm: tuple[float, float] | None = None
    # the same pixels' original values (study option original_values): an RGB PNG of
    # value + 32768 as 16 bits, high byte in red, low in green (render.encode_values)
    values_png: bytes | None = None


def new_public_id() -> str:
    # 80 random bits, base32-ish: unguessable and meaningless.
    return "c" + secrets.token_hex(10)


def scored_case_count(*, session: Session, study_id: int) -> int:
    """The study's scored cases (practice cases left out): the one count of them."""
    return int(
        session.exec(
            select(func.count())
            .select_from(Case)
            .where(Case.study_id == study_id, col(Case.practice).is_(False))
        ).one()
    )


def get_study(*, session: Session, slug: str) -> Study | None:
    return session.exec(select(Study).where(Study.slug == slug)).first()


def create_study(
    *, session: Session, slug: str, title: str, config: dict[str, Any] | None = None
) -> Study:
    study = Study(slug=slug, title=title, config_json=json.dumps(config or {}, sort_keys=True))
    session.add(study)
    session.flush()
    return study


def add_case(
    *,
    session: Session,
    asset_dir: Path,
    study: Study,
    source_id: str,
    kind: str,
    images: Sequence[RenderedImage],
    diagnosis: str,
    synonyms: Sequence[str] = (),
    position: int = 0,
    practice: bool = False,
    history: str | None = None,
    modality: str | None = None,
    region: str | None = None,
    reviewed_by: str | None = None,
    reference_region: str | None = None,
    reference_mask: bytes | None = None,
) -> Case:
    """Add one case with its images and answer key (flushes, does not commit).

    ``reference_region`` / ``reference_mask``: the grounding truth, already checked
    against the stored pixels (reader_app.ingest.reference)."""
    if kind not in ("spot", "strip"):
        raise ValueError(f"case {source_id}: kind must be spot or strip, not {kind!r}")
    if not images:
        raise ValueError(f"case {source_id}: no images")
    assert study.id is not None
    case = Case(
        study_id=study.id,
        public_id=new_public_id(),
        source_id=source_id,
        kind=kind,
        position=position,
        practice=practice,
        history=history,
        modality=modality,
        region=region,
        reviewed_by=reviewed_by,
    )
    session.add(case)
    session.flush()
    assert case.id is not None
    for seq, image in enumerate(images):
        digest = store_asset(asset_dir, image.png)
        session.add(
            CaseImage(
                case_id=case.id,
                sha256=digest,
                label=image.label,
                seq=seq,
                window=image.window,
                role=image.role,
                width=image.width,
                height=image.height,
                pixel_mm_x=image.pixel_mm[0] if image.pixel_mm else None,
                pixel_mm_y=image.pixel_mm[1] if image.pixel_mm else None,
                values_sha256=None
                if image.values_png is None
                else store_asset(asset_dir, image.values_png),
            )
        )
    session.add(
        AnswerKey(
            case_id=case.id,
            diagnosis=diagnosis,
            synonyms="|".join(synonyms),
            reference_region=reference_region,
            reference_mask=reference_mask,
        )
    )
    session.flush()
    return case
