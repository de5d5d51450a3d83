"""A small grounded study, written row by row: regions on the answer key, locations on responses.

Five cases of 64 x 48 px (case-004 a strip of 4 slices), tolerance 2 px:

    case-000  box 10,10,20,10          x in [8, 32), y in [8, 22) once grown by 2
    case-001  mask rows 30..34, cols 40..44 (a spot mask)
    case-002  no region (not counted in grounding)
    case-003  box 5,5,10,10
    case-004  box on slice 3: 3:10,10,10,10

Answers ("C" correct at L4, "W" wrong at L4) and where each responder points:

    R01  CCCCC  (31,15) hit · (46.5,32) hit · (1,1) n/a · no focal finding · s3 (15,15) hit
    R02  CWCWC  (32,15) miss · (47,32) miss · none · NULL · s2 (15,15) miss (wrong slice)
    vlm  CCCCC  (15,15) hit · NULL elsewhere                      (a text-only run)

Hits on the 4 grounded cases: R01 1,1,0,1; R02 0,0,0,0; vlm 1,0,0,0.
"""

from __future__ import annotations

import numpy as np
from sqlmodel import Session, select

from reader_app.core.settings import Settings
from reader_app.grounding.store import encode_mask, location_json
from reader_app.models import AnswerKey, Case, ModelRun, Reader, Response, Study
from scoring.regions import Location
from tests.factories import make_study
from tests.reader_app.analysis.scenario import (
    grade_everything,
    import_model_run,
    plan_for,
    simulate_reader,
)

CASES = [f"case-{i:03d}" for i in range(5)]
GROUNDED = ("case-000", "case-001", "case-003", "case-004")
REGIONS = {"case-000": "10,10,20,10", "case-003": "5,5,10,10", "case-004": "3:10,10,10,10"}
NO_FOCAL = object()
LOCATIONS: dict[str, dict[str, object]] = {
    "R01": {
        "case-000": Location(31, 15),
        "case-001": Location(46.5, 32),
        "case-002": Location(1, 1),
        "case-003": NO_FOCAL,
        "case-004": Location(15, 15, slice=3),
    },
    "R02": {
        "case-000": Location(32, 15),
        "case-001": Location(47, 32),
        "case-004": Location(15, 15, slice=2),
    },
    "vlm": {"case-000": Location(15, 15)},
}
HITS = {  # on the grounded cases, in GROUNDED order
    "R01": (1, 1, 0, 1),
    "R02": (0, 0, 0, 0),
    "vlm": (1, 0, 0, 0),
}


def spot_mask() -> np.ndarray:
    mask = np.zeros((48, 64), dtype=bool)
    mask[30:35, 40:45] = True
    return mask


def set_regions(session: Session, study: Study) -> None:
    cases = {c.source_id: c for c in session.exec(select(Case).where(Case.study_id == study.id))}
    for source, text in REGIONS.items():
        key = session.exec(select(AnswerKey).where(AnswerKey.case_id == cases[source].id)).one()
        key.reference_region = text
        session.add(key)
    key = session.exec(select(AnswerKey).where(AnswerKey.case_id == cases["case-001"].id)).one()
    key.reference_mask = encode_mask(spot_mask())
    session.add(key)
    session.commit()


def set_locations(session: Session, study: Study) -> None:
    cases = {c.id: c.source_id for c in session.exec(select(Case).where(Case.study_id == study.id))}
    readers = {r.id: r.code for r in session.exec(select(Reader))}
    runs = {m.id: m.name for m in session.exec(select(ModelRun))}
    for resp in session.exec(select(Response).where(Response.study_id == study.id)):
        who = readers[resp.reader_id] if resp.reader_id else runs[resp.model_run_id]
        where = LOCATIONS.get(who, {}).get(cases[resp.case_id])
        if where is None:
            continue
        resp.location_json = (
            location_json(None, no_focal_finding=True)
            if where is NO_FOCAL
            else location_json(where)  # type: ignore[arg-type]
        )
        session.add(resp)
    session.commit()


def grounded_study(session: Session, settings: Settings, *, slug: str = "study") -> Study:
    study = make_study(
        session,
        settings.asset_dir,
        n_cases=5,
        strip_every=5,
        slug=slug,
        config={"grounding": True, "grounding_tolerance_px": 2},
    )
    simulate_reader(session, study, "R01", plan_for(CASES, "CCCCC"))
    simulate_reader(session, study, "R02", plan_for(CASES, "CWCWC"))
    import_model_run(session, study, "vlm", plan_for(CASES, "CCCCC"))
    run = session.exec(select(ModelRun).where(ModelRun.name == "vlm")).one()
    run.no_images = True
    session.add(run)
    session.commit()
    grade_everything(session, study)
    set_regions(session, study)
    set_locations(session, study)
    return study
