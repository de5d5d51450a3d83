"""Exports: responses (the tidy frame), the audit log and the MRMC long format.

Provenance travels inside the data, never in a comment line (CSV readers
choke on those) nor in a sidecar that can get separated from it: every export
ends with the columns ``param_<name>`` for each scoring parameter and
``param_scoring_spec_version``, the same names ``readerstudy score --format
csv`` writes. The first columns are unchanged, so the responses export still
starts with exactly the tidy frame. Parquet files carry the same figures in
their key-value metadata too (key ``readerstudy``), with the study, what was
exported and when.
"""

from __future__ import annotations

import io
import json
from datetime import datetime
from typing import Any, Final

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from sqlmodel import Session, col, select

from reader_app.analysis.data import study_data
from reader_app.analysis.mrmc import mrmc_frame
from reader_app.models import AuditEvent, Study, utcnow
from scoring import ScoringParams

WHAT: Final = ("responses", "audit", "mrmc")
FORMATS: Final = ("csv", "parquet")
AUDIT_COLUMNS: Final = ("id", "at", "actor", "action", "detail")
METADATA_KEY: Final = b"readerstudy"
MIME: Final = {"csv": "text/csv", "parquet": "application/vnd.apache.parquet"}


class ExportError(ValueError):
    """The export cannot be made as asked; the message is safe to show."""


def provenance_columns(params: ScoringParams) -> dict[str, Any]:
    return {f"param_{k}": v for k, v in params.to_dict().items()}


def with_provenance(frame: pd.DataFrame, params: ScoringParams) -> pd.DataFrame:
    """The frame with one constant ``param_*`` column per parameter (and the spec version)."""
    out = frame.copy()
    for name, value in provenance_columns(params).items():
        out[name] = pd.Series([value] * len(out), index=out.index, dtype=object)
    return out


def audit_frame(*, session: Session, study_id: int) -> pd.DataFrame:
    """The study's audit events in order; ``detail`` is the stored JSON text, as is."""
    events = session.exec(
        select(AuditEvent).where(AuditEvent.study_id == study_id).order_by(col(AuditEvent.id))
    ).all()
    return pd.DataFrame(
        [
            {
                "id": e.id,
                "at": e.at.isoformat(),
                "actor": e.actor,
                "action": e.action,
                "detail": e.detail_json,
            }
            for e in events
        ],
        columns=list(AUDIT_COLUMNS),
    )


def export_frame(
    what: str, *, session: Session, study: Study, params: ScoringParams | None = None
) -> pd.DataFrame:
    """The rows of one export, provenance columns included."""
    params = params or ScoringParams()
    assert study.id is not None
    if what == "responses":
        frame = study_data(session=session, study=study).frame
    elif what == "audit":
        frame = audit_frame(session=session, study_id=study.id)
    elif what == "mrmc":
        frame = mrmc_frame(study_data(session=session, study=study).frame, params)
    else:
        raise ExportError(f"--what must be one of {', '.join(WHAT)}, not {what!r}")
    return with_provenance(frame, params)


def export_metadata(
    what: str, study: Study, params: ScoringParams, at: datetime | None = None
) -> dict[str, Any]:
    return {
        "study": study.slug,
        "what": what,
        "exported_at": (at or utcnow()).isoformat(),
        "scoring_spec_version": params.to_dict()["scoring_spec_version"],
        "params": params.to_dict(),
    }


def to_bytes(frame: pd.DataFrame, fmt: str, metadata: dict[str, Any] | None = None) -> bytes:
    """CSV (UTF-8, exact text, RFC 4180 quoting) or Parquet (with metadata) bytes."""
    if fmt == "csv":
        return frame.to_csv(index=False).encode("utf-8")
    if fmt == "parquet":
        table = pa.Table.from_pandas(frame, preserve_index=False)
        if metadata is not None:
            merged = dict(table.schema.metadata or {})
            merged[METADATA_KEY] = json.dumps(metadata, sort_keys=True).encode("utf-8")
            table = table.replace_schema_metadata(merged)
        buf = io.BytesIO()
        pq.write_table(table, buf)
        return buf.getvalue()
    raise ExportError(f"--format must be one of {', '.join(FORMATS)}, not {fmt!r}")


def read_metadata(parquet: bytes) -> dict[str, Any]:
    """The ``readerstudy`` metadata of a Parquet export."""
    schema = pq.read_schema(io.BytesIO(parquet))
    raw = (schema.metadata or {}).get(METADATA_KEY)
    return {} if raw is None else dict(json.loads(raw))


def export_bytes(
    what: str,
    fmt: str,
    *,
    session: Session,
    study: Study,
    params: ScoringParams | None = None,
) -> bytes:
    params = params or ScoringParams()
    frame = export_frame(what, session=session, study=study, params=params)
    return to_bytes(frame, fmt, export_metadata(what, study, params))


def file_name(slug: str, what: str, fmt: str) -> str:
    return f"{slug}-{what}.{fmt}"
