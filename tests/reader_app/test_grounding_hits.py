"""Which stored locations hit the answer key's region, on SQLite and PostgreSQL.

Values are derived by hand in tests/reader_app/analysis/grounding_scenario.py.
"""

from __future__ import annotations

import pandas as pd
import pytest
from sqlmodel import Session, select

from reader_app.core.settings import Settings
from reader_app.grounding.hits import (
    GROUNDING_COLUMNS,
    ReferenceRegionError,
    case_references,
    grounded_case_ids,
)
from reader_app.models import AnswerKey, Case, Study
from reader_app.results import TIDY_COLUMNS, tidy_responses
from tests.reader_app.analysis.grounding_scenario import GROUNDED, grounded_study


def _frame(session: Session, study: Study) -> pd.DataFrame:
    frame = tidy_responses(session=session, study_id=study.id or 0, with_grounding=True)
    return frame.set_index(["responder", "case_id"])


def test_hits_by_hand_box_tolerance_mask_strip_and_misses(
    session: Session, settings: Settings
) -> None:
    study = grounded_study(session, settings)
    raw = tidy_responses(session=session, study_id=study.id or 0, with_grounding=True)
    assert list(raw.columns) == [*TIDY_COLUMNS, *GROUNDING_COLUMNS]
    frame = _frame(session, study)
    hit = frame["hit"]
    # box 10,10,20,10 grown by 2: x in [8, 32): 31 is in, 32 is out (half-open)
    assert hit[("R01", "case-000")] == 1 and hit[("R02", "case-000")] == 0
    assert hit[("vlm", "case-000")] == 1  # (15, 15): inside the box itself
    # mask cols 40..44 rows 30..34, grown by 2 px: x 46.5 -> col 46, 44 within 2: hit;
    # x 47 -> col 47, nearest mask col 44 is 3 away: miss
    assert hit[("R01", "case-001")] == 1 and hit[("R02", "case-001")] == 0
    # no focal finding and NULL are misses; a model with no location misses too
    assert hit[("R01", "case-003")] == 0 and hit[("R02", "case-003")] == 0
    assert hit[("vlm", "case-003")] == 0
    # strip: the box is on slice 3; the same point on slice 2 misses
    assert hit[("R01", "case-004")] == 1 and hit[("R02", "case-004")] == 0
    # a case without a region: hit is empty whatever the location
    assert hit[("R01", "case-002")] is pd.NA and hit[("R02", "case-002")] is pd.NA
    # where each response points, as stored
    r01 = frame.loc[("R01", "case-004")]
    assert (r01["location_slice"], r01["location_x"], r01["location_y"]) == (3, 15.0, 15.0)
    assert bool(frame.loc[("R01", "case-003"), "no_focal_finding"]) is True
    null = frame.loc[("R02", "case-003")]
    assert null["location_x"] is pd.NA and bool(null["no_focal_finding"]) is False
    assert str(frame["hit"].dtype) == "Int64" and str(frame["location_x"].dtype) == "Float64"
    assert grounded_case_ids(session=session, study_id=study.id or 0) == GROUNDED


def test_without_tolerance_the_grown_pixels_miss(session: Session, settings: Settings) -> None:
    study = grounded_study(session, settings)
    study.config_json = '{"grounding": true}'  # tolerance back to its default, 0
    session.add(study)
    session.commit()
    hit = _frame(session, study)["hit"]
    # x = 31 is outside [10, 30); x = 46.5 (col 46) is 2 cols from the mask
    assert hit[("R01", "case-000")] == 0 and hit[("R01", "case-001")] == 0
    assert hit[("vlm", "case-000")] == 1 and hit[("R01", "case-004")] == 1


def test_a_study_without_regions_has_no_grounded_case(session: Session, settings: Settings) -> None:
    study = grounded_study(session, settings)
    for key in session.exec(select(AnswerKey)):
        key.reference_region, key.reference_mask = None, None
        session.add(key)
    session.commit()
    frame = _frame(session, study)
    assert frame["hit"].isna().all()
    assert grounded_case_ids(session=session, study_id=study.id or 0) == ()
    # the default frame has no grounding columns at all
    plain = tidy_responses(session=session, study_id=study.id or 0)
    assert list(plain.columns) == list(TIDY_COLUMNS)


def test_an_empty_region_text_is_no_region_and_a_broken_one_is_an_error(
    session: Session, settings: Settings
) -> None:
    study = grounded_study(session, settings)
    case = session.exec(select(Case).where(Case.source_id == "case-003")).one()
    key = session.exec(select(AnswerKey).where(AnswerKey.case_id == case.id)).one()
    key.reference_region = ""
    session.add(key)
    session.commit()
    assert case.id not in case_references(session=session, study_id=study.id or 0)
    assert "case-003" not in grounded_case_ids(session=session, study_id=study.id or 0)
    key.reference_region = "10,10,0,5"  # a zero width: ground truth that cannot be read
    session.add(key)
    session.commit()
    with pytest.raises(ReferenceRegionError, match="case-003"):
        case_references(session=session, study_id=study.id or 0)
