"""Strips: sampling, labels, orientation, and identical pixels from DICOM and NIfTI."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from reader_app.ingest.anonymize import DropCount
from reader_app.ingest.nifti_reader import open_nifti
from reader_app.ingest.series import read_series
from reader_app.ingest.strips import build_strip, sample_indices, slice_label
from reader_app.ingest.volume import Volume
from reader_app.study.casebank import RenderedImage
from tests.reader_app.ingest.helpers import phantom, write_nifti, write_series

BIG = 10**9


def test_sample_indices_by_hand() -> None:
    # linspace(0, 19, 16) steps by 19/15 = 1.2667: 0, 1.27, 2.53, 3.8, 5.07, 6.33, 7.6, ...
    assert sample_indices(20) == [0, 1, 3, 4, 5, 6, 8, 9, 10, 11, 13, 14, 15, 16, 18, 19]
    # 400 slices: steps of 26.6 -> 26.6 rounds to 27, 53.2 to 53, 79.8 to 80 ...
    assert sample_indices(400)[:5] == [0, 27, 53, 80, 106]
    assert sample_indices(400)[-1] == 399
    assert sample_indices(16) == list(range(16))
    assert sample_indices(5) == [0, 1, 2, 3, 4]  # n < 16: deduplicated, every slice once
    assert sample_indices(1) == [0]
    assert sample_indices(0) == []


def test_labels() -> None:
    assert slice_label(7, 16, 294, 400, -143.5) == "7/16 · slice 294 of 400 · z = -143.5 mm"
    assert slice_label(7, 16, 294, 400, None) == "7/16 · slice 294 of 400"


def _pixels(image: RenderedImage) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(image.png)))


def _dicom(folder: Path, vol: np.ndarray, **kw: object) -> Volume:
    files = write_series(folder, vol, **kw)  # type: ignore[arg-type]
    volume, _ = read_series(sorted(files), folder.name, BIG, lambda p: p.name, DropCount())
    return volume


def test_dicom_series_and_nifti_give_identical_strips(tmp_path: Path) -> None:
    vol = phantom()
    volumes = {
        "dicom, shuffled": _dicom(tmp_path / "a", vol, shuffle_seed=1),
        "dicom, mirrored rows (-x)": _dicom(tmp_path / "b", vol, flip_x=True, shuffle_seed=2),
        # per-slice slope 1/0.5/0.25 and intercept -1024 - 10 k: rescale is applied per slice
        "dicom, rescale per slice": _dicom(tmp_path / "c", vol, vary_rescale=True),
        "nifti LPS (.nii)": open_nifti(write_nifti(tmp_path / "v.nii", vol), "v.nii", BIG),
        "nifti RAS (.nii.gz)": open_nifti(
            write_nifti(tmp_path / "v.nii.gz", vol, ras=True), "v.nii.gz", BIG
        ),
    }
    strips = {name: build_strip(v, ["mediastinum", "bone"]) for name, v in volumes.items()}
    reference = strips.pop("dicom, shuffled")
    assert len(reference) == 2 * (16 + 1)

    def z_part(label: str) -> str:
        return label.rsplit(" · ", 1)[-1]

    for name, strip in strips.items():
        assert [im.png for im in strip] == [im.png for im in reference], name
        assert [z_part(im.label) for im in strip] == [z_part(im.label) for im in reference], name
    # the top slice first: z from -102.5 mm (index 19) down in steps of the sampling;
    # the series' InstanceNumbers are shuffled, so its slice numbers are its own
    assert z_part(reference[0].label) == "z = -102.5 mm"
    assert z_part(reference[1].label) == "z = -105.0 mm"  # index 18
    assert z_part(reference[15].label) == "z = -150.0 mm"
    lps = strips["nifti LPS (.nii)"]
    assert lps[0].label == "1/16 · slice 20 of 20 · z = -102.5 mm"
    assert lps[15].label == "16/16 · slice 1 of 20 · z = -150.0 mm"
    assert [im.role for im in reference[:17]] == ["slice"] * 16 + ["montage"]
    assert {im.window for im in reference[:17]} == {"mediastinum"}


def test_slice_order_and_orientation_by_hand(tmp_path: Path) -> None:
    slices = build_strip(_dicom(tmp_path / "s", phantom(), shuffle_seed=3), ["mediastinum"])[:16]
    # body of slice k is -100 + 15 k HU; mediastinum: c' = 49.5, w' = 349, so
    # k = 19 (the top, sent first): ((185 - 49.5) / 349 + 0.5) * 255 = 226.504 -> 227
    # k = 0 (the bottom, last): ((-100 - 49.5) / 349 + 0.5) * 255 = 18.26 -> 18
    centre = [int(_pixels(im)[24, 32]) for im in slices]
    assert centre[0] == 227 and centre[-1] == 18
    assert centre == sorted(centre, reverse=True) and len(set(centre)) == 16
    # the 700 HU marker is anterior-right: top-left on screen (radiological convention)
    first = _pixels(slices[0])
    assert first[3, 4] == 255 and first[3, 60] < 255 and first[44, 4] < 255


def test_only_sampled_slices_are_read(tmp_path: Path) -> None:
    volume = open_nifti(write_nifti(tmp_path / "v.nii", phantom()), "v.nii", BIG)
    seen: list[int] = []

    def spy(k: int) -> np.ndarray:
        seen.append(k)
        return volume.read_slice(k)

    build_strip(Volume(volume.n_slices, spy, volume.z_mm), ["lung"])
    assert seen == sample_indices(20)[::-1]  # the top slice first


def test_volume_without_geometry_is_labelled_by_index(tmp_path: Path) -> None:
    vol = phantom(n=3)
    volume = Volume(3, lambda k: vol[k].astype(float), None)
    labels = [im.label for im in build_strip(volume, ["auto"])]
    assert labels == ["1/3 · slice 3 of 3", "2/3 · slice 2 of 3", "3/3 · slice 1 of 3",
                      "montage · 3 slices · auto"]  # fmt: skip


def test_montage_is_a_grid_with_labels(tmp_path: Path) -> None:
    vol = np.zeros((16, 128, 128), dtype=np.int16)
    volume = Volume(16, lambda k: vol[k].astype(float), [float(k) for k in range(16)])
    montage = build_strip(volume, ["brain"])[-1]
    assert (montage.role, montage.width, montage.height) == ("montage", 512, 512)
    pixels = _pixels(montage)
    assert pixels.max() > 200  # the burned-in labels: the slices themselves are black
    with pytest.raises(ValueError, match="no window of its own"):
        build_strip(volume, ["file"])


def _values(png: bytes) -> np.ndarray:
    """A values PNG read back: red * 256 + green - 32768 (render.encode_values)."""
    rgb = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=np.int64)
    return rgb[..., 0] * 256 + rgb[..., 1] - 32768


def test_original_values_ride_with_each_slice_exactly(tmp_path: Path) -> None:
    """study option original_values (issue 42): each slice carries its HU, the same
    values PNG under every window, none on the montage; off, nothing is kept."""
    vol = phantom(n=3)
    vol[:, 0, 0] = -32000  # the int16 range's edges survive the 16-bit packing
    vol[:, 0, 1] = 32000
    volume = Volume(3, lambda k: vol[k].astype(float), None, pixel_mm=(0.7, 0.8))
    images = build_strip(volume, ["lung", "bone"], original_values=True)
    slices = [im for im in images if im.role == "slice"]
    assert [im.values_png is None for im in images if im.role == "montage"] == [True, True]
    assert all(im.pixel_mm == (0.7, 0.8) for im in slices)
    lung, bone = slices[:3], slices[3:]
    assert [im.values_png for im in lung] == [im.values_png for im in bone]
    # strip order is the most superior first: slice 2, 1, 0 of the volume
    for im, k in zip(lung, (2, 1, 0), strict=True):
        assert im.values_png is not None
        assert np.array_equal(_values(im.values_png), vol[k])
    assert all(im.values_png is None for im in build_strip(volume, ["lung"]))
