"""Reference regions and masks that must never reach a reader: values and search needles.

The leak searches (tests/reader_app/ui/test_no_leaks.py, tests/e2e/test_exam_browser.py)
give their studies these regions and a mask, then look for every needle in
what was served. The values are distinctive (quarter-pixel coordinates), so a
hit cannot be a coincidence, and the needles come from the stored rows, so the
search follows whatever the answer key holds.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence

import numpy as np
from sqlmodel import Session, col, select

from reader_app.grounding.store import encode_mask
from reader_app.models import AnswerKey, Case

# inside a 64x48 test image (tests/factories.py) and a 256x256 phantom alike
STRIP_REGION = "7:12.25,5.5,17.75,19"
STRIP_REGIONS = "3:6.5,8.25,31,13;9:9.5,4.75,7,41"
SPOT_REGION = "21.75,10.5,23.25,29"


def spot_mask(rows: int, cols: int) -> bytes:
    """A blob in the lower right quarter of a (rows, cols) spot image, as the key stores it."""
    mask = np.zeros((rows, cols), dtype=np.bool_)
    mask[rows * 5 // 8 : rows * 3 // 4, cols * 5 // 8 : cols * 7 // 8] = True
    return encode_mask(mask)


def truth_needles(session: Session, case_ids: Sequence[int]) -> list[str]:
    """Every stored region, each of its boxes, and the masks' bytes as text could carry them."""
    keys = session.exec(select(AnswerKey).where(col(AnswerKey.case_id).in_(case_ids))).all()
    needles: list[str] = []
    for key in keys:
        if key.reference_region:
            needles += [key.reference_region, *key.reference_region.split(";")]
        if key.reference_mask:
            raw = key.reference_mask
            needles += [
                base64.b64encode(raw).decode()[:48],  # a data: URL or JSON bytes
                raw.hex()[:48],
                "mask.npy",  # the member name inside encode_mask's archive
            ]
    assert needles, "no reference region stored: the leak search would search for nothing"
    return needles


def study_case_ids(session: Session, study_id: int) -> list[int]:
    return [c.id for c in session.exec(select(Case).where(Case.study_id == study_id)) if c.id]
