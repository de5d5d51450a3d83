"""Strips run apex to base (most superior first) whatever the file's orientation.

The disc phantom's radius grows by one pixel a slice towards the top, so each
PNG says which slice it is. sample_indices(20) = round(linspace(0, 19, 16)) =
0 1 3 4 5 6 8 9 10 11 13 14 15 16 18 19; sent top first, that is reversed.
z: the helpers put display slice k at -150 + 2.5 k mm.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from reader_app.ingest.anonymize import DropCount
from reader_app.ingest.nifti_reader import open_nifti
from reader_app.ingest.series import read_series
from reader_app.ingest.strips import build_strip, strip_indices
from reader_app.ingest.volume import Volume
from tests.reader_app.ingest.helpers import (
    disc_height,
    disc_phantom,
    write_nifti,
    write_nifti_superior_first,
    write_series,
)

BIG = 10**9
APEX_FIRST = [19, 18, 16, 15, 14, 13, 11, 10, 9, 8, 6, 5, 4, 3, 1, 0]


def _volume(kind: str, tmp_path: Path) -> Volume:
    vol = disc_phantom()
    if kind == "nifti RAS":
        return open_nifti(write_nifti(tmp_path / "v.nii.gz", vol, ras=True), "v.nii.gz", BIG)
    if kind == "nifti LPS":
        return open_nifti(write_nifti(tmp_path / "v.nii", vol), "v.nii", BIG)
    if kind == "nifti stored top first":
        path = write_nifti_superior_first(tmp_path / "v.nii", vol)
        return open_nifti(path, "v.nii", BIG)
    # InstanceNumber k + 1 with k = 0 the most inferior; shuffled file names
    files = write_series(tmp_path / "s", vol, shuffle_seed=None)
    files = sorted(files, key=lambda p: p.name, reverse=True)
    volume, _ = read_series(files, "s", BIG, lambda p: p.name, DropCount())
    return volume


def test_strip_indices_run_top_down() -> None:
    assert strip_indices(20) == APEX_FIRST
    assert strip_indices(3) == [2, 1, 0]


@pytest.mark.parametrize(
    ("kind", "numbers"),
    [
        ("nifti RAS", [k + 1 for k in APEX_FIRST]),
        ("nifti LPS", [k + 1 for k in APEX_FIRST]),
        # voxel 0 is the top slice: the file's own numbering runs the other way
        ("nifti stored top first", [20 - k for k in APEX_FIRST]),
        ("dicom series", [k + 1 for k in APEX_FIRST]),
    ],
)
def test_every_orientation_sends_the_apex_first(
    kind: str, numbers: list[int], tmp_path: Path
) -> None:
    strip = build_strip(_volume(kind, tmp_path), ["mediastinum"])
    slices = [im for im in strip if im.role == "slice"]
    assert [disc_height(im.png) for im in slices] == APEX_FIRST
    assert [im.label for im in slices] == [
        f"{pos}/16 · slice {number} of 20 · z = {-150 + 2.5 * k:.1f} mm"
        for pos, (number, k) in enumerate(zip(numbers, APEX_FIRST, strict=True), start=1)
    ]
    assert slices[0].label.startswith("1/16 · ") and "z = -102.5 mm" in slices[0].label


def test_a_volume_without_geometry_is_numbered_by_index() -> None:
    vol = disc_phantom(n=3)
    strip = build_strip(Volume(3, lambda k: vol[k].astype(float), None), ["auto"])
    assert [disc_height(im.png) for im in strip[:3]] == [2, 1, 0]
    assert [im.label for im in strip] == [
        "1/3 · slice 3 of 3",
        "2/3 · slice 2 of 3",
        "3/3 · slice 1 of 3",
        "montage · 3 slices · auto",
    ]
