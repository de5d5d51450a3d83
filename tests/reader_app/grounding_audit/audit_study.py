"""A study whose lesions are in the pixels, and two stub models that read it differently.

Every image has a dim background (values below 150) and, on cases with a
lesion, a block of one bright value: 250 for a pneumothorax, 200 for an
effusion. The reference region covers the lesion exactly (a box, or a mask;
on the strip, slice 2 only). ``seeing`` answers from the lesion it finds in
the decoded PNGs; ``history_reader`` from the clinical history alone.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
from PIL import Image
from sqlmodel import Session

from reader_app.grounding.store import encode_mask
from reader_app.models import Study
from reader_app.study.casebank import RenderedImage, add_case, create_study
from tests.support.openai_stub import ChatRequest, Reply

W, H = 64, 48
PNEUMO, EFFUSION = 250, 200
DIAGNOSIS = {PNEUMO: "Pneumothorax", EFFUSION: "Pleural effusion"}
HISTORY = {PNEUMO: "sudden dyspnoea after a fall", EFFUSION: "heart failure with orthopnoea"}


def background(shift: int) -> np.ndarray:
    y, x = np.mgrid[0:H, 0:W]
    out: np.ndarray = ((x * 2 + y * 3 + shift) % 150).astype(np.uint8)
    return out


def png(pixels: np.ndarray) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, format="PNG")
    return buf.getvalue()


def with_lesion(shift: int, value: int | None, box: tuple[int, int, int, int]) -> bytes:
    pixels = background(shift)
    if value is not None:
        x, y, w, h = box
        pixels[y : y + h, x : x + w] = value
    return png(pixels)


def make_audit_study(session: Session, asset_dir: Path, slug: str = "study") -> Study:
    """c1, c2: pneumothorax (box; spot mask); c3: effusion (box); c4: effusion strip with
    a mask on slice 2; c5: pneumothorax without a region (a swap partner only)."""
    study = create_study(session=session, slug=slug, title="Audit study")

    def spot(
        i: int, source: str, value: int, box: tuple[int, int, int, int], **ref: object
    ) -> None:
        image = RenderedImage(png=with_lesion(i * 11, value, box), width=W, height=H)
        add_case(
            session=session,
            asset_dir=asset_dir,
            study=study,
            source_id=source,
            kind="spot",
            images=[image],
            diagnosis=DIAGNOSIS[value],
            position=i,
            history=f"Case note {i}: {HISTORY[value]}",
            **ref,  # type: ignore[arg-type]
        )

    spot(0, "c1", PNEUMO, (10, 10, 8, 6), reference_region="10,10,8,6")
    mask = np.zeros((H, W), dtype=np.bool_)
    mask[25:31, 40:48] = True
    spot(1, "c2", PNEUMO, (40, 25, 8, 6), reference_mask=encode_mask(mask))
    spot(2, "c3", EFFUSION, (20, 30, 10, 8), reference_region="20,30,10,8")
    slices = [
        RenderedImage(
            png=with_lesion(40 + k, EFFUSION if k == 1 else None, (30, 10, 8, 8)),
            width=W,
            height=H,
            label=f"{k + 1}/3",
            role="slice",
        )
        for k in range(3)
    ]
    volume = np.zeros((3, H, W), dtype=np.bool_)
    volume[1, 10:18, 30:38] = True
    add_case(
        session=session,
        asset_dir=asset_dir,
        study=study,
        source_id="c4",
        kind="strip",
        images=slices,
        diagnosis=DIAGNOSIS[EFFUSION],
        position=3,
        history=f"Case note 3: {HISTORY[EFFUSION]}",
        reference_mask=encode_mask(volume),
    )
    spot(4, "c5", PNEUMO, (5, 30, 8, 6))
    session.commit()
    return study


def lesion_seen(request: ChatRequest) -> int | None:
    for data in request.images:
        pixels = np.asarray(Image.open(io.BytesIO(data)).convert("L"))
        for value in (PNEUMO, EFFUSION):
            if int((pixels == value).sum()) >= 4:
                return value
    return None


def seeing(request: ChatRequest) -> Reply:
    """A model that reads the lesion in the pixels, or says it sees nothing."""
    value = lesion_seen(request)
    if value is None:
        return Reply(json.dumps({"diagnosis": "No acute abnormality", "likert_score": 1}))
    return Reply.answer(DIAGNOSIS[value], 4)


def history_reader(request: ChatRequest) -> Reply:
    """A model that answers from the clinical history, whatever the image."""
    for value, words in HISTORY.items():
        if words in request.text:
            return Reply.answer(DIAGNOSIS[value], 3)
    return Reply.idk()
