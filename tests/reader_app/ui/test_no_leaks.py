"""Nothing served to a reader reveals a case's answer, its reference region, its source file
or PHI.

The AppTest element tree is everything the server sends to the browser (the
browser test checks the raw HTML and websocket frames too:
tests/e2e/test_exam_reader.py). We walk a reader through practice, every
scored case (spot and strip), a pause and the finish page, and search each
screen for the answer keys, the reference regions and mask (grounding on), the
manifest's file names and PHI-like strings.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlmodel import Session, select
from streamlit.testing.v1 import AppTest

from reader_app.core.settings import Settings
from reader_app.models import Case
from tests.factories import make_reader, make_study
from tests.reader_app.ui.helpers import answer, answer_idk, texts
from tests.support.grounding_truth import (
    STRIP_REGION,
    STRIP_REGIONS,
    spot_mask,
    study_case_ids,
    truth_needles,
)

PRACTICE_KEY = "Reference practice answer Kerley B lines"
SCORED_KEYS = ["Ewing sarcoma of the femur", "Tension pneumothorax right", "Pott disease T11"]
SOURCE_FILES = [
    "practice/KERLEY_case_0001.dcm",
    "DOE_JOHN_19570312/chest_ct_series7",
    "MRN-4471123_ewing_femur.dcm",
    "st_marys_hospital/ptx_right.png",
]
PHI = ["DOE_JOHN", "19570312", "4471123", "Dr. Alice Reviewer", "st_marys_hospital"]


def _forbidden(session: Session, study_id: int) -> list[str]:
    synonyms = [f"dx{i}" for i in range(1, 4)]  # the scored cases' synonyms
    public = [c.public_id for c in session.exec(select(Case))]
    assert public  # sanity: ids exist, and they are not among the forbidden strings
    truth = truth_needles(session, study_case_ids(session, study_id))
    return [*SCORED_KEYS, *SOURCE_FILES, *PHI, *synonyms, *truth]


def test_no_answer_source_or_phi_reaches_the_reader(
    app_for: Callable[..., AppTest], session: Session, settings: Settings
) -> None:
    study = make_study(
        session,
        settings.asset_dir,
        n_cases=3,
        n_practice=1,
        strip_every=2,
        strip_slices=16,
        windows=("lung", "bone"),
        montage=True,
        source_ids=SOURCE_FILES,
        diagnoses=[PRACTICE_KEY, *SCORED_KEYS],
        reviewed_by="Dr. Alice Reviewer",
        config={"grounding": True, "grounding_required": False},
        # practice, strip, spot, strip: boxes on the strips, a mask on the spot
        reference_regions=[None, STRIP_REGION, None, STRIP_REGIONS],
        reference_masks=[None, None, spot_mask(48, 64), None],
    )
    invite = make_reader(session, study, ready=True)
    assert study.id is not None
    forbidden = _forbidden(session, study.id)
    screens: list[tuple[str, str]] = []

    at = app_for(invite.token)
    screens.append(("practice case", texts(at)))
    assert PRACTICE_KEY not in texts(at)  # not before the practice answer is stored
    answer(at, "my guess", 1)
    assert PRACTICE_KEY in texts(at)  # practice feedback is the one place a key appears
    at.button(key="continue").click().run()
    for n in range(3):
        screens.append((f"scored case {n + 1}", texts(at)))
        if n == 1:
            at.button(key="pause").click().run()
            screens.append(("paused", texts(at)))
            at.button(key="resume").click().run()
            screens.append(("resumed", texts(at)))  # the viewer's data: labels, URLs, alt
        answer_idk(at) if n == 2 else answer(at, f"answer {n}", 2)
    screens.append(("finish", texts(at)))
    assert "finished" in screens[-1][1]
    # the search does see what a reader sees: history, slice captions, form labels
    everything = "\n".join(text for _, text in screens)
    assert "Adult, cough" in everything and "16/16" in everything and "Diagnosis" in everything

    for name, text in screens:
        for needle in forbidden:
            assert needle.lower() not in text.lower(), f"{needle!r} shown on the {name} screen"
    assert set(at.query_params) == {"token"}
