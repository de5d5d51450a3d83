"""The answer key: a reference diagnosis and accepted synonyms per case.

File contract (DESIGN.md section 4): CSV ``case_id,diagnosis,synonyms`` with
synonyms separated by ``|``. This module parses and validates such files and
reads a study's key from the database; changing a key (with history, audit and
re-grading) is in ``key_admin``.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from sqlmodel import Session, col, select

from reader_app.core.csv_safe import LINE_END, safe_cells, spreadsheet_unsafe
from reader_app.core.errors import ReaderStudyError
from reader_app.grading.normalize import normalize_answer
from reader_app.models import AnswerKey, Case

KEY_COLUMNS = ("case_id", "diagnosis", "synonyms")
MAX_KEY_ERRORS = 20


class AnswerKeyError(ReaderStudyError, ValueError):
    """The key file or an edit is not acceptable; the message lists what is wrong."""


@dataclass(frozen=True)
class KeyEntry:
    """The key of one case. ``case_id`` is the manifest's case id."""

    case_id: str
    diagnosis: str
    synonyms: tuple[str, ...] = ()

    @property
    def accepted(self) -> frozenset[str]:
        """Normalized forms that auto-grade correct: the reference and each synonym."""
        forms = {normalize_answer(self.diagnosis), *map(normalize_answer, self.synonyms)}
        forms.discard("")
        return frozenset(forms)

    @property
    def synonyms_text(self) -> str:
        return "|".join(self.synonyms)


def split_synonyms(text: str | Iterable[str] | None) -> tuple[str, ...]:
    """``a|b|c`` (or a list) -> stripped, non-empty, first spelling of each normalized form."""
    if text is None:
        return ()
    parts = text.split("|") if isinstance(text, str) else list(text)
    seen: set[str] = set()
    out: list[str] = []
    for part in parts:
        value = " ".join(part.split())
        norm = normalize_answer(value)
        if norm and norm not in seen:
            seen.add(norm)
            out.append(value)
    return tuple(out)


def make_entry(case_id: str, diagnosis: str, synonyms: str | Iterable[str] | None) -> KeyEntry:
    """A validated entry; raises AnswerKeyError for an empty reference or a '|' in it."""
    reference = " ".join((diagnosis or "").split())
    if not normalize_answer(reference):
        raise AnswerKeyError(f"case {case_id}: the reference diagnosis is empty")
    if "|" in reference:
        raise AnswerKeyError(f"case {case_id}: '|' separates synonyms; not allowed in diagnosis")
    syns = tuple(
        s for s in split_synonyms(synonyms) if normalize_answer(s) != normalize_answer(reference)
    )
    return KeyEntry(case_id=case_id, diagnosis=reference, synonyms=syns)


def parse_key_csv(source: str | Path | TextIO) -> dict[str, KeyEntry]:
    """Read a key file (path, open file or CSV text); every problem is reported at once."""
    if isinstance(source, Path):
        text = source.read_text(encoding="utf-8-sig")
    elif isinstance(source, str):
        text = source.removeprefix("\ufeff")
    else:
        text = source.read().removeprefix("\ufeff")
    reader = csv.DictReader(io.StringIO(text))
    header = [h.strip() for h in (reader.fieldnames or [])]
    missing = [c for c in ("case_id", "diagnosis") if c not in header]
    if missing:
        raise AnswerKeyError(
            f"answer key must have the columns {','.join(KEY_COLUMNS)}; missing {missing}"
        )
    reader.fieldnames = header
    entries: dict[str, KeyEntry] = {}
    errors: list[str] = []
    for line, raw_row in enumerate(reader, start=2):
        # a key this app wrote has formula-like cells defused: read them back exactly
        row = {k: spreadsheet_unsafe(v) if isinstance(v, str) else v for k, v in raw_row.items()}
        case_id = (row.get("case_id") or "").strip()
        if not case_id:
            errors.append(f"line {line}: empty case_id")
            continue
        if case_id in entries:
            errors.append(f"line {line}: case {case_id} appears twice")
            continue
        try:
            entries[case_id] = make_entry(case_id, row.get("diagnosis") or "", row.get("synonyms"))
        except AnswerKeyError as exc:
            errors.append(f"line {line}: {exc}")
    if errors:
        more = f" (and {len(errors) - MAX_KEY_ERRORS} more)" if len(errors) > MAX_KEY_ERRORS else ""
        raise AnswerKeyError("; ".join(errors[:MAX_KEY_ERRORS]) + more)
    return entries


def write_key_csv(entries: Iterable[KeyEntry], out: TextIO, *, raw: bool = False) -> None:
    """The key as CSV; formula-like text defused unless ``raw`` (parse_key_csv undoes it)."""
    writer = csv.writer(out, lineterminator=LINE_END)  # CRLF: a CR in a cell is quoted
    writer.writerow(KEY_COLUMNS)
    for e in entries:
        row = [e.case_id, e.diagnosis, e.synonyms_text]
        writer.writerow(row if raw else safe_cells(row))


def entry_from_row(source_id: str, row: AnswerKey) -> KeyEntry:
    return KeyEntry(
        case_id=source_id, diagnosis=row.diagnosis, synonyms=split_synonyms(row.synonyms)
    )


def study_key(*, session: Session, study_id: int) -> dict[int, KeyEntry]:
    """The current key of every case of a study, by internal case id."""
    rows = session.exec(
        select(Case.id, Case.source_id, AnswerKey)
        .join(AnswerKey, col(AnswerKey.case_id) == Case.id)
        .where(Case.study_id == study_id)
    ).all()
    return {cid: entry_from_row(source_id, key) for cid, source_id, key in rows if cid is not None}


def case_key(*, session: Session, case_id: int) -> KeyEntry | None:
    row = session.exec(
        select(Case.source_id, AnswerKey)
        .join(AnswerKey, col(AnswerKey.case_id) == Case.id)
        .where(Case.id == case_id)
    ).first()
    return None if row is None else entry_from_row(row[0], row[1])


def by_source_id(entries: Mapping[int, KeyEntry]) -> dict[str, KeyEntry]:
    return {e.case_id: e for e in entries.values()}
