"""Readers: DICOM transfer syntaxes, PNG/JPEG metadata, NIfTI and series failures."""

from __future__ import annotations

import importlib.util
import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, PngImagePlugin
from pydicom.dataset import Dataset

from reader_app.ingest.anonymize import DropCount, needs_burned_in_review, rendering_dataset
from reader_app.ingest.dicom_reader import read_dataset, read_dicom_image
from reader_app.ingest.errors import IngestError
from reader_app.ingest.nifti_reader import open_nifti
from reader_app.ingest.raster import read_raster
from reader_app.ingest.series import read_series, series_files
from tests.reader_app.ingest.helpers import (
    SERIES_CT2,
    SERIES_CT5,
    phantom,
    sample,
    sample_dir,
    write_nifti,
)

BIG = 10**9
# Decoder plugins beyond pillow (see docs/ingestion.md): skip, with the reason, if absent.
needs_jpegls = pytest.mark.skipif(
    not (importlib.util.find_spec("jpeg_ls") or importlib.util.find_spec("gdcm")),
    reason="JPEG-LS needs pyjpegls or python-gdcm",
)
needs_gdcm = pytest.mark.skipif(
    importlib.util.find_spec("gdcm") is None, reason="JPEG lossless needs python-gdcm"
)


def _read(name: str) -> np.ndarray:
    source, _, _ = read_dicom_image(sample(name), name, BIG)
    return source.pixels


@pytest.mark.parametrize(
    "name",
    [
        "MR_small_RLE.dcm",  # RLE Lossless (pydicom's own decoder)
        "MR_small_jp2klossless.dcm",  # JPEG 2000 lossless (pillow / openjpeg)
        pytest.param("MR_small_jpeg_ls_lossless.dcm", marks=needs_jpegls),  # JPEG-LS lossless
        "MR_small_bigendian.dcm",  # Explicit VR Big Endian
        "MR_small_implicit.dcm",  # Implicit VR Little Endian
    ],
)
def test_lossless_syntaxes_decode_to_the_same_pixels(name: str) -> None:
    np.testing.assert_array_equal(_read(name), _read("MR_small.dcm"))


@pytest.mark.parametrize(
    ("name", "shape"),
    [
        pytest.param("JPEG-LL.dcm", (1024, 256), marks=needs_gdcm),  # JPEG lossless SV1
        ("image_dfl.dcm", (512, 512)),  # Deflated Explicit VR Little Endian
        ("693_J2KI.dcm", (512, 512)),  # JPEG 2000 lossy
        pytest.param("JPEGLSNearLossless_16.dcm", (50, 10), marks=needs_jpegls),
        ("SC_rgb_jpeg_dcmtk.dcm", (100, 100, 3)),  # JPEG baseline, YBR -> RGB
        ("SC_rgb_rle.dcm", (100, 100, 3)),  # RLE colour
        ("examples_palette.dcm", (350, 800, 3)),  # palette colour -> RGB
    ],
)
def test_other_syntaxes_decode(name: str, shape: tuple[int, ...]) -> None:
    assert _read(name).shape == shape


def test_no_gpl_decoder_is_installed() -> None:
    # pylibjpeg-libjpeg is GPL: the one plugin we must not pull in.
    assert importlib.util.find_spec("libjpeg") is None


def test_12_bit_jpeg_extended_is_a_clean_error() -> None:
    # Only the GPL libjpeg plugin decodes it; we refuse with the file's name.
    with pytest.raises(IngestError, match=r"^JPGExtended\.dcm: cannot decode pixel data"):
        read_dicom_image(sample("JPGExtended.dcm"), "JPGExtended.dcm", BIG)


def test_allowlist_keeps_only_rendering_fields() -> None:
    ds = read_dataset(sample("CT_small.dcm"), "CT_small.dcm", header_only=True)
    safe, drop = rendering_dataset(ds)
    assert "PatientName" not in safe and "InstitutionName" not in safe
    assert not any(e.tag.is_private for e in safe)
    assert {e.keyword for e in safe} <= {
        "Modality", "SOPClassUID", "SamplesPerPixel", "PhotometricInterpretation",
        "Rows", "Columns", "BitsAllocated", "BitsStored", "HighBit", "PixelRepresentation",
        "RescaleSlope", "RescaleIntercept", "ImagePositionPatient",
        "ImageOrientationPatient", "PixelSpacing",
    }  # fmt: skip
    assert drop.files == 1 and drop.private > 0 and drop.elements > drop.private
    # the decode read takes only what rendering needs: private elements stay unread
    decoded = read_dataset(sample("CT_small.dcm"), "CT_small.dcm")
    assert "PatientName" not in decoded and not any(e.tag.is_private for e in decoded)
    assert "PixelData" in decoded


def test_burned_in_guard_decisions() -> None:
    def check(name: str) -> str | None:
        safe, _ = rendering_dataset(read_dataset(sample(name), name, header_only=True))
        return needs_burned_in_review(safe, name)

    assert check("CT_small.dcm") is None  # CT: not a burned-in modality
    assert check("US1_UNCR.dcm") == "BurnedInAnnotation is absent for a US image"
    assert check("RG1_UNCR.dcm") == "BurnedInAnnotation is absent for a CR image"
    assert check("JPGLosslessP14SV1_1s_1f_8b.dcm") is None  # US that says NO


US_CLASS = "1.2.840.10008.5.1.4.1.1.6.1"  # Ultrasound Image Storage
CT_CLASS = "1.2.840.10008.5.1.4.1.1.2"


def _header(**elements: object) -> Dataset:
    ds = Dataset()
    for keyword, value in elements.items():
        setattr(ds, keyword, value)
    return ds


@pytest.mark.parametrize("modality", ["CT", "MR", "XA", "MG", "RF", "XC"])
def test_guard_refuses_yes_on_every_modality(modality: str) -> None:
    ds = _header(Modality=modality, SOPClassUID=CT_CLASS, BurnedInAnnotation="YES")
    expected = f"BurnedInAnnotation is YES for a {modality} image"
    assert needs_burned_in_review(ds, "f.dcm") == expected


@pytest.mark.parametrize(
    ("elements", "manifest", "expected"),
    [
        # an ultrasound class with no Modality: the class decides
        ({"SOPClassUID": US_CLASS}, None, "an image of SOP class 'Ultrasound Image Storage'"),
        # ... with the manifest claiming CT: the class still decides
        ({"SOPClassUID": US_CLASS}, "CT", "an image of SOP class 'Ultrasound Image Storage'"),
        ({"SOPClassUID": US_CLASS, "Modality": "CT"}, None, "an image of SOP class"),
        # a CT header the manifest calls US: the manifest's word counts too
        ({"SOPClassUID": CT_CLASS, "Modality": "CT"}, "US", "a US image"),
        ({"SOPClassUID": "1.2.840.10008.5.1.4.1.1.7", "Modality": "OT"}, None, "secondary capture"),
        ({"SOPClassUID": CT_CLASS, "Modality": "ES"}, None, "a ES image"),
    ],
)
def test_guard_by_rule(elements: dict[str, str], manifest: str | None, expected: str) -> None:
    why = needs_burned_in_review(_header(**elements), "f.dcm", manifest)
    assert why is not None and why.startswith("BurnedInAnnotation is absent for ")
    assert expected in why
    cleared = _header(**elements, BurnedInAnnotation="NO")
    assert needs_burned_in_review(cleared, "f.dcm", manifest) is None


@pytest.mark.parametrize(
    ("elements", "message"),
    [
        ({"Modality": ["US", "CT"]}, r"f\.dcm: element Modality \(0008,0060\) holds 2 values"),
        ({"Modality": "PHIDOEJOHN"}, r"f\.dcm: element Modality \(0008,0060\) is not a DICOM"),
        ({"Modality": "ct"}, r"Modality \(0008,0060\) is not a DICOM defined term"),
        ({"BurnedInAnnotation": "MAYBE"}, r"BurnedInAnnotation \(0028,0301\) must be YES or NO"),
    ],
)
def test_header_values_checked_against_vr(elements: dict[str, object], message: str) -> None:
    with pytest.raises(IngestError, match=message) as info:
        needs_burned_in_review(_header(SOPClassUID=CT_CLASS, **elements), "f.dcm")
    assert "PHI" not in str(info.value) and "DOE" not in str(info.value)


def test_raster_drops_exif_and_text(tmp_path: Path) -> None:
    info = PngImagePlugin.PngInfo()
    info.add_text("Patient", "Secret^Name")
    png = tmp_path / "a.png"
    Image.new("L", (4, 3), 77).save(png, pnginfo=info)
    source, dropped = read_raster(png, "a.png", BIG)
    assert dropped == ["1 text chunk(s)"]
    assert source.ready and source.pixels.shape == (3, 4) and int(source.pixels[0, 0]) == 77

    exif = Image.Exif()
    exif[0x0110] = "SecretCamera"  # Model
    exif[0x0112] = 6  # Orientation: rotate 90 degrees clockwise to display
    jpg = tmp_path / "b.jpg"
    Image.new("RGB", (4, 2), (200, 10, 10)).save(jpg, exif=exif)
    source, dropped = read_raster(jpg, "b.jpg", BIG)
    assert dropped == ["EXIF"]
    assert source.pixels.shape == (4, 2, 3)  # the orientation was applied, then dropped


def test_raster_failures(tmp_path: Path) -> None:
    buf = io.BytesIO()
    Image.new("L", (64, 64)).save(buf, format="PNG")
    (tmp_path / "cut.png").write_bytes(buf.getvalue()[:60])
    with pytest.raises(IngestError, match=r"^cut\.png: truncated or corrupt"):
        read_raster(tmp_path / "cut.png", "cut.png", BIG)
    with pytest.raises(IngestError, match=r"^big\.png: 4096 pixels exceed the limit of 4000"):
        (tmp_path / "big.png").write_bytes(buf.getvalue())
        read_raster(tmp_path / "big.png", "big.png", 4000)


def test_nifti_failures(tmp_path: Path) -> None:
    vol = phantom(n=4, rows=8, cols=8)
    four_d = write_nifti(tmp_path / "4d.nii.gz", vol, extra_dims=(3,))
    with pytest.raises(IngestError, match=r"^4d\.nii\.gz: 4-D NIfTI \(8, 8, 4, 3\)"):
        open_nifti(four_d, "4d.nii.gz", BIG)
    ok = write_nifti(tmp_path / "ok.nii", vol)
    with pytest.raises(IngestError, match=r"^ok\.nii: 256 voxels exceed the limit of 255"):
        open_nifti(ok, "ok.nii", 255)
    cut = tmp_path / "cut.nii"
    cut.write_bytes(ok.read_bytes()[:-100])
    with pytest.raises(IngestError, match=r"^cut\.nii: truncated or corrupt NIfTI data"):
        open_nifti(cut, "cut.nii", BIG)
    junk = tmp_path / "junk.nii.gz"
    junk.write_bytes(b"not gzip at all")
    with pytest.raises(IngestError, match=r"^junk\.nii\.gz: not a readable NIfTI"):
        open_nifti(junk, "junk.nii.gz", BIG)


def test_series_failures(tmp_path: Path) -> None:
    def rel(p: Path) -> str:
        return p.name

    (tmp_path / "empty").mkdir()
    with pytest.raises(IngestError, match=r"^empty: empty series"):
        series_files(tmp_path / "empty", "empty", tmp_path)
    (tmp_path / "linked").mkdir()
    (tmp_path / "linked" / "a.dcm").symlink_to(sample("CT_small.dcm"))
    with pytest.raises(IngestError, match=r"^linked/a\.dcm: path escapes the manifest's folder"):
        series_files(tmp_path / "linked", "linked", tmp_path)
    mixed = [*sorted(sample_dir(SERIES_CT5).iterdir()), *sorted(sample_dir(SERIES_CT2).iterdir())]
    with pytest.raises(IngestError, match=r"^mixed: mixed series: .* 2 series"):
        read_series(mixed, "mixed", BIG, rel, DropCount())
    five = sorted(sample_dir(SERIES_CT5).iterdir())
    with pytest.raises(IngestError, match=r"^ct5: 1280 voxels exceed the limit of 1000"):
        read_series(five, "ct5", 1000, rel, DropCount())
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    with pytest.raises(IngestError, match=r"^notes\.txt: not a DICOM file"):
        read_series([*five, text], "ct5", BIG, rel, DropCount())


def test_real_series_is_ordered_by_position_not_instance_number() -> None:
    # CT5N: InstanceNumber 6..10 runs *down* from z = 8.76 to z = -1.24 mm.
    files = sorted(sample_dir(SERIES_CT5).iterdir())
    volume, _ = read_series(files, "ct5", BIG, lambda p: p.name, DropCount())
    assert volume.z_mm == pytest.approx([-1.2375, 1.2625, 3.7625, 6.2625, 8.7625])


def test_16_bit_png_gets_its_full_range_not_hu_presets(tmp_path: Path) -> None:
    from reader_app.ingest.manifest import load_manifest
    from reader_app.ingest.prepare import Limits, prepare_case
    from reader_app.ingest.report import IngestionReport
    from reader_app.study.config import StudyConfig
    from tests.reader_app.ingest.helpers import case, write_manifest

    grey16 = np.array([[0, 1000], [2000, 4000]], dtype=np.uint16)
    Image.fromarray(grey16).save(tmp_path / "g.png")
    manifest = load_manifest(write_manifest(tmp_path, [case("g", "g.png", reviewed_by="Dr R")]))
    prepared = prepare_case(
        manifest.entries[0],
        manifest,
        config=StudyConfig(title="t", default_windows=("lung",)),
        limits=Limits(BIG, BIG, BIG),
        report=IngestionReport("manifest.csv"),
    )
    (image,) = prepared.images
    assert image.window == "auto"
    # 0..4000 -> 0..255: 1000 -> 63.75 -> 64, 2000 -> 127.5 -> 128 (half to even)
    assert np.asarray(Image.open(io.BytesIO(image.png))).tolist() == [[0, 64], [128, 255]]
