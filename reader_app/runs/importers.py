"""Import model outputs (JSONL, CSV) or a RadLE long-master CSV into a study.

Reading and parsing are scoring.io's (one lenient model-output parser, one
RadLE reader); this module keeps what the tidy frame drops (the raw reply,
tokens, latency, provenance) and hands rows to import_writer. One service,
``import_run_file``, serves the CLI (``readerstudy import-run``) and the
analyst page alike: it takes a path or the uploaded bytes.

JSONL / CSV rows: ``case_id`` (the manifest's case id), a responder
(``responder`` / ``model`` / ``run``, or ``name=``), and either
``diagnosis`` + ``likert`` or the raw reply in ``output`` / ``response`` /
``text`` / ``raw`` / ``completion``. Optional: ``group`` / ``provider``,
``correct`` / ``verdict``, ``prompt_tokens``, ``completion_tokens``,
``total_tokens``, ``latency_s``, ``image_sha256``, ``cohort``, ``location`` (normalized,
as the grounded prompt asks; else the raw reply's location is read). A location
becomes stored pixels in import_writer, from the case's images.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
from sqlmodel import Session

from reader_app.core.text_rules.answers import clean_model_text
from reader_app.models import Study
from reader_app.runs.import_writer import ImportRow, ImportSummary, RunImportError, write_rows
from scoring import FrameError, is_missing_value, validate_frame
from scoring.io import (
    ABSENT,
    RAW_TEXT_KEYS,
    ParsedLocation,
    json_objects,
    location_from_value,
    model_records_to_frame,
    parse_location_output,
    radle_to_tidy,
    read_responses_csv,
)

FORMATS = ("jsonl", "csv", "radle")
META_KEYS = ("prompt_tokens", "completion_tokens", "total_tokens", "latency_s", "finish_reason")
RADLE_PROVENANCE = ("run_id", "access", "final_score_source", "model_blinded", "Associated_Images")


def _text(source: str | Path | bytes) -> tuple[str, bytes]:
    data = source if isinstance(source, bytes) else Path(source).read_bytes()
    try:
        return data.decode("utf-8-sig"), data
    except UnicodeDecodeError as exc:
        raise RunImportError(f"the file is not UTF-8 text: {exc}") from exc


def detect_format(text: str, filename: str | None = None) -> str:
    """jsonl for .jsonl/.ndjson or a first line that is a JSON object; a CSV with the
    RadLE columns is radle; any other CSV is csv."""
    suffix = Path(filename or "").suffix.lower()
    first = next((line for line in text.splitlines() if line.strip()), "")
    if suffix in (".jsonl", ".ndjson") or first.lstrip().startswith("{"):
        return "jsonl"
    header = first.replace('"', "")
    if "Master_Case_ID" in header and "final_score_authoritative" in header:
        return "radle"
    return "csv"


def _clean(value: Any) -> Any:
    return None if is_missing_value(value) else value


def _int_or_none(value: Any) -> int | None:
    return None if value is None or pd.isna(value) else int(value)


def _tidy(frame: pd.DataFrame) -> pd.DataFrame:
    try:
        return validate_frame(frame, require_verdicts=False)
    except (FrameError, ValueError) as exc:
        raise RunImportError(str(exc)) from exc


def _row(tidy: Mapping[Any, Any], **extra: Any) -> ImportRow:
    """One import row; control characters leave the diagnosis (reader_app.core.text_rules.answers),
    the count removed is kept in its metadata."""
    diagnosis = tidy["diagnosis"]
    status = str(tidy["status"])
    if not is_missing_value(diagnosis):
        diagnosis, removed = clean_model_text(str(diagnosis))
        if removed:
            extra["meta"] = {**extra.get("meta", {}), "control_chars_removed": removed}
        if not diagnosis.strip():  # nothing but control characters
            diagnosis = None
            status = "failure" if status in ("answered", "invalid") else status
    return ImportRow(
        responder=str(tidy["responder"]),
        kind=str(tidy["kind"]),
        group=_clean(tidy["group"]),
        case_id=str(tidy["case_id"]),
        status=status,
        diagnosis=None if is_missing_value(diagnosis) else str(diagnosis),
        likert=_int_or_none(tidy["likert"]),
        correct=_int_or_none(tidy["correct"]),
        **extra,
    )


def _records(text: str, fmt: str) -> list[dict[str, Any]]:
    if fmt == "csv":
        raw = read_responses_csv(io.StringIO(text))
        return [{str(k): _clean(v) for k, v in r.items()} for r in raw.to_dict(orient="records")]
    records = []
    for n, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise RunImportError(f"line {n} is not JSON: {exc.msg}") from exc
            if not isinstance(obj, dict):
                raise RunImportError(f"line {n} is not a JSON object")
            records.append(obj)
    return records


def record_location(record: Mapping[str, Any], raw: Any) -> ParsedLocation:
    """A row's own ``location`` (an object, or its JSON text in a CSV cell), else the raw
    reply's; the same bounded reader as the runner's."""
    value = record.get("location")
    if isinstance(value, str) and value.strip().startswith("{"):
        value = next(json_objects(value), value)
    if "location" in record and not is_missing_value(value):
        return location_from_value(value)
    return parse_location_output(raw) if raw is not None else ABSENT


def model_output_rows(
    text: str,
    fmt: str,
    *,
    name: str | None,
    model: str | None,
    group: str | None,
    cohort: str | None = None,
) -> list[ImportRow]:
    """JSONL / CSV model outputs, parsed by scoring.io, with raw reply and usage kept."""
    records = _records(text, fmt)
    try:
        frame = model_records_to_frame(records, responder=name)
    except FrameError as exc:
        raise RunImportError(str(exc)) from exc
    if group:
        frame["group"] = group
    rows = []
    for record, tidy in zip(records, _tidy(frame).to_dict(orient="records"), strict=True):
        usage: dict[str, Any] = record["usage"] if isinstance(record.get("usage"), dict) else {}
        meta = {k: record[k] for k in META_KEYS if _clean(record.get(k)) is not None}
        meta.update({k: v for k, v in usage.items() if k in META_KEYS})
        raw = next((record[k] for k in RAW_TEXT_KEYS if _clean(record.get(k)) is not None), None)
        rows.append(
            _row(
                tidy,
                raw_reply=None if raw is None else str(raw),
                model=model or _clean(record.get("model")) or str(tidy["responder"]),
                meta=meta,
                image_sha256=str(_clean(record.get("image_sha256")) or ""),
                location=record_location(record, raw),
                cohort=cohort or _text_or_none(record.get("cohort")),
            )
        )
    return rows


def _text_or_none(value: Any) -> str | None:
    value = _clean(value)
    return None if value is None else str(value)


def radle_rows(
    text: str, *, include_excluded: bool, exclude: Sequence[str] = ()
) -> list[ImportRow]:
    """A RadLE long-master CSV read by scoring.io.radle (its rows, readers, roster and
    row rules), with each row's provenance kept in meta and a reader's RadLE role and
    raw seniority in their profile."""
    raw = read_responses_csv(io.StringIO(text))
    try:
        frame = radle_to_tidy(raw, include_excluded=include_excluded, exclude=exclude)
    except FrameError as exc:
        raise RunImportError(str(exc)) from exc
    sources = raw.iloc[frame["source_row"].to_numpy()].to_dict(orient="records")
    rows = []
    for source, tidy, extra in zip(
        sources,
        _tidy(frame).to_dict(orient="records"),
        frame[["cohort", "role", "seniority"]].to_dict(orient="records"),
        strict=True,
    ):
        meta = {"radle": {k: source[k] for k in RADLE_PROVENANCE if source.get(k)}}
        human = tidy["kind"] == "human"
        profile = {k: extra[k] for k in ("role", "seniority") if human and extra[k]}
        rows.append(
            _row(
                tidy,
                raw_reply=source["diagnosis"] or None,
                model=None if human else source["candidate"],
                meta=meta,
                cohort=extra["cohort"],  # access/domain: closed/general, open/medical, ...
                reader_profile={"radle": profile} if profile else {},
            )
        )
    return rows


def import_run_file(
    *,
    session: Session,
    study: Study,
    source: str | Path | bytes,
    fmt: str | None = None,
    filename: str | None = None,
    name: str | None = None,
    model: str | None = None,
    group: str | None = None,
    prompt_version: str | None = None,
    include_excluded: bool = False,
    exclude: Sequence[str] = (),
    replace: bool = False,
    verdict_conflicts: str = "error",
    actor: str = "cli",
    commit: bool = True,
    cohort: str | None = None,
) -> ImportSummary:
    """Import a file (path, or the bytes of an upload) into ``study``; all or nothing.

    ``fmt`` is jsonl, csv or radle (detected when None). ``name`` names the run
    when the file has no responder column. Existing (responder, case) rows are
    kept unless ``replace``. ``exclude`` (RadLE) names models taken off the board.
    ``cohort`` is the runs' cohort for JSONL / CSV (over a
    ``cohort`` column); a RadLE file brings its own (access/domain). Raises
    RunImportError with a message for the user.
    """
    text, data = _text(source)
    if filename is None and not isinstance(source, bytes):
        filename = Path(source).name
    fmt = fmt or detect_format(text, filename)
    if fmt not in FORMATS:
        raise RunImportError(f"format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    if fmt == "radle":
        if cohort:
            raise RunImportError(
                "a RadLE file names each run's cohort (access/domain): no --cohort with it"
            )
        rows = radle_rows(text, include_excluded=include_excluded, exclude=exclude)
    elif exclude:
        raise RunImportError("--exclude is for a RadLE file (it names models of its roster)")
    else:
        rows = model_output_rows(text, fmt, name=name, model=model, group=group, cohort=cohort)
    params = {
        "format": fmt,
        "file": filename,
        "sha256": hashlib.sha256(data).hexdigest(),
        "prompt_version": prompt_version,
    }
    try:
        summary = write_rows(
            session=session,
            study=study,
            rows=rows,
            fmt=fmt,
            params={k: v for k, v in params.items() if v is not None},
            replace=replace,
            verdict_conflicts=verdict_conflicts,
            actor=actor,
        )
    except BaseException:
        session.rollback()
        raise
    if commit:
        session.commit()
    return summary
