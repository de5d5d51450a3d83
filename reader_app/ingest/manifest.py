"""The study manifest (CSV, or YAML with the same fields) -> typed, validated entries.

Validation collects every problem before failing, and each message names the
manifest, the line (CSV) or entry (YAML), and the field. File paths are
resolved here, once: absolute paths and paths that leave the manifest's folder
(``..``, symlinks) are refused, so later stages only ever see safe paths.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from reader_app.core.errors import ReaderStudyError
from reader_app.core.text_rules.imported import (
    MAX_CASE_ID,
    MAX_DIAGNOSIS,
    MAX_HISTORY,
    MAX_REFERENCE_REGION,
    MAX_REGION,
    MAX_REVIEWED_BY,
    MAX_SYNONYMS,
    normalize_id,
    text_problem,
)
from reader_app.ingest.dicom_terms import manifest_modality
from reader_app.ingest.errors import IngestError
from reader_app.study.config import ANSWER_MODES
from reader_app.study.window_presets import ORIGINAL, PER_SLICE, STORED_NAMES, WINDOW_PRESETS
from scoring import Box, RegionError, parse_region

COLUMNS = (
    "case_id",
    "kind",
    "files",
    "diagnosis",
    "synonyms",
    "history",
    "modality",
    "practice",
    "windows",
    "reviewed_by",
)
# extensions: the fixed contract is COLUMNS. ``answer`` (diagnosis | report) overrides the
# study's answer mode for one case; a report case's reference report is coordinator-only.
# ``reference_region`` (boxes) or ``reference_mask`` (a file) is the case's grounding truth
# (SCORING.md section 8), checked against the stored pixels in ingest/reference.py.
OPTIONAL_COLUMNS = (
    "region",
    "answer",
    "reference_findings",
    "reference_impression",
    "reference_region",
    "reference_mask",
)

REQUIRED = ("case_id", "kind", "files", "diagnosis")
WINDOW_NAMES = (
    *WINDOW_PRESETS,
    ORIGINAL,
    PER_SLICE,
)  # "file", the old name of "original", is read too
TRUE = {"true", "yes", "1", "y"}
FALSE = {"false", "no", "0", "n", ""}


@dataclass(frozen=True)
class ManifestEntry:
    where: str  # "manifest.csv line 4": for messages only, never stored
    case_id: str
    kind: str
    files: tuple[Path, ...]  # resolved, inside the manifest folder
    diagnosis: str
    synonyms: tuple[str, ...] = ()
    history: str | None = None
    modality: str | None = None
    region: str | None = None
    practice: bool = False
    windows: tuple[str, ...] = ()
    reviewed_by: str | None = None
    answer: str | None = None  # None: the study's default (study.toml ``answer``)
    reference_findings: str | None = None
    reference_impression: str | None = None
    reference_boxes: tuple[Box, ...] = ()  # stored-image pixels; slice set for a strip
    reference_mask: Path | None = None  # resolved: a PNG (spot) or a NIfTI (strip)


@dataclass(frozen=True)
class Manifest:
    path: Path
    root: Path  # the manifest's folder, resolved
    entries: tuple[ManifestEntry, ...]  # the valid rows
    errors: tuple[str, ...] = ()  # problems of the other rows (load_manifest(strict=False))

    def rel(self, path: Path) -> str:
        """A path as the coordinator wrote it (relative), for messages and the report."""
        return path.relative_to(self.root).as_posix() or "."


class ManifestInvalid(ReaderStudyError):
    def __init__(self, errors: list[str]) -> None:
        super().__init__("\n".join(errors))
        self.errors = errors


def load_manifest(path: Path, *, strict: bool = True) -> Manifest:
    """Parse and validate; raise ManifestInvalid listing every problem.

    With ``strict=False`` a manifest whose rows have problems still loads: the
    valid rows are its entries and the problems its ``errors``, so the importer
    can go on checking the images of the valid rows in the same pass. A
    manifest that cannot be read at all (or has no cases) always raises.
    """
    path = Path(path)
    if not path.is_file():
        raise ManifestInvalid([f"{path}: manifest not found"])
    root = path.parent.resolve()
    try:
        text = path.read_text(encoding="utf-8-sig")  # -sig: Excel writes a BOM
    except (OSError, UnicodeDecodeError) as exc:
        raise ManifestInvalid([f"{path.name}: cannot read as UTF-8 text: {exc}"]) from exc
    if path.suffix.lower() in {".yaml", ".yml"}:
        rows = _yaml_rows(path.name, text)
    else:
        rows = _csv_rows(path.name, text)
    errors: list[str] = []
    entries: list[ManifestEntry] = []
    seen: dict[str, str] = {}
    for where, row in rows:
        try:
            entry = _entry(where, row, root)
        except ManifestInvalid as exc:
            errors.extend(exc.errors)
            continue
        key = entry.case_id.casefold()  # after NFKC: look-alike ids collide here
        if key in seen:
            errors.append(f"{where}, field 'case_id': duplicate case id (first at {seen[key]})")
            continue
        seen[key] = where
        entries.append(entry)
    if not rows:
        raise ManifestInvalid([*errors, f"{path.name}: no cases"])
    if errors and strict:
        raise ManifestInvalid(errors)
    return Manifest(path=path, root=root, entries=tuple(entries), errors=tuple(errors))


def _csv_rows(name: str, text: str) -> list[tuple[str, dict[str, Any]]]:
    reader = csv.DictReader(io.StringIO(text))
    header = [h.strip() for h in reader.fieldnames or []]
    missing = [c for c in REQUIRED if c not in header]
    unknown = [c for c in header if c not in COLUMNS + OPTIONAL_COLUMNS]
    if missing or unknown:
        why = []
        if missing:
            why.append(f"missing column(s) {', '.join(missing)}")
        if unknown:
            why.append(f"unknown column(s) {', '.join(unknown)}")
        raise ManifestInvalid([f"{name} line 1: {'; '.join(why)}; expected {','.join(COLUMNS)}"])
    reader.fieldnames = header
    rows = []
    try:
        for row in reader:
            if all(not (v or "").strip() for k, v in row.items() if k is not None):
                continue  # blank line
            if row.get(None):  # type: ignore[call-overload,unused-ignore]
                raise ManifestInvalid([f"{name} line {reader.line_num}: more values than columns"])
            rows.append((f"{name} line {reader.line_num}", dict(row)))
    except csv.Error as exc:  # e.g. a field over csv.field_size_limit()
        where = f"{name} line {reader.line_num + 1}"  # the line being read when it failed
        raise ManifestInvalid([f"{where}: cannot read as CSV: {exc}"]) from exc
    return rows


class _ManifestLoader(yaml.BaseLoader):
    """YAML without aliases, anchors or tags: every scalar stays a string.

    BaseLoader resolves no implicit types (no ints, dates, booleans) and
    builds no Python objects; refusing aliases stops "billion laughs"
    manifests, where a few kilobytes of nested aliases expand to gigabytes.
    """

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()  # type: ignore[no-untyped-call]
        line = event.start_mark.line + 1
        if isinstance(event, yaml.AliasEvent):
            raise yaml.YAMLError(f"line {line}: aliases (*name) are not allowed in a manifest")
        if getattr(event, "anchor", None):
            raise yaml.YAMLError(f"line {line}: anchors (&name) are not allowed in a manifest")
        return super().compose_node(parent, index)


def _yaml_rows(name: str, text: str) -> list[tuple[str, dict[str, Any]]]:
    try:
        data = yaml.load(text, Loader=_ManifestLoader)  # BaseLoader: strings only
    except yaml.YAMLError as exc:
        raise ManifestInvalid([f"{name}: not valid YAML: {exc}"]) from exc
    cases = data.get("cases") if isinstance(data, dict) else data
    if not isinstance(cases, list) or not all(isinstance(c, dict) for c in cases):
        raise ManifestInvalid([f"{name}: expected a list of cases (or a 'cases:' list)"])
    rows = []
    for i, case in enumerate(cases, start=1):
        unknown = sorted(set(map(str, case)) - set(COLUMNS + OPTIONAL_COLUMNS))
        if unknown:
            raise ManifestInvalid([f"{name} case {i}: unknown field(s) {', '.join(unknown)}"])
        rows.append((f"{name} case {i}", case))
    return rows


def _text(value: Any) -> str:
    return "" if value is None else str(value).strip()


def _split(value: Any) -> tuple[str, ...]:
    # CSV cells are '|'-separated; YAML may give a list instead.
    items = value if isinstance(value, list) else _text(value).split("|")
    return tuple(s for s in (_text(v) for v in items) if s)


# field -> (limit in characters, may hold several lines)
TEXT_RULES: dict[str, tuple[int, bool]] = {
    "case_id": (MAX_CASE_ID, False),
    "diagnosis": (MAX_DIAGNOSIS, False),
    "synonyms": (MAX_SYNONYMS, False),
    "history": (MAX_HISTORY, True),
    "region": (MAX_REGION, False),
    "reviewed_by": (MAX_REVIEWED_BY, False),
    "files": (4096, False),
    "kind": (16, False),
    "practice": (16, False),
    "windows": (200, False),
    "modality": (16, False),
    "answer": (16, False),
    "reference_findings": (MAX_HISTORY, True),
    "reference_impression": (MAX_HISTORY, True),
    "reference_region": (MAX_REFERENCE_REGION, False),
    "reference_mask": (4096, False),
}
MASK_SUFFIXES = {"spot": (".png",), "strip": (".nii", ".nii.gz")}


def _entry(where: str, row: dict[str, Any], root: Path) -> ManifestEntry:
    """One row -> an entry; raise ManifestInvalid listing every problem of the row."""
    problems: list[str] = []

    def bad(field: str, why: str) -> None:
        problems.append(f"{where}, field {field!r}: {why}")

    for field, value in row.items():
        if field is None:
            continue
        if isinstance(value, dict) or (
            isinstance(value, list) and not all(isinstance(v, str) for v in value)
        ):
            bad(field, "must be text (or a list of texts)")
            row[field] = None
            continue
        limit, multiline = TEXT_RULES.get(field, (200, False))
        joined = "|".join(value) if isinstance(value, list) else _text(value)
        why = text_problem(joined, max_chars=limit, multiline=multiline)
        if why:
            bad(field, why)
            row[field] = None

    case_id = normalize_id(_text(row.get("case_id")))
    if not case_id and "field 'case_id'" not in " ".join(problems):
        bad("case_id", "is empty")
    elif len(case_id) > MAX_CASE_ID:  # NFKC can lengthen an id (U+337F is four letters)
        bad("case_id", f"is {len(case_id)} characters long after NFKC; the limit is {MAX_CASE_ID}")
    kind = _text(row.get("kind")).lower()
    if kind not in ("spot", "strip"):
        bad("kind", f"must be spot or strip, not {kind!r}")
    answer = _text(row.get("answer")).lower() or None
    if answer is not None and answer not in ANSWER_MODES:
        bad("answer", f"must be diagnosis or report, not {answer!r}")
    ref_findings = _text(row.get("reference_findings")) or None
    ref_impression = _text(row.get("reference_impression")) or None
    diagnosis = _text(row.get("diagnosis"))
    if not diagnosis and ref_impression:  # a report case: its impression's first line
        diagnosis = ref_impression.splitlines()[0][:300]
    if not diagnosis and "field 'diagnosis'" not in " ".join(problems):
        bad("diagnosis", "is empty")
    synonyms = _split(row.get("synonyms"))
    for synonym in synonyms:
        if len(synonym) > MAX_DIAGNOSIS:
            bad("synonyms", f"a synonym is longer than {MAX_DIAGNOSIS} characters")
            break
    flag = _text(row.get("practice")).lower()
    if flag not in TRUE | FALSE:
        bad("practice", f"must be true or false, not {flag!r}")
    windows = tuple(w.lower() for w in _split(row.get("windows")))
    for w in windows:
        if w not in WINDOW_NAMES and w != "file":
            bad("windows", f"unknown window {w!r}; use {', '.join(WINDOW_NAMES)}")
    windows = tuple(STORED_NAMES.get(w, w) for w in windows)  # ingest's own name
    files: list[Path] = []
    for raw in _split(row.get("files")):
        try:
            files.append(_resolve(where, raw, root))
        except IngestError as exc:
            problems.append(str(exc))
    if not files and "field 'files'" not in " ".join(problems):
        bad("files", "is empty")
    modality = _text(row.get("modality")) or None
    if modality:
        try:
            modality = manifest_modality(modality)
        except ValueError as exc:
            bad("modality", str(exc))
    boxes, mask = _reference(where, row, root, kind, bad, problems)
    if problems:
        raise ManifestInvalid(problems)
    return ManifestEntry(
        where=where,
        case_id=case_id,
        kind=kind,
        files=tuple(files),
        diagnosis=diagnosis,
        synonyms=synonyms,
        history=_text(row.get("history")) or None,
        modality=modality,
        region=(_text(row.get("region")) or None),
        practice=flag in TRUE,
        windows=tuple(dict.fromkeys(windows)),
        reviewed_by=_text(row.get("reviewed_by")) or None,
        answer=answer,
        reference_findings=ref_findings,
        reference_impression=ref_impression,
        reference_boxes=boxes,
        reference_mask=mask,
    )


def _reference(
    where: str,
    row: dict[str, Any],
    root: Path,
    kind: str,
    bad: Callable[[str, str], None],
    problems: list[str],
) -> tuple[tuple[Box, ...], Path | None]:
    """The row's reference boxes and mask file; whether they fit the image is checked later,
    against the stored pixels (ingest/reference.py)."""
    boxes: tuple[Box, ...] = ()
    value = row.get("reference_region")  # YAML may list the boxes
    try:
        boxes = parse_region(";".join(value) if isinstance(value, list) else _text(value))
    except RegionError as exc:
        bad("reference_region", str(exc))
    if kind == "spot" and any(b.slice is not None for b in boxes):
        bad("reference_region", "a spot case's boxes are x,y,w,h (no 'slice:')")
    if kind == "strip" and any(b.slice is None for b in boxes):
        bad("reference_region", "a strip case's boxes are slice:x,y,w,h (slice 1 is the first)")
    raw = _text(row.get("reference_mask"))
    if not raw:
        return boxes, None
    if boxes:
        bad("reference_mask", "give reference_region or reference_mask, not both")
    suffixes = MASK_SUFFIXES.get(kind, ())
    if suffixes and not raw.lower().endswith(suffixes):
        bad("reference_mask", f"a {kind} case's mask is a {' or '.join(suffixes)} file")
        return boxes, None
    try:
        return boxes, _resolve(where, raw, root, field="reference_mask")
    except IngestError as exc:
        problems.append(str(exc))
        return boxes, None


def _resolve(where: str, raw: str, root: Path, *, field: str = "files") -> Path:
    field = f"{where}, field {field!r}"
    rel = Path(raw)
    if rel.is_absolute() or raw.startswith(("/", "\\")) or ":" in rel.parts[0]:
        raise IngestError(f"{field}, {raw}", "absolute path; give paths relative to the manifest")
    path = (root / rel).resolve()  # resolve() follows symlinks: a link out is an escape too
    if not path.is_relative_to(root):
        raise IngestError(f"{field}, {raw}", "path escapes the manifest's folder")
    if not path.exists():
        raise IngestError(f"{field}, {raw}", "file not found")
    return path
