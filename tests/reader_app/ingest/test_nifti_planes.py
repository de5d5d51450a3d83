"""A .nii.gz read a plane at a time (``GzPlanes``) gives the slices the whole-file path gives.

The reference is the same voxels saved uncompressed (.nii): that path maps the
file and lets nibabel's ``as_closest_canonical`` turn the whole array. Every
axis order and flip of a volume is tried; those that store axial planes are
streamed, the others read whole, and the slices must be equal either way.
"""

from __future__ import annotations

import gzip
import itertools
import subprocess
import sys
from pathlib import Path
from typing import Any

import nibabel as nib
import numpy as np
import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as settings_
from hypothesis import strategies as st

from reader_app.ingest.errors import IngestError
from reader_app.ingest.nifti_reader import GzPlanes, open_nifti
from reader_app.ingest.strips import sample_indices

BIG = 10**9
lib: Any = nib  # nibabel is untyped


def _save(path: Path, data: np.ndarray, affine: np.ndarray, slope: float = 1.0) -> Path:
    img = lib.Nifti1Image(data, affine)
    if slope != 1.0:
        img.header.set_slope_inter(slope, -1024.0)
    lib.save(img, str(path))
    return path


def _affine(order: tuple[int, int, int], flips: tuple[int, int, int]) -> np.ndarray:
    """Voxel axis i runs along world axis order[i], in direction flips[i], 0.5-2.5 mm apart."""
    affine = np.zeros((4, 4))
    for i, (world, flip) in enumerate(zip(order, flips, strict=True)):
        affine[world, i] = flip * (0.5 + i)
    affine[:3, 3] = (-10.0, 20.0, -30.0)
    affine[3, 3] = 1.0
    return affine


ORDERS = list(itertools.permutations(range(3)))
FLIPS = list(itertools.product((1, -1), repeat=3))


@settings_(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    order=st.sampled_from(ORDERS),
    flips=st.sampled_from(FLIPS),
    dims=st.tuples(st.integers(2, 7), st.integers(2, 7), st.integers(2, 9)),
    seed=st.integers(0, 2**16),
)
def test_streamed_slices_equal_the_whole_file_path(
    tmp_path_factory: pytest.TempPathFactory,
    order: tuple[int, int, int],
    flips: tuple[int, int, int],
    dims: tuple[int, int, int],
    seed: int,
) -> None:
    folder = tmp_path_factory.mktemp("planes")
    data = np.random.default_rng(seed).integers(-1024, 3000, dims).astype(np.int16)
    affine = _affine(order, flips)
    plain = open_nifti(_save(folder / "v.nii", data, affine, slope=0.5), "v.nii", BIG)
    packed = open_nifti(_save(folder / "v.nii.gz", data, affine, slope=0.5), "v.nii.gz", BIG)
    assert packed.n_slices == plain.n_slices
    assert packed.z_mm == plain.z_mm
    assert packed.pixel_mm == plain.pixel_mm
    assert packed.source_numbers == plain.source_numbers
    np.testing.assert_array_equal(packed.affine, plain.affine)
    for k in range(plain.n_slices):  # the kept slices and the ones read again on demand
        np.testing.assert_array_equal(packed.read_slice(k), plain.read_slice(k))


def test_axial_storage_is_streamed_and_keeps_only_the_strips_planes(tmp_path: Path) -> None:
    data = np.arange(6 * 5 * 40, dtype=np.int16).reshape((6, 5, 40), order="F")
    path = _save(tmp_path / "ax.nii.gz", data, _affine((0, 1, 2), (-1, 1, -1)))
    img = lib.load(str(path))
    ornt = np.asarray(lib.io_orientation(img.affine))
    assert GzPlanes.fits(img.dataobj, ornt)
    planes = GzPlanes(path, "ax.nii.gz", img.dataobj, ornt)
    planes.keep(sample_indices(40))
    assert len(planes.kept) == 16
    # canonical slice 0 is the most inferior: the file's last plane (its axis runs down)
    np.testing.assert_array_equal(planes.get(0), data[::-1, :, 39])
    # a sagittal file (its last axis along x) is not streamed
    assert not GzPlanes.fits(img.dataobj, np.asarray([[2, 1], [1, 1], [0, 1]]))


def test_a_multi_member_file_reads_as_one(tmp_path: Path) -> None:
    """gzip(1) may write a file as several members (RFC 1952): the planes run on
    across a member's end."""
    data = np.random.default_rng(1).integers(-1000, 1000, (16, 16, 12)).astype(np.int16)
    affine = _affine((0, 1, 2), (1, 1, 1))
    whole = _save(tmp_path / "one.nii.gz", data, affine)
    raw = gzip.decompress(whole.read_bytes())
    cuts = [0, 100, 353, 1000, len(raw) // 2, len(raw)]  # in the header, in planes
    assert cuts == sorted(cuts)
    members = b"".join(gzip.compress(raw[a:b]) for a, b in itertools.pairwise(cuts))
    (tmp_path / "many.nii.gz").write_bytes(members)
    one = open_nifti(whole, "one.nii.gz", BIG)
    many = open_nifti(tmp_path / "many.nii.gz", "many.nii.gz", BIG)
    for k in range(12):
        np.testing.assert_array_equal(many.read_slice(k), one.read_slice(k))


def test_a_cut_or_corrupt_file_fails_at_open_naming_it(tmp_path: Path) -> None:
    data = np.random.default_rng(2).integers(-1000, 1000, (16, 16, 20)).astype(np.int16)
    whole = _save(tmp_path / "ok.nii.gz", data, _affine((0, 1, 2), (1, 1, 1)))
    blob = whole.read_bytes()
    (tmp_path / "cut.nii.gz").write_bytes(blob[: len(blob) * 2 // 3])
    with pytest.raises(IngestError, match=r"^cut\.nii\.gz: truncated or corrupt NIfTI data"):
        open_nifti(tmp_path / "cut.nii.gz", "cut.nii.gz", BIG)
    flipped = bytearray(blob)
    flipped[len(blob) // 2] ^= 0xFF  # a bit flip inside the deflate stream
    (tmp_path / "bad.nii.gz").write_bytes(bytes(flipped))
    # one the deflate decoder takes is caught by the member's CRC, read at the last plane
    with pytest.raises(IngestError, match=r"^bad\.nii\.gz: truncated or corrupt NIfTI data"):
        open_nifti(tmp_path / "bad.nii.gz", "bad.nii.gz", BIG)
    # voxels the deflate decoder refuses outright (ISA-L's own error class): the header
    # in a member of its own, then a member whose first block's type is set to 3, which
    # RFC 1951 reserves (10: the end of gzip's plain member header)
    # (and past the first 64 KiB of voxels, which nibabel's buffered header read may reach)
    big = np.random.default_rng(3).integers(-1000, 1000, (64, 64, 40)).astype(np.int16)
    whole = gzip.decompress(
        _save(tmp_path / "big.nii.gz", big, _affine((0, 1, 2), (1, 1, 1))).read_bytes()
    )
    start = 352 + 65536
    rest = bytearray(gzip.compress(whole[start:], mtime=0))
    rest[10] |= 0b110
    members = [gzip.compress(whole[:352], mtime=0), gzip.compress(whole[352:start], mtime=0)]
    (tmp_path / "junk.nii.gz").write_bytes(b"".join(members) + rest)
    with pytest.raises(IngestError, match=r"^junk\.nii\.gz: truncated or corrupt NIfTI data"):
        open_nifti(tmp_path / "junk.nii.gz", "junk.nii.gz", BIG)


MEASURE = """
import resource, sys
from pathlib import Path
from reader_app.ingest.nifti_reader import open_nifti
from reader_app.ingest.strips import build_strip
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
volume = open_nifti(Path(sys.argv[1]), "ct.nii.gz", 10**10, 10**10)
build_strip(volume, ["lung"])
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)
"""


def test_a_strip_of_a_large_nii_gz_holds_planes_not_the_volume(tmp_path: Path) -> None:
    """256x256x600 int16 (75 MiB decompressed): the strip's peak memory grows by a
    few planes, not by the volume (measured in a fresh interpreter, after imports)."""
    data = np.broadcast_to(
        np.arange(256 * 256, dtype=np.int16).reshape(256, 256)[..., None], (256, 256, 600)
    )
    path = _save(tmp_path / "ct.nii.gz", np.array(data), _affine((0, 1, 2), (-1, -1, 1)))
    grown_kib = int(
        subprocess.run(
            [sys.executable, "-c", MEASURE, str(path)], capture_output=True, text=True, check=True
        ).stdout
    )
    assert grown_kib < 40 * 1024, f"the strip grew the process by {grown_kib} KiB"
