"""import_manifest end to end, on SQLite and PostgreSQL: all or nothing, guard, bad input."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from reader_app.core.db import make_engine
from reader_app.core.settings import Settings
from reader_app.ingest import importer
from reader_app.ingest.errors import ImportFailed
from reader_app.ingest.importer import import_manifest
from reader_app.models import AnswerKey, AuditEvent, Case, CaseImage, Study
from tests.reader_app.ingest.helpers import (
    SERIES_CT2,
    SERIES_CT5,
    case,
    copy_sample,
    phantom,
    sample,
    sample_dir,
    write_manifest,
    write_nifti,
    write_series,
)

TINY_CT = "dicomdirtests/77654033/CT2/17106"  # a real 16x16 CT slice: a fast valid case


@pytest.fixture
def db(settings: Settings) -> Iterator[Engine]:
    engine = make_engine(settings.database_url, pooled=False)
    yield engine
    engine.dispose()


def assets(settings: Settings) -> list[Path]:
    return sorted(p for p in settings.asset_dir.rglob("*.png") if p.is_file())


def assert_nothing_written(engine: Engine, settings: Settings) -> None:
    with Session(engine) as s:
        assert s.exec(select(Study)).all() == []
        assert s.exec(select(Case)).all() == []
        assert s.exec(select(CaseImage)).all() == []
    assert assets(settings) == []
    assert not [p for p in settings.data_dir.iterdir() if p.name.startswith(".import-")]


def tiny_ct(folder: Path, name: str = "tiny.dcm") -> Path:
    dest = folder / name
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes((sample_dir(TINY_CT)).read_bytes())
    return dest


def test_import_spot_and_strip_cases(settings: Settings, db: Engine, tmp_path: Path) -> None:
    study = tmp_path / "chest-study"
    tiny_ct(study)
    write_series(study / "series", phantom(), shuffle_seed=5)
    write_nifti(study / "volume.nii.gz", phantom())
    (study / "study.toml").write_text("practice_count = 1\ndefault_windows = ['lung']\n")
    manifest = write_manifest(
        study,
        [
            case("p1", "tiny.dcm", practice="true", windows="bone|lung", region="head"),
            case("s1", "series", kind="strip", synonyms="a|b", history="cough"),
            case("s2", "volume.nii.gz", kind="strip"),
        ],
    )
    seen: list[tuple[int, int]] = []
    result = import_manifest(
        manifest, settings=settings, progress=lambda p: seen.append((p.done, p.total))
    )
    assert seen[0] == (0, 4) and seen[-1] == (4, 4)
    assert (result.slug, result.cases, result.images) == ("chest-study", 3, 2 + 17 + 17)
    with Session(db) as s:
        stored = s.exec(select(Study)).one()
        assert stored.slug == "chest-study" and '"default_windows": ["lung"]' in stored.config_json
        cases = s.exec(select(Case).order_by(col(Case.position))).all()
        assert [c.source_id for c in cases] == ["p1", "s1", "s2"]
        assert [c.practice for c in cases] == [True, False, False]
        assert cases[0].modality == "CT" and cases[0].region == "head"
        assert all(c.public_id.startswith("c") and len(c.public_id) == 21 for c in cases)
        key = s.exec(select(AnswerKey).where(AnswerKey.case_id == cases[1].id)).one()
        assert (key.diagnosis, key.synonyms) == ("dx", "a|b")

        def images(c: Case) -> list[CaseImage]:
            query = select(CaseImage).where(CaseImage.case_id == c.id).order_by(col(CaseImage.seq))
            return list(s.exec(query).all())

        assert [(i.window, i.label) for i in images(cases[0])] == [
            ("bone", "bone"),
            ("lung", "lung"),
        ]
        series, nifti = images(cases[1]), images(cases[2])
        # the same volume as a shuffled DICOM series and as NIfTI: the very same PNGs
        assert [i.sha256 for i in series] == [i.sha256 for i in nifti]
        # the top slice first; the series numbers it by its (shuffled) InstanceNumber
        assert series[0].label == "1/16 · slice 9 of 20 · z = -102.5 mm"
        assert nifti[0].label == "1/16 · slice 20 of 20 · z = -102.5 mm"
        assert series[16].role == "montage"
        # issue 42: each slice keeps the volume's pixel spacing (x across, y down), as the
        # series' PixelSpacing (0.8 between rows, 0.7 between columns) and the NIfTI's
        # affine say; a montage has none; the spot keeps its file's PixelSpacing
        for stored in (series, nifti):
            slices = [(i.pixel_mm_x, i.pixel_mm_y) for i in stored if i.role == "slice"]
            assert slices == [(pytest.approx(0.7), pytest.approx(0.8))] * 16
            assert (stored[16].pixel_mm_x, stored[16].pixel_mm_y) == (None, None)
        spot = images(cases[0])[0]
        assert (spot.pixel_mm_x, spot.pixel_mm_y) == (pytest.approx(0.488281),) * 2
        audit = s.exec(select(AuditEvent)).one()
        assert audit.action == "study.import" and '"cases": 3' in audit.detail_json
    digests = {p.stem for p in assets(settings)}
    assert digests == {i.sha256 for i in series + nifti + images(cases[0])}


def test_burned_in_guard_refuses_deid_ultrasound(
    settings: Settings, db: Engine, tmp_path: Path
) -> None:
    deid = Path(__import__("deid_data").__file__).parent / "data" / "ultrasounds"
    study = tmp_path / "us"
    study.mkdir()
    (study / "us.dcm").write_bytes((deid / "GREYSCALE_IMAGE.dcm").read_bytes())
    copy_sample("US1_UNCR.dcm", study / "us1.dcm")  # BurnedInAnnotation absent, text burned in
    tiny_ct(study)
    rows = [case("ok", "tiny.dcm"), case("u1", "us.dcm"), case("u2", "us1.dcm")]
    with pytest.raises(ImportFailed) as info:
        import_manifest(write_manifest(study, rows), settings=settings)
    assert info.value.errors == [
        "case u1: us.dcm: BurnedInAnnotation is YES for a US image; refused: "
        "check the pixels and set reviewed_by to the reviewer's name",
        "case u2: us1.dcm: BurnedInAnnotation is absent for a US image; refused: "
        "check the pixels and set reviewed_by to the reviewer's name",
    ]
    assert "Refused (2):" in info.value.report_text
    assert_nothing_written(db, settings)

    rows[1]["reviewed_by"] = "Dr Jane Roe"
    rows = rows[:2]
    import_manifest(write_manifest(study, rows), settings=settings)
    with Session(db) as s:
        reviewed = s.exec(select(Case).where(Case.source_id == "u1")).one()
        assert reviewed.reviewed_by == "Dr Jane Roe" and reviewed.modality == "US"


def test_png_needs_review_and_loses_its_metadata(settings: Settings, tmp_path: Path) -> None:
    from PIL import PngImagePlugin

    info = PngImagePlugin.PngInfo()
    info.add_text("Comment", "Patient Secret^Name")
    Image.new("RGB", (20, 10), (1, 2, 3)).save(tmp_path / "photo.png", pnginfo=info)
    rows = [case("ph", "photo.png")]
    with pytest.raises(ImportFailed, match=r"photo\.png: a PNG/JPEG has no BurnedInAnnotation"):
        import_manifest(write_manifest(tmp_path, rows), settings=settings, slug="s")
    rows[0]["reviewed_by"] = "Dr Roe"
    result = import_manifest(write_manifest(tmp_path, rows), settings=settings, slug="s")
    assert "photo.png: 1 text chunk(s)" in result.report.text()
    (png,) = assets(settings)
    assert b"Secret" not in png.read_bytes()


def _bad_inputs(folder: Path) -> dict[str, tuple[list[dict[str, str]], str]]:
    """scenario -> (manifest rows after one valid case, expected message)"""
    folder.mkdir(parents=True, exist_ok=True)
    (folder.parent / "outside.dcm").write_bytes(sample_dir(TINY_CT).read_bytes())
    cut = sample("CT_small.dcm").read_bytes()
    (folder / "cut.dcm").write_bytes(cut[: len(cut) - 5000])
    (folder / "notes.dcm").write_text("not an image")
    (folder / "empty").mkdir()
    for i, src in enumerate([SERIES_CT5, SERIES_CT2]):
        first = sorted(sample_dir(src).iterdir())[0]
        (folder / "mixed").mkdir(exist_ok=True)
        (folder / "mixed" / f"{i}.dcm").write_bytes(first.read_bytes())
    write_nifti(folder / "fmri.nii.gz", phantom(n=3, rows=8, cols=8), extra_dims=(2,))
    copy_sample("CT_small.dcm", folder / "big.dcm")
    return {
        "missing": ([case("m", "gone.dcm")], "field 'files', gone.dcm: file not found"),
        "escape": ([case("e", "../outside.dcm")], "../outside.dcm: path escapes"),
        "truncated": ([case("t", "cut.dcm")], "cut.dcm: cannot decode pixel data (truncated?)"),
        "not an image": ([case("n", "notes.dcm")], "notes.dcm: not a DICOM, NIfTI, PNG or JPEG"),
        "bomb": ([case("b", "big.dcm")], "big.dcm: 16384 pixels exceed the limit of 10000"),
        "duplicate": ([case("ok", "tiny.dcm")], "field 'case_id': duplicate case id"),
        "empty series": ([case("s", "empty", kind="strip")], "empty: empty series"),
        "mixed series": ([case("x", "mixed", kind="strip")], "mixed: mixed series"),
        "4-D NIfTI": ([case("f", "fmri.nii.gz", kind="strip")], "fmri.nii.gz: 4-D NIfTI"),
    }


@pytest.mark.parametrize(
    "scenario",
    ["missing", "escape", "truncated", "not an image", "bomb", "duplicate", "empty series",
     "mixed series", "4-D NIfTI"],
)  # fmt: skip
def test_bad_input_names_file_and_changes_nothing(
    settings: Settings, db: Engine, tmp_path: Path, scenario: str
) -> None:
    folder = tmp_path / "study"
    rows, message = _bad_inputs(folder)[scenario]
    tiny_ct(folder)
    manifest = write_manifest(folder, [case("ok", "tiny.dcm"), *rows])
    if scenario == "bomb":
        settings = dataclasses.replace(settings, max_pixels=10_000)
    with pytest.raises(ImportFailed) as info:
        import_manifest(manifest, settings=settings)
    assert message in str(info.value)
    assert_nothing_written(db, settings)


def test_failed_transaction_removes_its_assets(
    settings: Settings, db: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tiny_ct(tmp_path)
    copy_sample("CT_small.dcm", tmp_path / "b.dcm")
    manifest = write_manifest(tmp_path, [case("a", "tiny.dcm"), case("b", "b.dcm")])
    real_add_case = importer.add_case
    calls = []

    def failing_add_case(**kw: object) -> Case:
        calls.append(kw["source_id"])
        if len(calls) == 2:
            raise RuntimeError("disk full")
        return real_add_case(**kw)  # type: ignore[arg-type]

    monkeypatch.setattr(importer, "add_case", failing_add_case)
    with pytest.raises(RuntimeError, match="disk full"):
        import_manifest(manifest, settings=settings, slug="s")
    assert calls == ["a", "b"]
    assert_nothing_written(db, settings)  # case a's PNG was in the store, and is gone


def test_existing_study_is_not_overwritten(settings: Settings, tmp_path: Path) -> None:
    tiny_ct(tmp_path)
    manifest = write_manifest(tmp_path, [case("a", "tiny.dcm")])
    import_manifest(manifest, settings=settings, slug="s1")
    with pytest.raises(ImportFailed, match="a study named 's1' already exists"):
        import_manifest(manifest, settings=settings, slug="s1")
    with pytest.raises(ImportFailed, match="study slug 'bad slug'"):
        import_manifest(manifest, settings=settings, slug="bad slug")


def test_symlinked_file_leaving_the_folder_is_refused(settings: Settings, tmp_path: Path) -> None:
    folder = tmp_path / "study"
    tiny_ct(tmp_path, "outside.dcm")
    folder.mkdir()
    os.symlink(tmp_path / "outside.dcm", folder / "inside.dcm")
    with pytest.raises(ImportFailed, match=r"inside\.dcm: path escapes the manifest's folder"):
        import_manifest(write_manifest(folder, [case("l", "inside.dcm")]), settings=settings)
