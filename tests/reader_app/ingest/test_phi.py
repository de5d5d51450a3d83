"""No trace of the patient: header values, private tags, file names and paths never
reach the database, the asset store or the PNGs' metadata (SQLite and PostgreSQL)."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from pydicom import dcmread
from pydicom.valuerep import PersonName
from sqlalchemy import MetaData, select
from sqlalchemy.engine import Engine

from reader_app.core.db import make_engine
from reader_app.core.settings import Settings
from reader_app.ingest.importer import import_manifest
from tests.reader_app.ingest.helpers import (
    SERIES_CT5,
    case,
    copy_sample,
    sample_dir,
    write_manifest,
)

SECRET = "zz-secret-filename-4711"  # in every file and folder name we import
KNOWN_PHI = [
    "CompressedSamples^CT1",  # CT_small.dcm PatientName
    "JFK IMAGING CENTER",  # CT_small.dcm InstitutionName
    "CQ500-CT-310",  # 693_UNCR.dcm PatientName
    "CompressedSamples^RG1",  # RG1_UNCR.dcm PatientName
    "Doe^Peter",  # the CT5N series
    "GEMS_IDEN_01",  # CT_small.dcm private creator
    "HiSpeed CT/i",  # CT_small.dcm private tag value
]
# values our own output legitimately contains (modality codes) or that are too generic
ALLOWED = {"CT", "CR", "MR"}


def header_strings(path: Path) -> set[str]:
    """Every text value in the header, private tags included, 6+ characters long."""
    found: set[str] = set()

    def walk(ds: object) -> None:
        for elem in ds:  # type: ignore[attr-defined]
            if elem.VR == "SQ":
                for item in elem.value:
                    walk(item)
                continue
            values = elem.value if isinstance(elem.value, list | tuple) else [elem.value]
            for v in values:
                if isinstance(v, str | PersonName) and len(str(v).strip()) >= 6:
                    found.add(str(v).strip())

    ds = dcmread(path)
    walk(ds.file_meta)
    walk(ds)
    return found - ALLOWED


def png_chunk_types(data: bytes) -> list[str]:
    chunks, pos = [], 8
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        chunks.append(data[pos + 4 : pos + 8].decode("ascii"))
        pos += 12 + length
    return chunks


def database_text(url: str) -> str:
    engine: Engine = make_engine(url, pooled=False)
    try:
        meta = MetaData()
        meta.reflect(engine)
        with engine.connect() as conn:
            rows = [repr(r) for t in meta.sorted_tables for r in conn.execute(select(t))]
    finally:
        engine.dispose()
    return "\n".join(rows)


def test_no_phi_in_database_assets_or_png_metadata(settings: Settings, tmp_path: Path) -> None:
    study = tmp_path / f"study-{SECRET}"
    files = {
        "ct": copy_sample("CT_small.dcm", study / f"ct-{SECRET}.dcm"),
        "head": copy_sample("693_UNCR.dcm", study / f"head-{SECRET}.dcm"),
        "chest": copy_sample("RG1_UNCR.dcm", study / f"chest-{SECRET}.dcm"),
    }
    series = study / f"series-{SECRET}"
    series.mkdir()
    for src in sorted(sample_dir(SERIES_CT5).iterdir()):
        (series / f"{src.name}-{SECRET}").write_bytes(src.read_bytes())
    manifest = write_manifest(
        study,
        [
            case("a1", files["ct"].name, windows="mediastinum|bone"),
            case("a2", files["head"].name),
            case("a3", files["chest"].name, reviewed_by="Dr Roe"),
            case("a4", series.name, kind="strip", windows="mediastinum"),
        ],
    )
    result = import_manifest(manifest, settings=settings, slug="phi")
    assert result.cases == 4

    secrets = set(KNOWN_PHI) | {SECRET, str(tmp_path), str(study)}
    for path in [*files.values(), *series.iterdir()]:
        secrets |= header_strings(path)
    assert set(KNOWN_PHI) <= secrets | {SECRET}
    assert len(secrets) > 100  # UIDs, names, dates, device and private values

    db = database_text(settings.database_url).casefold()
    leaks = sorted(s for s in secrets if s.casefold() in db)
    assert leaks == [], f"found in the database: {leaks}"

    pngs = sorted(p for p in settings.asset_dir.rglob("*.png") if p.is_file())
    assert len(pngs) == result.images
    # pixel data is compressed, so a byte scan mainly guards the other chunks; the
    # chunk check below is the strong one. Scan for the named values and paths.
    named = [*KNOWN_PHI, SECRET, str(tmp_path)]
    for png in pngs:
        data = png.read_bytes()
        assert png.name == f"{png.stem}.png" and len(png.stem) == 64  # named by sha256 only
        # pixels only: no tEXt/zTXt/iTXt, no eXIf, no iCCP, no tIME
        assert set(png_chunk_types(data)) == {"IHDR", "IDAT", "IEND"}
        found = [s for s in named if s.encode() in data]
        assert found == [], f"{png.name} holds {found}"
    if settings.is_sqlite:  # the raw file too, pages and write-ahead log included
        raw = b"".join(
            p.read_bytes() for p in settings.data_dir.glob("readerstudy.db*") if p.is_file()
        )
        assert raw, "expected the SQLite file"
        assert [s for s in secrets if s.encode() in raw] == []


@pytest.fixture
def settings(settings: Settings, db_url: str, monkeypatch: pytest.MonkeyPatch) -> Settings:
    # a SQLite database file inside the data folder, so the raw-bytes scan finds it
    if db_url.startswith("sqlite"):
        from dataclasses import replace

        from reader_app.core.db import migrate

        url = f"sqlite:///{settings.data_dir / 'readerstudy.db'}"
        migrate(url)
        return replace(settings, database_url=url)
    return settings
