"""The ingestion report: what was read, what was dropped, what was refused and why.

It is printed for the coordinator (file names appear, since they are theirs)
and never stored: only ``summary()``, which holds counts, goes to the audit log.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from reader_app.ingest.anonymize import DropCount
from reader_app.ingest.errors import first_lines


@dataclass(frozen=True)
class FlaggedImage:
    """An image the burned-in guard flagged: a reviewer clears it or the case is excluded."""

    case_id: str
    file: str  # relative to the manifest
    reason: str
    cleared_by: str | None = None  # the manifest's reviewed_by, when set


@dataclass
class IngestionReport:
    manifest: str
    slug: str = ""
    read: list[str] = field(default_factory=list)
    raster_dropped: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    reviewed: list[str] = field(default_factory=list)
    flagged: list[FlaggedImage] = field(default_factory=list)
    headers: DropCount = field(default_factory=DropCount)
    cases: int = 0
    images: int = 0
    new_assets: int = 0
    imported: bool = False

    def problem(self, message: str, *, refused: bool = False) -> None:
        (self.refused if refused else self.errors).append(message)

    def summary(self) -> dict[str, Any]:
        """Counts only: safe to store (no file names, no header values)."""
        return {
            "cases": self.cases,
            "images": self.images,
            "new_assets": self.new_assets,
            "dicom_files_decoded": self.headers.files,
            "header_elements_dropped": self.headers.elements,
            "private_elements_dropped": self.headers.private,
            "reviewed_cases": len(self.reviewed),
        }

    def text(self) -> str:
        target = f" -> study {self.slug!r}" if self.slug else ""
        lines = [f"Ingestion report: {self.manifest}{target}"]
        lines.append(f"Read ({len(self.read)} case(s)):")
        lines += [f"  {line}" for line in self.read] or ["  nothing"]
        lines.append("Dropped:")
        h = self.headers
        lines.append(
            f"  DICOM headers: {h.elements} element(s) not copied from {h.files} decoded file(s)"
            f", {h.private} of them private, {h.overlays} overlay element(s);"
            " only pixels and the rendering fields were used, no header, file name or path kept"
        )
        lines += [f"  {line}" for line in self.raster_dropped]
        lines.append(f"Refused ({len(self.refused)}):")
        lines += [f"  {line}" for line in first_lines(self.refused)] or ["  nothing"]
        if self.reviewed:
            lines.append("Cleared by a named reviewer (burned-in annotation):")
            lines += [f"  {line}" for line in self.reviewed]
        if self.errors:
            lines.append(f"Errors ({len(self.errors)}):")
            lines += [f"  {line}" for line in first_lines(self.errors)]
        if self.imported:
            lines.append(
                f"Result: imported {self.cases} case(s), {self.images} image(s), "
                f"{self.new_assets} new asset(s) in the store."
            )
        else:
            lines.append("Result: nothing imported; the database and asset store are unchanged.")
        return "\n".join(lines)


_ROW = re.compile(
    r"^(?P<file>[^:]+?) (?:line (?P<line>\d+)|case (?P<entry>\d+))"
    r"(?:, field '(?P<field>[^']+)'(?:, (?P<path>[^:]+))?)?: (?P<message>.*)$",
    re.DOTALL,
)
_CASE = re.compile(r"^case (?P<case>.+?): (?P<file>[^:]+?): (?P<message>.*)$", re.DOTALL)
_KEY = re.compile(r"^(?P<file>study\.toml): key '(?P<field>[^']+)': (?P<message>.*)$", re.DOTALL)
# a whole file's problem: "manifest.csv: no cases"
_FILE = re.compile(r"^(?P<file>[^\s:,]+\.(?:csv|ya?ml|toml)): (?P<message>.*)$", re.DOTALL)
_WHERE = re.compile(r"^(?P<file>.+?) (?:line|case) (?P<line>\d+)$")  # a manifest row's place


@dataclass(frozen=True)
class Problem:
    """One problem, split into its parts for a UI: the file, the line, the field, the message.

    The one problem type of the CLI's check (``importer.validate``) and the browser's
    set-up (``study_setup``): both read the importer's messages with :meth:`parse`."""

    message: str  # the part after the place
    file: str | None = None  # manifest, study.toml or an image file (relative to the manifest)
    line: int | None = None  # manifest line (CSV) or entry number (YAML)
    field: str | None = None  # manifest column or study.toml key
    case_id: str | None = None
    text: str = ""  # the whole message, as the CLI prints it (or as :meth:`at` writes it)

    @classmethod
    def at(cls, file: str, line: int | None, field: str | None, message: str) -> Problem:
        """A problem placed by its parts, worded as the importer words its own."""
        where = file + (f" line {line}" if line else "") + (f", field '{field}'" if field else "")
        return cls(message, file, line, field, None, f"{where}: {message}")

    @classmethod
    def at_row(cls, where: str, field: str, message: str) -> Problem:
        """A problem in one field of a manifest row (``where``: "manifest.csv line 4")."""
        row = _WHERE.match(where)
        file, line = (row["file"], int(row["line"])) if row else (where, None)
        return cls(message, file, line, field, None, f"{where}, field '{field}': {message}")

    def on_row(self, rows: Mapping[str, str]) -> Problem:
        """A case's problem with no manifest line (a file it could not read, the burned-in
        guard) placed on the case's row (``rows``: case id -> "manifest.csv line 4"), in
        the field it names, else ``files``; the message keeps the importer's whole text."""
        where = rows.get(self.case_id) if self.case_id and self.line is None else None
        if where is None:
            return self
        return replace(
            Problem.at_row(where, self.field or "files", self.text), case_id=self.case_id
        )

    @classmethod
    def parse(cls, text: str) -> Problem:
        """Split one of the importer's messages (their formats are fixed by docs/ingestion.md)."""
        if m := _ROW.match(text):
            line = m["line"] or m["entry"]
            message = f"{m['path']}: {m['message']}" if m["path"] else m["message"]
            return cls(message, m["file"], int(line), m["field"], None, text)
        if m := _KEY.match(text):
            return cls(m["message"], m["file"], None, m["field"], None, text)
        if m := _CASE.match(text):
            if row := _ROW.match(text[m.start("file") :]):  # a row's field checked per case
                line = row["line"] or row["entry"]
                message = f"{row['path']}: {row['message']}" if row["path"] else row["message"]
                return cls(message, row["file"], int(line), row["field"], m["case"], text)
            return cls(m["message"], m["file"], None, None, m["case"], text)
        if m := _FILE.match(text):
            return cls(m["message"], m["file"], text=text)
        return cls(text, text=text)


def problems_csv(problems: Sequence[Problem]) -> str:
    """Every problem as a CSV for the coordinator to download (formula-safe cells)."""
    import pandas as pd

    from reader_app.core.csv_safe import spreadsheet_csv

    columns = ["file", "line", "field", "case_id", "problem"]
    rows = [(p.file, p.line, p.field, p.case_id, p.text) for p in problems]
    return spreadsheet_csv(pd.DataFrame(rows, columns=columns).astype(object))


@dataclass(frozen=True)
class Validation:
    """``importer.validate``'s answer: nothing was written."""

    slug: str
    problems: list[Problem]
    flagged: list[FlaggedImage]  # the burned-in review queue
    report: IngestionReport

    @property
    def ok(self) -> bool:
        return not self.problems
