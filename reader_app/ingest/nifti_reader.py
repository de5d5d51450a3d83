"""NIfTI (.nii, .nii.gz) -> a Volume, reoriented with nibabel's as_closest_canonical.

as_closest_canonical on a loaded image reads (and scales) the whole array. We
hand it the *unscaled* memory map instead, so the reorientation is a set of
numpy views, and apply scl_slope/scl_inter per slice: only the slices a strip
samples are ever read from an uncompressed file. A .nii.gz cannot be mapped:
when its file stores axial planes (the voxel axis nearest superior is its last,
as scanners and converters write a CT), it is decompressed once, a plane at a
time, keeping only the planes a strip samples (``GzPlanes``: memory of a few
planes, not of the volume, and a sixth of the time of reading it whole with
nibabel, decompressed by ISA-L); any other layout is decompressed whole, once.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import nibabel as nib
import numpy as np
from isal import igzip, isal_zlib

from reader_app.ingest.errors import IngestError
from reader_app.ingest.strips import sample_indices
from reader_app.ingest.volume import Volume

# ISA-L's error for an invalid deflate stream: derived from Exception alone (not zlib's),
# and untyped in isal's stubs
ISAL_ERROR: Any = isal_zlib.error
Picks = Callable[[int], Iterable[int]]  # slice count -> the slices (display order) read first


def open_nifti(
    path: Path,
    name: str,
    max_voxels: int,
    max_inflate_bytes: int | None = None,
    *,
    picks: Picks = sample_indices,
) -> Volume:
    """Open lazily; every size is checked from the header before any voxel is read.

    ``picks``: the slices a .nii.gz stored as axial planes keeps from its one pass
    (a strip's, by default); another slice asked for later costs a pass of its own.
    """
    try:
        img = nib.load(str(path), mmap=True)
    except Exception as exc:  # nibabel raises ImageFileError, OSError, EOFError, ValueError
        raise IngestError(name, f"not a readable NIfTI file: {_short(exc)}") from exc
    if not isinstance(img, nib.Nifti1Image | nib.Nifti2Image):
        raise IngestError(name, "not a NIfTI-1 or NIfTI-2 image")
    try:
        shape = tuple(int(s) for s in img.shape)
        itemsize = int(img.get_data_dtype().itemsize)  # type: ignore[no-untyped-call]
        count = int(np.prod(shape, dtype=np.float64))  # float: 2**32 x 2**32 must not wrap
    except (OverflowError, ValueError, TypeError) as exc:
        raise IngestError(name, f"NIfTI header dimensions are not usable: {_short(exc)}") from exc
    if len(shape) > 3 and any(s > 1 for s in shape[3:]):
        raise IngestError(name, f"{len(shape)}-D NIfTI {shape}: a strip needs one 3-D volume")
    if len(shape) < 3:
        raise IngestError(name, f"{len(shape)}-D NIfTI: a strip needs a 3-D volume")
    if count > max_voxels:
        raise IngestError(
            name,
            f"{count} voxels exceed the limit of {max_voxels} "
            "(READERSTUDY_MAX_VOXELS; a decompression bomb?)",
        )
    compressed = path.name.lower().endswith(".gz")
    if compressed and max_inflate_bytes is not None and count * itemsize > max_inflate_bytes:
        raise IngestError(
            name,
            f"decompresses to {count * itemsize} bytes ({count} voxels of {itemsize} bytes), "
            f"over the limit of {max_inflate_bytes} (READERSTUDY_MAX_INFLATE_BYTES); "
            "a .nii.gz is decompressed end to end: "
            "save it uncompressed (.nii) or as a DICOM series",
        )
    proxy: Any = img.dataobj  # an ArrayProxy: nibabel's stubs call it ArrayLike
    slope, inter = float(proxy.slope), float(proxy.inter)
    header = img.header
    has_geometry = int(header["sform_code"]) > 0 or int(header["qform_code"]) > 0
    ornt = _orientation(img.affine)
    plane: Callable[[int], np.ndarray]
    if compressed and GzPlanes.fits(proxy, ornt):
        # reoriented on a zero-stride stand-in: nibabel's geometry, no voxel read
        canonical: Any = _closest_canonical(
            np.broadcast_to(np.zeros((), proxy.dtype), shape[:3]), img.affine
        )
        planes = GzPlanes(path, name, proxy, ornt)
        planes.keep(picks(int(canonical.shape[2])))  # read now: a bad file fails at open
        plane = planes.get
    else:
        try:
            raw = np.asanyarray(proxy.get_unscaled())  # a np.memmap for .nii: nothing read yet
        except (OSError, EOFError, ValueError, zlib.error) as exc:
            raise IngestError(name, f"truncated or corrupt NIfTI data: {_short(exc)}") from exc
        raw = raw.reshape(shape[:3], order="A")
        canonical = _closest_canonical(raw, img.affine)
        data = canonical.dataobj  # views (flips, transposes) of the memory map

        def plane(k: int) -> np.ndarray:
            return np.asarray(data[:, :, k])

    affine = canonical.affine
    n = int(canonical.shape[2])

    def read_slice(k: int) -> np.ndarray:
        try:
            values = np.asarray(plane(k), dtype=np.float64)
        except (OSError, ValueError) as exc:
            raise IngestError(name, f"truncated NIfTI data: {_short(exc)}") from exc
        if slope != 1.0 or inter != 0.0:
            values = values * slope + inter
        # canonical is RAS: i -> patient right, j -> anterior. Display wants row 0
        # anterior and column 0 the patient's right: transpose, then flip both.
        return np.ascontiguousarray(values[::-1, ::-1].T)

    z_mm = None
    pixel_mm = None
    if has_geometry:
        # display columns run along the canonical i axis, rows along j (read_slice); the
        # header keeps float32, so 0.7 reads 0.69999999: a micrometre is fine enough
        pixel_mm = (
            round(float(np.linalg.norm(affine[:3, 0])), 6),
            round(float(np.linalg.norm(affine[:3, 1])), 6),
        )
        normal = np.cross(affine[:3, 0], affine[:3, 1])
        normal = normal / np.linalg.norm(normal)
        z_mm = [float(np.dot(normal, affine[:3, :3] @ [0, 0, k] + affine[:3, 3])) for k in range(n)]
    return Volume(
        n_slices=n,
        read_slice=read_slice,
        z_mm=z_mm,
        source_numbers=_source_numbers(img.affine, shape[:3]),
        affine=np.array(affine, dtype=np.float64) if has_geometry else None,
        pixel_mm=pixel_mm,
        description=f"NIfTI volume {'x'.join(map(str, shape[:3]))}, reoriented to RAS"
        + ("" if has_geometry else ", no geometry"),
    )


class GzPlanes:
    """The canonical axial slices of a .nii.gz whose file stores axial planes, read
    in one pass of ``isal.igzip`` (any number of members, each one's CRC checked at
    its end) through a buffer of one plane, keeping the planes asked for."""

    def __init__(self, path: Path, name: str, proxy: Any, ornt: np.ndarray) -> None:
        self.path, self.name, self.ornt = path, name, ornt
        self.offset = int(proxy.offset)
        self.dtype = np.dtype(proxy.dtype)
        self.plane_shape = (int(proxy.shape[0]), int(proxy.shape[1]))
        self.n = int(proxy.shape[2])
        self.kept: dict[int, np.ndarray] = {}  # file plane index -> its values, as stored

    @staticmethod
    def fits(proxy: Any, ornt: np.ndarray) -> bool:
        """Planes of the file are canonical slices: Fortran order (NIfTI's), and the
        file's third voxel axis is the one nearest superior."""
        return str(getattr(proxy, "order", "F")) == "F" and int(ornt[2][0]) == 2

    def _file_index(self, k: int) -> int:
        return self.n - 1 - k if float(self.ornt[2][1]) < 0 else k

    def keep(self, canonical: Iterable[int]) -> None:
        wanted = {self._file_index(int(k)) for k in canonical}
        wanted = {k for k in wanted if 0 <= k < self.n} - set(self.kept)
        if not wanted:
            return
        size = self.plane_shape[0] * self.plane_shape[1] * self.dtype.itemsize
        buf = bytearray(size)
        try:
            # ISA-L's gzip (the stdlib's interface, 2.4x its speed here), which also
            # reads every member and checks each one's CRC and length
            gzip_file: Any = igzip.GzipFile  # isal's stubs leave it untyped
            with open(self.path, "rb") as raw, gzip_file(fileobj=raw) as gz:
                gz.seek(self.offset)  # decompressed and dropped, a buffer at a time
                for k in range(max(wanted) + 1):
                    got = gz.readinto(buf)
                    if got != size:
                        raise EOFError(f"the data ends in slice {k + 1} of {self.n}")
                    if k in wanted:
                        self.kept[k] = np.frombuffer(bytes(buf), self.dtype).reshape(
                            self.plane_shape, order="F"
                        )
                if max(wanted) == self.n - 1:
                    gz.read(1)  # past the last plane: the member's CRC and length are checked
        except (OSError, EOFError, ValueError, zlib.error, ISAL_ERROR) as exc:
            raise IngestError(self.name, f"truncated or corrupt NIfTI data: {_short(exc)}") from exc

    def get(self, k: int) -> np.ndarray:
        """Canonical slice ``k``: the file's plane flipped and transposed as
        ``apply_orientation`` (as_closest_canonical) turns the whole array."""
        index = self._file_index(k)
        if not 0 <= index < self.n:
            raise IndexError(f"slice {k} of {self.n}")
        self.keep([k])
        values = self.kept[index]
        if float(self.ornt[0][1]) < 0:
            values = values[::-1, :]
        if float(self.ornt[1][1]) < 0:
            values = values[:, ::-1]
        return values.T if int(self.ornt[0][0]) == 1 else values


def _orientation(affine: np.ndarray) -> np.ndarray:
    """Per voxel axis: (world axis, +1 or -1), as nibabel's as_closest_canonical sees it."""
    lib: Any = nib
    return np.asarray(lib.io_orientation(affine))


def _source_numbers(affine: np.ndarray, shape: tuple[int, ...]) -> list[int]:
    """Per canonical (RAS) slice, its 1-based index along the file's own slice axis:
    the voxel axis nibabel's io_orientation maps to S, counted as the file stores it."""
    ornt = _orientation(affine)  # per voxel axis: (world axis, +1 or -1)
    axis = int(next(i for i, (world, _) in enumerate(ornt) if int(world) == 2))
    n = int(shape[axis])
    flipped = float(ornt[axis][1]) < 0  # the file's index runs inferior-wards
    return [n - c if flipped else c + 1 for c in range(n)]


def _closest_canonical(raw: np.ndarray, affine: np.ndarray) -> Any:
    lib: Any = nib  # nibabel is untyped here; keep the Any in one place
    return lib.as_closest_canonical(lib.Nifti1Image(raw, affine))


def _short(exc: Exception) -> str:
    return str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
