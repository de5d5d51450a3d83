"""Build small studies through the real services, for tests."""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from pathlib import Path

from PIL import Image, ImageDraw
from sqlmodel import Session

from reader_app.core.auth import Invite, invite_reader
from reader_app.models import Study, utcnow
from reader_app.study.casebank import RenderedImage, add_case, create_study


def png_bytes(width: int = 64, height: int = 48, shade: int = 128) -> bytes:
    buf = io.BytesIO()
    Image.new("L", (width, height), color=shade).save(buf, format="PNG")
    return buf.getvalue()


def phantom_png(slice_no: int, window: str | None, size: int = 256) -> bytes:
    """A chest-CT-like drawing (body, lungs, spine) that changes with slice and window."""
    contrast = {"lung": (200, 40), "mediastinum": (150, 90), "bone": (90, 70)}
    body, lung = contrast.get(window or "", (170, 60))
    img = Image.new("L", (size, size), color=0)
    draw = ImageDraw.Draw(img)
    m = size // 16
    draw.ellipse((m, 3 * m, size - m, size - 3 * m), fill=body)
    grow = (slice_no % 8) * size // 128
    draw.ellipse((3 * m - grow, 4 * m, 7 * m + grow, size - 5 * m), fill=lung)
    draw.ellipse((9 * m - grow, 4 * m, 13 * m + grow, size - 5 * m), fill=lung)
    draw.ellipse((7 * m, size - 6 * m, 9 * m, size - 4 * m), fill=255 if window == "bone" else 220)
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


def _images(
    i: int, strip: bool, n_slices: int, windows: Sequence[str], montage: bool, phantom: bool
) -> list[RenderedImage]:
    images = []
    for window in windows or [None]:
        n_images = n_slices if strip else 1
        for j in range(n_images):
            if phantom:
                png, width, height = phantom_png(j, window), 256, 256
            else:
                offset = (windows.index(window) * 57) if window else 0
                png, width, height = png_bytes(shade=(i * 7 + j * 31 + offset) % 256), 64, 48
            label = f"{j + 1}/{n_images}" if strip else ""
            if window and len(windows) > 1 and not strip:
                label = window
            images.append(
                RenderedImage(
                    png=png,
                    width=width,
                    height=height,
                    label=label,
                    window=window,
                    role="slice" if strip else "image",
                )
            )
        if strip and montage:
            images.append(
                RenderedImage(
                    png=png_bytes(width=128, height=96, shade=(i * 13) % 256),
                    width=128,
                    height=96,
                    label=f"montage · {window}",
                    window=window,
                    role="montage",
                )
            )
    return images


def make_study(
    session: Session,
    asset_dir: Path,
    *,
    n_cases: int = 3,
    n_practice: int = 0,
    slug: str = "study",
    strip_every: int = 0,
    config: dict[str, object] | None = None,
    strip_slices: int = 4,
    windows: Sequence[str] = (),
    montage: bool = False,
    phantom: bool = False,
    source_ids: Sequence[str] | None = None,
    history: str | None = "Adult, cough",
    diagnoses: Sequence[str] | None = None,
    reviewed_by: str | None = None,
    reference_regions: Sequence[str | None] | None = None,
    reference_masks: Sequence[bytes | None] | None = None,
) -> Study:
    """A committed study with n_cases scored cases (+ practice), distinct images each.

    Practice cases come first (positions 0..n_practice-1). Every ``strip_every``-th
    case is a strip of ``strip_slices`` slices; ``windows`` renders each case once
    per window preset; ``phantom`` draws CT-like pictures (for screenshots);
    ``source_ids`` overrides the manifest ids (e.g. to look like file names) and
    ``diagnoses`` the answer keys; ``reference_regions`` / ``reference_masks`` give each
    case's grounding truth (format_region text, encode_mask bytes; None for none).
    """
    study = create_study(session=session, slug=slug, title=f"Test study {slug}", config=config)
    for i in range(n_practice + n_cases):
        strip = bool(strip_every) and i % strip_every == strip_every - 1
        add_case(
            session=session,
            asset_dir=asset_dir,
            study=study,
            source_id=source_ids[i] if source_ids else f"case-{i:03d}",
            kind="strip" if strip else "spot",
            images=_images(i, strip, strip_slices, windows, montage, phantom),
            diagnosis=diagnoses[i] if diagnoses else f"Diagnosis number {i}",
            synonyms=[f"dx{i}"],
            reviewed_by=reviewed_by,
            position=i,
            practice=i < n_practice,
            history=history if i % 2 == 0 else None,
            reference_region=reference_regions[i] if reference_regions else None,
            reference_mask=reference_masks[i] if reference_masks else None,
        )
    session.commit()
    return study


def make_reader(
    session: Session, study: Study, code: str = "R01", *, ready: bool = False, **kw: object
) -> Invite:
    """Invite a reader; ``ready=True`` also consents and fills a profile (straight to cases)."""
    invite = invite_reader(session=session, study=study, code=code, **kw)  # type: ignore[arg-type]
    if ready:
        reader = invite.reader
        reader.consented_at = utcnow()
        reader.profile_json = json.dumps(
            {
                "role": "board-certified",
                "years_experience": 10,
                "subspecialty": "",
                "trainee_year": None,
            }
        )
        reader.group_name = reader.group_name or "board-certified"
        session.add(reader)
    session.commit()
    return invite
