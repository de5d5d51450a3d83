"""Build small studies through the real services, for tests."""

from __future__ import annotations

import io
from pathlib import Path

from PIL import Image
from sqlmodel import Session

from reader_app.auth import Invite, invite_reader
from reader_app.casebank import RenderedImage, add_case, create_study
from reader_app.models import Study


def png_bytes(width: int = 64, height: int = 48, shade: int = 128) -> bytes:
    buf = io.BytesIO()
    Image.new("L", (width, height), color=shade).save(buf, format="PNG")
    return buf.getvalue()


def make_study(
    session: Session,
    asset_dir: Path,
    *,
    n_cases: int = 3,
    n_practice: int = 0,
    slug: str = "study",
    strip_every: int = 0,
    config: dict[str, object] | None = None,
) -> Study:
    """A committed study with n_cases scored cases (+ practice), distinct images each."""
    study = create_study(session=session, slug=slug, title=f"Test study {slug}", config=config)
    for i in range(n_practice + n_cases):
        strip = strip_every and i % strip_every == strip_every - 1
        n_images = 4 if strip else 1
        images = [
            RenderedImage(
                png=png_bytes(shade=(i * 7 + j * 31) % 256),
                width=64,
                height=48,
                label=f"{j + 1}/{n_images}" if strip else "",
                role="slice" if strip else "image",
            )
            for j in range(n_images)
        ]
        add_case(
            session=session,
            asset_dir=asset_dir,
            study=study,
            source_id=f"case-{i:03d}",
            kind="strip" if strip else "spot",
            images=images,
            diagnosis=f"Diagnosis number {i}",
            synonyms=[f"dx{i}"],
            position=i,
            practice=i < n_practice,
            history="Adult, cough" if i % 2 == 0 else None,
        )
    session.commit()
    return study


def make_reader(session: Session, study: Study, code: str = "R01", **kw: object) -> Invite:
    invite = invite_reader(session=session, study=study, code=code, **kw)  # type: ignore[arg-type]
    session.commit()
    return invite
