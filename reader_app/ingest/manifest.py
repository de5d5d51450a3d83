"""The study manifest (CSV, or YAML with the same fields) -> typed, validated entries.

Validation collects every problem before failing, and each message names the
manifest, the line (CSV) or entry (YAML), and the field. File paths are
resolved here, once: absolute paths and paths that leave the manifest's folder
(``..``, symlinks) are refused, so later stages only ever see safe paths.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from reader_app.ingest.errors import IngestError
from reader_app.ingest.render import WINDOW_PRESETS

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
OPTIONAL_COLUMNS = ("region",)  # an extension: the fixed contract is COLUMNS
REQUIRED = ("case_id", "kind", "files", "diagnosis")
WINDOW_NAMES = (*WINDOW_PRESETS, "file")
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


@dataclass(frozen=True)
class Manifest:
    path: Path
    root: Path  # the manifest's folder, resolved
    entries: tuple[ManifestEntry, ...]

    def rel(self, path: Path) -> str:
        """A path as the coordinator wrote it (relative), for messages and the report."""
        return path.relative_to(self.root).as_posix() or "."


class ManifestInvalid(Exception):
    def __init__(self, errors: list[str]) -> None:
        super().__init__("\n".join(errors))
        self.errors = errors


def load_manifest(path: Path) -> Manifest:
    """Parse and validate; raise ManifestInvalid listing every problem."""
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
        except IngestError as exc:
            errors.append(str(exc))
            continue
        key = entry.case_id.casefold()
        if key in seen:
            errors.append(f"{where}, field 'case_id': duplicate case id (first at {seen[key]})")
            continue
        seen[key] = where
        entries.append(entry)
    if not rows:
        errors.append(f"{path.name}: no cases")
    if errors:
        raise ManifestInvalid(errors)
    return Manifest(path=path, root=root, entries=tuple(entries))


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
    for row in reader:
        if all(not (v or "").strip() for k, v in row.items() if k is not None):
            continue  # blank line
        if row.get(None):  # type: ignore[call-overload,unused-ignore]
            raise ManifestInvalid([f"{name} line {reader.line_num}: more values than columns"])
        rows.append((f"{name} line {reader.line_num}", dict(row)))
    return rows


def _yaml_rows(name: str, text: str) -> list[tuple[str, dict[str, Any]]]:
    try:
        data = yaml.safe_load(text)
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


def _entry(where: str, row: dict[str, Any], root: Path) -> ManifestEntry:
    def bad(field: str, why: str) -> IngestError:
        return IngestError(f"{where}, field {field!r}", why)

    case_id = _text(row.get("case_id"))
    if not case_id:
        raise bad("case_id", "is empty")
    if len(case_id) > 200:
        raise bad("case_id", "is longer than 200 characters")
    kind = _text(row.get("kind")).lower()
    if kind not in ("spot", "strip"):
        raise bad("kind", f"must be spot or strip, not {kind!r}")
    diagnosis = _text(row.get("diagnosis"))
    if not diagnosis:
        raise bad("diagnosis", "is empty")
    practice_raw = row.get("practice")
    practice = practice_raw if isinstance(practice_raw, bool) else None
    if practice is None:
        flag = _text(practice_raw).lower()
        if flag not in TRUE | FALSE:
            raise bad("practice", f"must be true or false, not {flag!r}")
        practice = flag in TRUE
    windows = tuple(w.lower() for w in _split(row.get("windows")))
    for w in windows:
        if w not in WINDOW_NAMES:
            raise bad("windows", f"unknown window {w!r}; use {', '.join(WINDOW_NAMES)}")
    files = tuple(_resolve(where, f, root) for f in _split(row.get("files")))
    if not files:
        raise bad("files", "is empty")
    modality = _text(row.get("modality")).upper() or None
    return ManifestEntry(
        where=where,
        case_id=case_id,
        kind=kind,
        files=files,
        diagnosis=diagnosis,
        synonyms=_split(row.get("synonyms")),
        history=_text(row.get("history")) or None,
        modality=modality[:32] if modality else None,
        region=(_text(row.get("region")) or None),
        practice=practice,
        windows=tuple(dict.fromkeys(windows)),
        reviewed_by=_text(row.get("reviewed_by")) or None,
    )


def _resolve(where: str, raw: str, root: Path) -> Path:
    field = f"{where}, field 'files'"
    rel = Path(raw)
    if rel.is_absolute() or raw.startswith(("/", "\\")) or ":" in rel.parts[0]:
        raise IngestError(f"{field}, {raw}", "absolute path; give paths relative to the manifest")
    path = (root / rel).resolve()  # resolve() follows symlinks: a link out is an escape too
    if not path.is_relative_to(root):
        raise IngestError(f"{field}, {raw}", "path escapes the manifest's folder")
    if not path.exists():
        raise IngestError(f"{field}, {raw}", "file not found")
    return path
