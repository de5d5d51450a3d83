"""Issue 14: files and manifests built to get past ingestion, on SQLite and PostgreSQL.

Each test builds the hostile input the issue reproduced on main, imports it,
and checks that the import refuses with a message naming the file and the
field (and never the hostile value), and that nothing was written; or that a
harmless variant imports clean.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from pathlib import Path

import nibabel as nib
import numpy as np
import pytest
from pydicom import dcmread
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from reader_app.core.db import make_engine
from reader_app.core.settings import Settings
from reader_app.ingest.errors import ImportFailed
from reader_app.ingest.importer import import_manifest, validate
from reader_app.models import Case, CaseImage, Study
from tests.reader_app.ingest.helpers import case, phantom, sample_dir, write_manifest, write_series

TINY_CT = "dicomdirtests/77654033/CT2/17106"  # a real 16x16 CT slice
US_CLASS = "1.2.840.10008.5.1.4.1.1.6.1"  # Ultrasound Image Storage
REFUSED = "refused: check the pixels and set reviewed_by to the reviewer's name"


@pytest.fixture
def db(settings: Settings) -> Iterator[Engine]:
    engine = make_engine(settings.database_url, pooled=False)
    yield engine
    engine.dispose()


def pngs(settings: Settings) -> list[Path]:
    return sorted(settings.asset_dir.rglob("*.png"))


def assert_nothing_written(engine: Engine, settings: Settings) -> None:
    with Session(engine) as s:
        assert s.exec(select(Study)).all() == []
        assert s.exec(select(Case)).all() == []
        assert s.exec(select(CaseImage)).all() == []
    assert pngs(settings) == []
    assert not [p for p in settings.data_dir.iterdir() if p.name.startswith((".import-", ".val"))]


def dicom(folder: Path, name: str, **elements: object) -> Path:
    """The tiny CT with some header elements replaced (None deletes one)."""
    ds = dcmread(sample_dir(TINY_CT))
    for keyword, value in elements.items():
        if value is None:
            delattr(ds, keyword)
        else:
            setattr(ds, keyword, value)
    if "SOPClassUID" in elements:
        ds.file_meta.MediaStorageSOPClassUID = elements["SOPClassUID"]
    folder.mkdir(parents=True, exist_ok=True)
    ds.save_as(folder / name)
    return folder / name


def refuse(manifest: Path, settings: Settings) -> list[str]:
    with pytest.raises(ImportFailed) as info:
        import_manifest(manifest, settings=settings, slug="s")
    return info.value.errors


# -- 1. the burned-in guard, by rule -------------------------------------------------


def test_burned_in_yes_is_refused_on_every_modality(
    settings: Settings, db: Engine, tmp_path: Path
) -> None:
    modalities = ["CT", "MR", "XA", "MG", "RF", "XC"]
    rows = []
    for m in modalities:
        dicom(tmp_path, f"{m}.dcm", Modality=m, BurnedInAnnotation="YES")
        rows.append(case(m.lower(), f"{m}.dcm"))
    errors = refuse(write_manifest(tmp_path, rows), settings)
    assert errors == [
        f"case {m.lower()}: {m}.dcm: BurnedInAnnotation is YES for a {m} image; {REFUSED}"
        for m in modalities
    ]
    assert_nothing_written(db, settings)


def test_ultrasound_by_sop_class_whatever_its_modality(
    settings: Settings, db: Engine, tmp_path: Path
) -> None:
    dicom(tmp_path, "none.dcm", SOPClassUID=US_CLASS, Modality=None)
    dicom(tmp_path, "multi.dcm", SOPClassUID=US_CLASS, Modality=["US", "CT"])
    dicom(tmp_path, "ct.dcm", SOPClassUID=US_CLASS, Modality="CT")
    rows = [
        case("a", "none.dcm"),
        case("b", "multi.dcm"),
        case("c", "ct.dcm", modality="CT"),  # the manifest cannot talk the guard out of it
    ]
    errors = refuse(write_manifest(tmp_path, rows), settings)
    by_class = "BurnedInAnnotation is absent for an image of SOP class 'Ultrasound Image Storage'"
    assert errors == [
        f"case a: none.dcm: {by_class}; {REFUSED}",
        f"case c: ct.dcm: {by_class}; {REFUSED}",
        "case b: multi.dcm: element Modality (0008,0060) holds 2 values; expected one",
    ]
    assert_nothing_written(db, settings)


def test_every_file_of_a_series_is_checked(settings: Settings, db: Engine, tmp_path: Path) -> None:
    files = sorted(
        write_series(tmp_path / "series", phantom(n=4, rows=8, cols=8), shuffle_seed=None)
    )
    for path in files[1:]:  # the first slice is clean; the others are ultrasound with YES
        ds = dcmread(path)
        ds.Modality, ds.BurnedInAnnotation = "US", "YES"
        ds.save_as(path)
    errors = refuse(write_manifest(tmp_path, [case("s", "series", kind="strip")]), settings)
    assert errors == [
        f"case s: series/{p.name}: BurnedInAnnotation is YES for a US image; {REFUSED}"
        for p in files[1:]
    ]
    assert_nothing_written(db, settings)


# -- 2. header values against their VR and defined terms ---------------------------------


def test_phi_in_modality_is_refused_and_never_echoed(
    settings: Settings, db: Engine, tmp_path: Path
) -> None:
    dicom(tmp_path, "a.dcm", Modality="PHIDOEJOHN")
    dicom(tmp_path, "b.dcm", Modality=["CT", "PHIDOE JOHN MRN12345"])
    rows = [case("a", "a.dcm"), case("b", "b.dcm"), case("c", "a.dcm", modality="PHIDOE")]
    errors = refuse(write_manifest(tmp_path, rows), settings)
    assert errors == [
        "manifest.csv line 4, field 'modality': is not a DICOM modality defined term "
        "(e.g. CT, MR, US, CR)",
        "case a: a.dcm: element Modality (0008,0060) is not a DICOM defined term (CS, e.g. CT, "
        "MR, US)",
        "case b: b.dcm: element Modality (0008,0060) holds 2 values; expected one",
    ]
    assert not any("DOE" in e for e in errors)
    assert_nothing_written(db, settings)


# -- 4. YAML: no aliases, only text --------------------------------------------------


def test_yaml_aliases_and_non_text_values_are_refused(
    settings: Settings, db: Engine, tmp_path: Path
) -> None:
    dicom(tmp_path, "a.dcm")
    laughs = ["a: &a ['lol','lol','lol','lol','lol','lol','lol','lol','lol']"]
    for i in range(1, 9):  # 9**9 strings once expanded, from a few hundred bytes
        laughs.append(
            f"{'abcdefghi'[i]}: &{'abcdefghi'[i]} [{','.join(['*' + 'abcdefghi'[i - 1]] * 9)}]"
        )
    bomb = (
        "\n".join(laughs) + "\ncases:\n  - {case_id: x, kind: spot, files: a.dcm, diagnosis: *i}\n"
    )
    (tmp_path / "manifest.yaml").write_text(bomb)
    errors = refuse(tmp_path / "manifest.yaml", settings)
    assert len(errors) == 1 and errors[0].startswith(
        "manifest.yaml: not valid YAML: line 1: anchors"
    )
    (tmp_path / "manifest.yaml").write_text(
        "cases:\n  - {case_id: x, kind: spot, files: a.dcm, diagnosis: {nested: 1}}\n"
    )
    errors = refuse(tmp_path / "manifest.yaml", settings)
    assert errors == ["manifest.yaml case 1, field 'diagnosis': must be text (or a list of texts)"]
    assert_nothing_written(db, settings)
    # scalars stay text: a numeric case id and an unquoted 'yes' import as written
    (tmp_path / "manifest.yaml").write_text(
        "- {case_id: 007, kind: spot, files: a.dcm, diagnosis: 1e3, practice: yes}\n"
    )
    import_manifest(tmp_path / "manifest.yaml", settings=settings, slug="s")
    with Session(db) as s:
        (stored,) = s.exec(select(Case)).all()
        assert (stored.source_id, stored.practice) == ("007", True)


# -- 5. the same limits on both databases; clean errors for odd files -------------------


def test_field_limits_and_control_characters_on_both_databases(
    settings: Settings, db: Engine, tmp_path: Path
) -> None:
    dicom(tmp_path, "a.dcm")
    rows = [
        case("r", "a.dcm", region="x" * 65),
        case("v", "a.dcm", reviewed_by="y" * 201),
        {**case("n", "a.dcm"), "diagnosis": "pneumo\x00thorax"},
        case("h", "a.dcm", history="cough\x00"),
        case("ok", "a.dcm", history="line one\nline two\ttabbed"),
    ]
    (tmp_path / "study.toml").write_text(f'title = "{"t" * 301}"\n')
    errors = refuse(write_manifest(tmp_path, rows), settings)
    assert errors == [
        "manifest.csv line 2, field 'region': is 65 characters long; the limit is 64",
        "manifest.csv line 3, field 'reviewed_by': is 201 characters long; the limit is 200",
        "manifest.csv line 4, field 'diagnosis': holds a control character U+0000 at position 7; "
        "remove it (it can hide or reorder text)",
        "manifest.csv line 5, field 'history': holds a control character U+0000 at position 6; "
        "remove it (it can hide or reorder text)",
        "study.toml: key 'title': is 301 characters long; the limit is 200",
    ]
    assert_nothing_written(db, settings)
    (tmp_path / "study.toml").unlink()
    import_manifest(write_manifest(tmp_path, rows[-1:]), settings=settings, slug="s")
    with Session(db) as s:
        assert s.exec(select(Case)).one().history == "line one\nline two\ttabbed"


def test_huge_csv_field_and_nifti2_overflow_name_their_place(
    settings: Settings, db: Engine, tmp_path: Path
) -> None:
    dicom(tmp_path, "a.dcm")
    (tmp_path / "manifest.csv").write_text(
        "case_id,kind,files,diagnosis\nok,spot,a.dcm,dx\nbig,spot,a.dcm," + "d" * 131_073 + "\n"
    )
    errors = refuse(tmp_path / "manifest.csv", settings)
    assert len(errors) == 1 and errors[0].startswith("manifest.csv line 3: cannot read as CSV")
    nib.save(nib.Nifti2Image(np.zeros((2, 2, 2), np.int16), np.eye(4)), tmp_path / "n2.nii")
    raw = bytearray((tmp_path / "n2.nii").read_bytes())
    struct.pack_into("<8q", raw, 16, 3, 2**32, 2**32, 1, 1, 1, 1, 1)  # dim[0..7], int64
    (tmp_path / "n2.nii").write_bytes(bytes(raw))
    errors = refuse(write_manifest(tmp_path, [case("n", "n2.nii", kind="strip")]), settings)
    assert errors == [
        "case n: n2.nii: 18446744073709551616 voxels exceed the limit of 200000000 "
        "(READERSTUDY_MAX_VOXELS; a decompression bomb?)"
    ]
    assert_nothing_written(db, settings)


# -- 7. look-alike case ids ------------------------------------------------------------


def test_look_alike_case_ids(settings: Settings, db: Engine, tmp_path: Path) -> None:
    dicom(tmp_path, "a.dcm")
    rows = [
        case("case1", "a.dcm"),
        case("case1\u200b", "a.dcm"),
        case("case1\u202e", "a.dcm"),
        case("\uff43\uff41\uff53\uff45\uff11", "a.dcm"),  # fullwidth
    ]
    rows.append(case("\u337f" * 60, "a.dcm"))  # 60 characters, 240 after NFKC
    errors = refuse(write_manifest(tmp_path, rows), settings)
    assert errors == [
        "manifest.csv line 3, field 'case_id': holds an invisible or direction-changing "
        "character U+200B at position 6; remove it (it can hide or reorder text)",
        "manifest.csv line 4, field 'case_id': holds an invisible or direction-changing "
        "character U+202E at position 6; remove it (it can hide or reorder text)",
        "manifest.csv line 5, field 'case_id': duplicate case id (first at manifest.csv line 2)",
        "manifest.csv line 6, field 'case_id': is 240 characters long after NFKC; the limit is 200",
    ]
    assert_nothing_written(db, settings)


# -- 8. every problem in one pass -----------------------------------------------------------


def test_every_stage_reports_in_one_pass(settings: Settings, db: Engine, tmp_path: Path) -> None:
    dicom(tmp_path, "us.dcm", Modality="US", SOPClassUID=US_CLASS)
    dicom(tmp_path, "ok.dcm")
    (tmp_path / "study.toml").write_text("likert_labels = ['a']\n")
    rows = [case("gone", "missing.dcm"), case("us", "us.dcm"), case("ok", "ok.dcm")]
    manifest = write_manifest(tmp_path, rows)
    expected = [
        f"case us: us.dcm: BurnedInAnnotation is absent for a US image; {REFUSED}",
        "manifest.csv line 2, field 'files', missing.dcm: file not found",
        "study.toml: key 'likert_labels': must be a list of 5 non-empty strings (anchors 0..4)",
    ]
    assert refuse(manifest, settings) == expected
    assert_nothing_written(db, settings)
    # the service #20's browser flow uses: the same problems, split up, and the review queue
    checked = validate(manifest, settings=settings, slug="s")
    assert [p.text for p in checked.problems] == expected
    parts = [(p.file, p.line, p.field, p.case_id) for p in checked.problems]
    assert parts == [
        ("us.dcm", None, None, "us"),
        ("manifest.csv", 2, "files", None),
        ("study.toml", None, "likert_labels", None),
    ]
    assert checked.problems[1].message == "missing.dcm: file not found"
    assert [(f.case_id, f.file, f.cleared_by) for f in checked.flagged] == [("us", "us.dcm", None)]
    assert_nothing_written(db, settings)


# -- 6. imports that never harm each other ----------------------------------------------


@pytest.mark.postgres
def test_failed_import_keeps_an_asset_a_concurrent_import_uses(
    settings: Settings, db: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stores PNG X and fails; B, in flight meanwhile, uses X and commits after A's cleanup.

    On main A's cleanup deleted X (no committed case used it yet), so B's study
    had a missing image. The threads are ordered with events, not sleeps.
    """
    if settings.is_sqlite:
        pytest.skip("SQLite serialises writers: the two transactions cannot overlap")
    import threading

    from reader_app.ingest import importer
    from reader_app.study.assets import load_asset

    for name in ("a", "b"):
        dicom(tmp_path / name, "x.dcm")  # the same pixels: the same PNG X in both studies
    a_stored, b_ready, a_cleaned = threading.Event(), threading.Event(), threading.Event()
    real_add_case, real_record = importer.add_case, importer.record_event
    real_cleanup = importer.remove_unreferenced

    def add_case(**kw: object) -> Case:
        made = real_add_case(**kw)  # type: ignore[arg-type]
        study = kw["study"]
        if getattr(study, "slug", "") == "a":
            a_stored.set()
            assert b_ready.wait(60)
            raise RuntimeError("disk full")
        return made

    def record_event(**kw: object) -> object:
        if kw.get("actor") == "b":
            b_ready.set()  # B has added its case (X exists, so B did not write it)
            assert a_cleaned.wait(60)
        return real_record(**kw)  # type: ignore[arg-type]

    def cleanup(*args: object) -> set[str]:
        try:
            return real_cleanup(*args)  # type: ignore[arg-type]
        finally:
            a_cleaned.set()

    monkeypatch.setattr(importer, "add_case", add_case)
    monkeypatch.setattr(importer, "record_event", record_event)
    monkeypatch.setattr(importer, "remove_unreferenced", cleanup)
    outcome: dict[str, object] = {}

    def run(name: str) -> None:
        if name == "b":
            assert a_stored.wait(60)  # start B once A's PNG is in the store, uncommitted
        manifest = write_manifest(tmp_path / name, [case("c", "x.dcm")])
        try:
            outcome[name] = import_manifest(manifest, settings=settings, slug=name, actor=name)
        except Exception as exc:  # A's failure is the point of the test
            outcome[name] = exc

    threads = [threading.Thread(target=run, args=(n,)) for n in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert isinstance(outcome["a"], RuntimeError) and str(outcome["a"]) == "disk full"
    assert not isinstance(outcome["b"], Exception)
    with Session(db) as s:
        assert [st.slug for st in s.exec(select(Study)).all()] == ["b"]
        (image,) = s.exec(select(CaseImage)).all()
    assert load_asset(settings.asset_dir, image.sha256).startswith(b"\x89PNG")
    assert [p.stem for p in pngs(settings)] == [image.sha256]
    assert not list((settings.asset_dir / ".claims").glob("*.claim"))  # no claim left behind
