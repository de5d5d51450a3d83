"""Reading time per response: the timing columns of the responses and MRMC exports.

``first_shown_at`` (ISO 8601, UTC): the first time the responder was shown the
case, kept across reloads. ``submitted_at``: when the answer was stored.
``active_ms``: the time the case page was visible to the reader, pauses and
hidden tabs excluded. Model runs have none of these (empty cells).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import pandas as pd
from sqlalchemy import select as sa_select
from sqlmodel import Session, col, select

from reader_app.models import Case, ModelRun, Reader, Response

TIMING_COLUMNS: Final = ("first_shown_at", "submitted_at", "active_ms")


def timing_frame(*, session: Session, study_id: int) -> pd.DataFrame:
    """One row per scored response: responder, case_id and the timing columns."""
    readers = {
        i: c
        for i, c in session.exec(select(Reader.id, Reader.code).where(Reader.study_id == study_id))
    }
    runs = {
        i: n
        for i, n in session.exec(
            select(ModelRun.id, ModelRun.name).where(ModelRun.study_id == study_id)
        )
    }
    # The columns it needs, as plain rows: whole Response objects (each with the model's
    # raw reply) on every run of the Charts and Exports pages left the server's heap
    # several MiB larger (docs/performance.md).
    rows = session.execute(
        sa_select(
            col(Response.reader_id),
            col(Response.model_run_id),
            col(Response.first_shown_at),
            col(Response.submitted_at),
            col(Response.active_ms),
            col(Case.source_id),
            col(Response.arm),
        )
        .join(Case, col(Case.id) == Response.case_id)
        .where(col(Response.study_id) == study_id, col(Response.practice).is_(False))
    ).all()
    records = []
    aided = any(row.arm == "aided" for row in rows)
    for reader_id, run_id, first_shown, submitted, active_ms, source_id, arm in rows:
        human = reader_id is not None
        records.append(
            {
                "responder": readers[reader_id] if human else runs[run_id],
                "case_id": source_id,
                "first_shown_at": first_shown.isoformat() if first_shown else None,
                "submitted_at": submitted.isoformat() if human else None,
                "active_ms": active_ms,
                **({"arm": arm} if aided else {}),
            }
        )
    # a study with an AI-aided arm has two rows per (reader, case): ``arm`` tells them apart
    columns = ["responder", "case_id", *TIMING_COLUMNS, *(["arm"] if aided else [])]
    frame = pd.DataFrame.from_records(records, columns=columns)
    frame["active_ms"] = frame["active_ms"].astype("Int64")
    return frame


def with_timing(
    frame: pd.DataFrame, timing: pd.DataFrame, keys: Sequence[str] = ("responder", "case_id")
) -> pd.DataFrame:
    """``frame`` with the timing columns appended, matched on (responder, case)."""
    right = timing.rename(columns={"responder": keys[0], "case_id": keys[1]})
    on = list(keys)
    if "arm" in right.columns:  # an AI-aided study: match each row's own arm
        if "arm" not in frame.columns:
            right = right[right["arm"] == "unaided"].drop(columns=["arm"])
        else:
            on.append("arm")
    out = frame.merge(right, how="left", on=on, validate="many_to_one")
    out["active_ms"] = out["active_ms"].astype("Int64")
    return out


def time_per_case(frame: pd.DataFrame) -> pd.DataFrame:
    """Median active seconds per case by responder group (humans only), for the analyst page."""
    humans = frame[(frame["kind"] == "human") & frame["active_ms"].notna()].copy()
    humans["group"] = humans["group"].fillna("(no group)")
    humans["active_s"] = humans["active_ms"].astype(float) / 1000
    return (
        humans.groupby(["group", "responder"], as_index=False)
        .agg(cases=("case_id", "nunique"), median_s=("active_s", "median"))
        .round({"median_s": 1})
    )


def reading_times(*, session: Session, study_id: int, frame: pd.DataFrame) -> pd.DataFrame:
    """``time_per_case`` of a study's tidy ``frame`` with its responses' timing."""
    return time_per_case(with_timing(frame, timing_frame(session=session, study_id=study_id)))
