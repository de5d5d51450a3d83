"""Exports: responses (the tidy frame), the audit log, the MRMC long format, report answers.

Provenance travels inside the data, never in a comment line (CSV readers
choke on those) nor in a sidecar that can get separated from it: every export
ends with the columns ``param_<name>`` for each scoring parameter and
``param_scoring_spec_version``, the same names ``readerstudy score --format
csv`` writes. The first columns are unchanged, so the responses export still
starts with exactly the tidy frame; the grounding columns of
``grounding_hits.GROUNDING_COLUMNS`` (the location's slice, x and y in
stored-image pixels, "no focal finding", and ``hit``: 1/0 on a case with a
reference region, blank on others; what ``readerstudy score`` needs for G, GA
and U) follow it, then the viewer columns of ``results.INTERACTION_COLUMNS``
(slices visited, windows used, zoom, fullscreen time), before the provenance.
Parquet files carry the same figures in their key-value metadata too (key
``readerstudy``), with the study, what was exported and when.

The responses and MRMC exports end their data columns with ``cohort``: a model
run's cohort (``ModelRun.cohort``), empty for readers. The ``key`` export is
the answer-key CSV of DESIGN.md section 4 (``case_id,diagnosis,synonyms``),
exactly what ``readerstudy grade --key`` and the key upload read, so it has no
provenance columns (they would be read as part of the key).

Model runs (reader_app/analysis/model_runs.py): ``runs`` a row per run (tokens,
cost, cost per correct answer, latency p50/p95, run group and repeat),
``run-replies`` a row per model reply (tokens, cost, latency, the reasoning text
and the raw reply: an analyst's file), ``repeats`` a row per group of repeat
runs (mean and SD of the scores, run-to-run agreement). When the study has
repeat runs, the responses export ends its data columns with ``run_group`` and
``repeat`` too, which ``readerstudy score`` reads.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from datetime import datetime
from typing import Any, Final

import pandas as pd
import pyarrow as pa
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from reader_app.analysis.data import (
    has_repeat_runs,
    how_to_grade,
    run_cohorts,
    study_data,
    with_cohort,
)
from reader_app.analysis.model_runs import (
    repeat_frame,
    repeat_summary,
    run_replies,
    run_usage,
)
from reader_app.analysis.mrmc import mrmc_frame
from reader_app.analysis.report_answers import report_answers_frame
from reader_app.analysis.report_scores import rubric_mrmc_rows
from reader_app.analysis.timing import timing_frame, with_timing
from reader_app.core.csv_safe import spreadsheet_csv
from reader_app.core.errors import ReaderStudyError
from reader_app.grading.key import KEY_COLUMNS, study_key, write_key_csv
from reader_app.grading.rubric_grades import rubric_frame
from reader_app.grounding_audit.view import audit_params, audit_table, study_audits
from reader_app.models import AuditEvent, Study, utcnow
from reader_app.results import tidy_responses
from scoring import FrameError, ScoringParams, UngradedRowsError, switch_table

WHAT: Final = (
    "responses",
    "audit",
    "mrmc",
    "reports",
    "key",
    "audit-grounding",
    "runs",
    "run-replies",
    "repeats",
    "aid",
)
# the MRMC export's row sets: 0/1 diagnosis scores (default), 0-40 report scores, or both
MRMC_TASKS: Final = ("diagnosis", "report", "all")
FORMATS: Final = ("csv", "parquet")
AUDIT_COLUMNS: Final = ("id", "at", "actor", "action", "detail")
METADATA_KEY: Final = b"readerstudy"
MIME: Final = {"csv": "text/csv", "parquet": "application/vnd.apache.parquet"}


class ExportError(ReaderStudyError, ValueError):
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


def key_frame(*, session: Session, study_id: int) -> pd.DataFrame:
    """The study's answer key, one row per case with a key, in import order."""
    entries = study_key(session=session, study_id=study_id)
    return pd.DataFrame(
        [[e.case_id, e.diagnosis, e.synonyms_text] for _, e in sorted(entries.items())],
        columns=list(KEY_COLUMNS),
    )


def export_frame(
    what: str,
    *,
    session: Session,
    study: Study,
    params: ScoringParams | None = None,
    with_reference: bool = True,
    task: str = "diagnosis",
) -> pd.DataFrame:
    """The rows of one export, provenance columns included (not in the key's).
    ``with_reference``: the reports export carries the reference report (the
    analyst's copy; a coordinator's page leaves it out). ``task``: the MRMC
    export's rows, ``diagnosis`` (0/1 scores, the default), ``report`` (0-40
    rubric scores) or ``all`` (both: never analyse them as one endpoint)."""
    params = params or ScoringParams()
    assert study.id is not None
    if what == "key":
        return key_frame(session=session, study_id=study.id)
    cohorts = run_cohorts(session=session, study_id=study.id)
    if what == "responses":
        # the tidy frame, where each answer points, what each reader did in the viewer,
        # then reading times
        frame = with_timing(
            tidy_responses(
                session=session, study_id=study.id, with_grounding=True, with_interaction=True
            ),
            timing_frame(session=session, study_id=study.id),
        )
        frame = with_cohort(frame, cohorts, "responder")
        if has_repeat_runs(session=session, study_id=study.id):  # what `score` reads
            frame = repeat_frame(frame, session=session, study_id=study.id)
    elif what == "runs":  # a row per model run: tokens, cost, cost per correct, latency
        frame = run_usage(session=session, study_id=study.id)
    elif what == "run-replies":  # a row per model reply: usage, reasoning text, raw reply
        frame = run_replies(session=session, study_id=study.id)
    elif what == "repeats":  # a row per group of repeat runs: mean, SD, agreement
        frame = repeat_summary(session=session, study_id=study.id)
    elif what == "audit":
        frame = audit_frame(session=session, study_id=study.id)
    elif what == "mrmc":
        if task not in MRMC_TASKS:
            raise ExportError(f"--task must be one of {', '.join(MRMC_TASKS)}, not {task!r}")
        frame = mrmc_frame(study_data(session=session, study=study).frame, params)
        frame = with_timing(
            frame, timing_frame(session=session, study_id=study.id), keys=("reader", "case")
        )
        if task == "report":
            frame = frame.iloc[0:0]
        rubric = rubric_frame(session=session, study_id=study.id) if task != "diagnosis" else None
        if rubric is not None and len(rubric):
            parts = [f for f in (frame, rubric_mrmc_rows(rubric)) if len(f)]
            frame = pd.concat(parts, ignore_index=True)
        frame = with_cohort(frame, cohorts, "reader")
    elif what == "reports":
        frame = report_answers_frame(
            session=session, study_id=study.id, with_reference=with_reference
        )
    elif what == "audit-grounding":  # the causal grounding audits, a row per (audit, arm)
        frame = audit_table(
            study_audits(session=session, study_id=study.id, params=audit_params(params))
        )
    elif what == "aid":  # the AI-aided arm: a row per (reader, aided case) and its switch
        data = study_data(session=session, study=study)
        frame = switch_table(data.with_aided, case_ids=list(data.case_ids))
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


def to_bytes(
    frame: pd.DataFrame, fmt: str, metadata: dict[str, Any] | None = None, *, raw: bool = False
) -> bytes:
    """CSV (UTF-8, RFC 4180 quoting; formula-like text defused unless ``raw``, see
    reader_app/core/csv_safe.py) or Parquet (exact, with metadata) bytes."""
    if fmt == "csv":
        return spreadsheet_csv(frame, raw=raw).encode("utf-8")
    if fmt == "parquet":
        import pyarrow.parquet as pq  # here: ~9 MiB the CSV exports (the default) never need

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
    import pyarrow.parquet as pq

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
    raw: bool = False,
    with_reference: bool = True,
    task: str = "diagnosis",
) -> bytes:
    params = params or ScoringParams()
    if what == "key" and fmt == "csv":  # the key file's one writer (grading.key)
        assert study.id is not None
        out = io.StringIO(newline="")
        entries = study_key(session=session, study_id=study.id)
        write_key_csv([e for _, e in sorted(entries.items())], out, raw=raw)
        return out.getvalue().encode("utf-8")
    frame = export_frame(
        what, session=session, study=study, params=params, with_reference=with_reference, task=task
    )
    return to_bytes(frame, fmt, export_metadata(what, study, params), raw=raw)


def deferred_export(
    engine: Engine,
    what: str,
    fmt: str,
    *,
    study_id: int,
    params: ScoringParams,
    with_reference: bool = True,
) -> Callable[[], bytes]:
    """A builder of one export's bytes, to run when the file is asked for (the Exports
    page's buttons): it opens a session of its own, so it may run on any thread."""

    def build() -> bytes:
        with Session(engine, expire_on_commit=False) as session:
            study = session.get(Study, study_id)
            if study is None:
                raise ExportError("This study no longer exists.")
            return export_bytes(
                what, fmt, session=session, study=study, params=params,
                with_reference=with_reference,
            )  # fmt: skip

    return build


def export_refusal(
    what: str, frame: pd.DataFrame, params: ScoringParams, *, slug: str = "STUDY"
) -> str | None:
    """Why ``what`` cannot be exported from the study's tidy ``frame`` yet, or None.

    Only the MRMC export refuses (scoring.FrameError on an answer without a verdict,
    then said with who can grade it and where: ``how_to_grade``); the others export
    whatever there is.
    """
    if what != "mrmc":
        return None
    try:
        mrmc_frame(frame, params)
    except UngradedRowsError as exc:
        return f"{exc} {how_to_grade(slug)}"
    except FrameError as exc:
        return str(exc)
    return None


def file_name(slug: str, what: str, fmt: str) -> str:
    return f"{slug}-{what}.{fmt}"
