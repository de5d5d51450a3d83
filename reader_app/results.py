"""Database rows -> the tidy frame of SCORING.md section 1, one row per (responder, case).

Humans and model runs come out of the same table in the same shape; the
verdict comes from grade memory (case, normalized answer), so identical
answers share one verdict whoever gave them; an imported answer with no text
has its own (``responses.row_verdict``: RadLE scores a valid Likert with an
empty diagnosis by its verdict). Practice answers never appear, nor
do answers to report-mode cases: those are scored by the rubric
(``grading.rubric_grades.rubric_frame``).
"""

from __future__ import annotations

import json

import pandas as pd
from sqlalchemy import select as sa_select
from sqlalchemy import true as sa_true
from sqlmodel import Session, col, select

from reader_app.grading.normalize import normalize_answer
from reader_app.grading.responders import responder_columns
from reader_app.grounding.hits import (
    GROUNDING_COLUMNS,
    case_references,
    grounding_tolerance,
    location_fields,
)
from reader_app.models import Case, ModelRun, Response, Study, Verdict
from reader_app.responses import row_verdict
from reader_app.study.case_reports import report_case_ids
from reader_app.study.window_presets import public_window_name
from scoring import AID_COLUMNS, TIDY_COLUMNS

# What the reader did in the viewer (human rows; empty for model runs and for
# answers the browser reported nothing with). The full record is ``interaction``.
INTERACTION_COLUMNS = [
    "slices_visited",
    "windows_used",
    "zoom_used",
    "fullscreen_s",
    "interaction",
]


def interaction_fields(interaction_json: str | None) -> dict[str, object]:
    """One response's viewer record as the export's flat columns (all empty if none)."""
    empty: dict[str, object] = dict.fromkeys(INTERACTION_COLUMNS)
    if not interaction_json:
        return empty
    try:
        record = json.loads(interaction_json)
    except ValueError:
        return empty
    if not isinstance(record, dict):
        return empty
    # "file" in records made before the window was named "original" everywhere
    used = [public_window_name(str(w)) for w in record.get("windows_used") or []]
    if "windows_used" in record:
        record = {**record, "windows_used": used}
    return {
        "slices_visited": len(record.get("slices_visited") or []),
        "windows_used": "|".join(used),
        "zoom_used": bool(record.get("zoom_used")),
        "fullscreen_s": float(record.get("fullscreen_s") or 0.0),
        "interaction": json.dumps(record, sort_keys=True),
    }


def verdict_map(*, session: Session, study_id: int) -> dict[tuple[int, str], int]:
    rows = session.exec(
        select(Verdict.case_id, Verdict.normalized_answer, Verdict.correct)
        .join(Case, col(Case.id) == Verdict.case_id)
        .where(Case.study_id == study_id, col(Verdict.active).is_(True))
    ).all()
    return {(case_id, norm): correct for case_id, norm, correct in rows}


def own_verdicts(*, session: Session, response_ids: list[int]) -> dict[int, int]:
    """The verdicts answers without text carry themselves (``responses.row_verdict``),
    by response id; read only for those answers (few), in chunks."""
    out: dict[int, int] = {}
    for start in range(0, len(response_ids), 500):
        chunk = response_ids[start : start + 500]
        for rid, meta_json in session.exec(
            select(Response.id, Response.meta_json).where(col(Response.id).in_(chunk))
        ).all():
            verdict = row_verdict(meta_json)
            if rid is not None and verdict is not None:
                out[rid] = verdict
    return out


def tidy_responses(
    *,
    session: Session,
    study_id: int,
    with_interaction: bool = False,
    with_grounding: bool = False,
    models_only: bool = False,
) -> pd.DataFrame:
    """Every scored (non-practice) response of a study as the tidy frame (with
    ``models_only``, the model runs' rows alone); with
    ``with_grounding``, followed by where each response points and whether that
    is a hit (``grounding_hits.GROUNDING_COLUMNS``); with ``with_interaction``,
    then by the viewer columns (``INTERACTION_COLUMNS``). A study with an AI-aided
    arm (any aided row) also has ``arm`` and ``aid_run`` after the tidy columns
    (SCORING.md section 10): a reader's unaided and aided rows of a case both appear."""
    verdicts = verdict_map(session=session, study_id=study_id)
    references = case_references(session=session, study_id=study_id) if with_grounding else {}
    study = session.get(Study, study_id) if with_grounding else None
    tolerance = grounding_tolerance(study) if study is not None else 0.0
    responder = responder_columns(session=session, study_id=study_id)
    # Only the columns the frame needs, as plain rows: whole Response objects would read
    # and parse every model's raw reply, the report text and the timestamps on each page
    # run (about 12 MiB of short-lived objects at 5,600 answers; docs/performance.md).
    rows = session.execute(
        sa_select(
            col(Response.id),
            col(Response.case_id),
            col(Response.reader_id),
            col(Response.model_run_id),
            col(Response.status),
            col(Response.diagnosis),
            col(Response.likert),
            col(Response.interaction_json),
            col(Response.location_json),
            col(Response.arm),
            col(Response.aid_run_id),
            col(Case.source_id),
        )
        .join(Case, col(Case.id) == Response.case_id)
        .where(col(Response.study_id) == study_id, col(Response.practice).is_(False))
        .where(col(Response.model_run_id).is_not(None) if models_only else sa_true())
        .order_by(col(Response.id))
    ).all()
    report_cases = report_case_ids(session=session, study_id=study_id)
    with_aid = any(resp.arm == "aided" for resp in rows)
    run_names: dict[int | None, str] = (
        {
            run_id: name
            for run_id, name in session.exec(
                select(ModelRun.id, ModelRun.name).where(ModelRun.study_id == study_id)
            ).all()
        }
        if with_aid
        else {}
    )
    answers = {
        resp.id: normalize_answer(resp.diagnosis) for resp in rows if resp.status == "answered"
    }
    own = own_verdicts(
        session=session, response_ids=[rid for rid, norm in answers.items() if not norm]
    )
    records = []
    for resp in rows:
        if resp.case_id in report_cases:
            continue
        correct = None
        if resp.status == "answered":
            norm = answers[resp.id]
            correct = verdicts.get((resp.case_id, norm)) if norm else own.get(resp.id)
        records.append(
            {
                **responder(resp),
                "case_id": resp.source_id,
                "status": resp.status,
                "diagnosis": resp.diagnosis or "",
                "likert": resp.likert,
                "correct": correct,
                **(
                    {"arm": resp.arm, "aid_run": run_names.get(resp.aid_run_id)} if with_aid else {}
                ),
                **(
                    location_fields(resp.location_json, references.get(resp.case_id), tolerance)
                    if with_grounding
                    else {}
                ),
                **(interaction_fields(resp.interaction_json) if with_interaction else {}),
            }
        )
    columns = [
        *TIDY_COLUMNS,
        *(AID_COLUMNS if with_aid else ()),
        *(GROUNDING_COLUMNS if with_grounding else ()),
        *(INTERACTION_COLUMNS if with_interaction else ()),
    ]
    frame = pd.DataFrame.from_records(records, columns=columns)
    frame["likert"] = frame["likert"].astype("Int64")
    frame["correct"] = frame["correct"].astype("Int64")
    if with_grounding:
        frame["location_slice"] = frame["location_slice"].astype("Int64")
        frame["location_x"] = frame["location_x"].astype("Float64")
        frame["location_y"] = frame["location_y"].astype("Float64")
        frame["no_focal_finding"] = frame["no_focal_finding"].astype("boolean")
        frame["hit"] = frame["hit"].astype("Int64")
    if with_interaction:
        frame["slices_visited"] = frame["slices_visited"].astype("Int64")
        frame["zoom_used"] = frame["zoom_used"].astype("boolean")
        frame["fullscreen_s"] = frame["fullscreen_s"].astype("Float64")
    return frame
