"""A case's reference region, checked against the pixels it is stored with (SCORING.md s. 8).

Boxes and masks are in the *stored* image's pixels: after the display
orientation, the strip's slice sampling and the store's downscale to
``render.MAX_SIDE`` (``render.fit``). A box must lie inside its image or
slice; a mask is read the way its image was:

- spot: a PNG of the stored size, or of the source image's size (then scaled
  to the stored size like the image, but nearest-neighbour);
- strip: a NIfTI on the volume's own voxel grid, opened like a strip's NIfTI
  (``open_nifti``: closest canonical orientation, display orientation), the
  same slices sampled, in the same order (``strips.strip_indices``), each slice scaled to the
  stored size nearest-neighbour. It yields (slices, rows, cols).

Black (0) is outside, any other value inside. Nothing here is ever served: the
answer key holds the result (``format_region`` text, ``encode_mask`` bytes).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from PIL import Image

from reader_app.grounding.store import encode_mask
from reader_app.ingest.errors import IngestError
from reader_app.ingest.manifest import Manifest, ManifestEntry
from reader_app.ingest.nifti_reader import open_nifti
from reader_app.ingest.raster import read_raster
from scoring import BoolArray, RegionError, format_region

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@dataclass(frozen=True)
class StoredGrid:
    """Where a case's reference lives: the stored size, and the source size it came from."""

    width: int  # every stored image (spot) or slice (strip) of the case
    height: int
    source_shape: tuple[int, int]  # (rows, cols) before the store's downscale
    sampled: tuple[int, ...] = ()  # strip: volume slice indices; strip slice k is sampled[k-1]
    volume_slices: int = 0  # strip: the volume's slice count
    # strip from a NIfTI with geometry: its closest-canonical affine (Volume.affine)
    affine: np.ndarray | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Reference:
    region: str | None = None  # scoring.regions.format_region text
    mask: bytes | None = None  # reader_app.grounding.store.encode_mask bytes


def read_reference(
    entry: ManifestEntry,
    manifest: Manifest,
    grid: StoredGrid | None,
    *,
    max_pixels: int,
    max_voxels: int,
    max_inflate_bytes: int,
) -> Reference:
    """The entry's boxes checked and made canonical, or its mask read; raise IngestError."""
    if not entry.reference_boxes and entry.reference_mask is None:
        return Reference()
    field = "reference_region" if entry.reference_boxes else "reference_mask"
    if grid is None:
        raise IngestError(
            f"{entry.where}, field {field!r}",
            "a reference region needs the case's images to share one size",
        )
    if entry.reference_boxes:
        _check_boxes(entry, grid)
        return Reference(region=format_region(entry.reference_boxes))
    path = entry.reference_mask
    assert path is not None
    name = manifest.rel(path)
    where = f"{entry.where}, field 'reference_mask', {name}"
    if not path.is_file():
        raise IngestError(where, "not a file")
    if entry.kind == "spot":
        mask = _png_mask(path, where, grid, max_pixels)
    else:
        mask = _nifti_mask(path, where, grid, max_voxels, max_inflate_bytes)
    if not mask.any():
        raise IngestError(where, _empty(entry.kind, grid))
    try:
        return Reference(mask=encode_mask(mask))
    except RegionError as exc:
        raise IngestError(where, str(exc)) from exc


def _check_boxes(entry: ManifestEntry, grid: StoredGrid) -> None:
    where = f"{entry.where}, field 'reference_region'"
    for box in entry.reference_boxes:
        if box.slice is not None and box.slice > len(grid.sampled):
            raise IngestError(
                where, f"box on slice {box.slice}: the strip has slices 1..{len(grid.sampled)}"
            )
        if box.x + box.w > grid.width or box.y + box.h > grid.height:
            on = f"slice {box.slice} " if box.slice is not None else ""
            raise IngestError(
                where,
                f"box {box.x:g},{box.y:g},{box.w:g},{box.h:g} lies outside the stored {on}image "
                f"({grid.width}x{grid.height} pixels; x + w <= {grid.width}, "
                f"y + h <= {grid.height})",
            )


def _png_mask(path: Path, where: str, grid: StoredGrid, max_pixels: int) -> BoolArray:
    with path.open("rb") as f:
        if f.read(len(PNG_SIGNATURE)) != PNG_SIGNATURE:
            raise IngestError(where, "not a PNG file")
    source, _ = read_raster(path, where, max_pixels)  # the import's pixel cap, EXIF turned
    pixels = source.pixels
    plane: BoolArray = (pixels != 0).any(axis=2) if pixels.ndim == 3 else pixels != 0
    return _to_stored(plane, where, grid)


def _nifti_mask(
    path: Path, where: str, grid: StoredGrid, max_voxels: int, max_inflate_bytes: int
) -> BoolArray:
    volume = open_nifti(path, where, max_voxels, max_inflate_bytes)
    if volume.n_slices != grid.volume_slices:
        raise IngestError(
            where,
            f"the mask has {volume.n_slices} slices, the case's volume {grid.volume_slices}: "
            "a mask must be on the volume's own voxel grid",
        )
    _check_same_grid(volume.affine, grid, where)
    planes = [_to_stored(volume.read_slice(k) != 0, where, grid) for k in grid.sampled]
    return np.stack(planes)


AFFINE_TOLERANCE_MM = 0.01  # float32 headers and qform/sform rounding stay far below this


def _check_same_grid(mask: np.ndarray | None, grid: StoredGrid, where: str) -> None:
    """Same voxel count is not the same voxels: a mask from another series, or a crop of the
    same size, would mark the wrong place. Checked when the volume is a NIfTI with geometry
    (the mask must then have it too): how far each corner voxel lies from the volume's
    same voxel (the largest gap anywhere, as both maps are affine)."""
    if grid.affine is None:  # a DICOM series, or a NIfTI volume without geometry
        return
    if mask is None:  # read in the Analyze default orientation: no match to the volume's
        raise IngestError(
            where,
            "the mask has no geometry (qform and sform codes 0), so its voxels cannot be "
            "matched to the volume's; save the mask with the volume's affine",
        )
    rows, cols = grid.source_shape  # display (rows, cols) = canonical (j, i)
    ks = (0, grid.volume_slices - 1)
    corners = np.array(
        [[i, j, k, 1] for i in (0, cols - 1) for j in (0, rows - 1) for k in ks], dtype=np.float64
    ).T
    gap = float(np.linalg.norm((mask - grid.affine)[:3] @ corners, axis=0).max())
    if gap > AFFINE_TOLERANCE_MM:
        first = ", ".join(f"{v:.2f}" for v in mask[:3, 3])
        expected = ", ".join(f"{v:.2f}" for v in grid.affine[:3, 3])
        raise IngestError(
            where,
            f"the mask is not on the volume's voxel grid: a voxel lies {gap:.2f} mm from the "
            f"volume's same voxel (first voxel at {first} mm, the volume's at {expected} mm, "
            "RAS after reorientation); save the mask with the volume's affine",
        )


def _to_stored(plane: BoolArray, where: str, grid: StoredGrid) -> BoolArray:
    """Scale a source-sized plane to the stored size as ``render.fit`` does, nearest-neighbour."""
    rows, cols = plane.shape
    if (rows, cols) == (grid.height, grid.width):
        return plane
    if (rows, cols) != grid.source_shape:
        raise IngestError(
            where,
            f"the mask is {cols}x{rows} pixels; the stored image is {grid.width}x{grid.height} "
            f"(from a {grid.source_shape[1]}x{grid.source_shape[0]} source): give either size",
        )
    img = Image.fromarray(plane.astype(np.uint8) * 255)
    scaled = img.resize((grid.width, grid.height), Image.Resampling.NEAREST)
    out: BoolArray = np.asarray(scaled) > 0
    return out


def _empty(kind: str, grid: StoredGrid) -> str:
    if kind == "spot":
        return "the mask is empty (no non-zero pixel at the stored size)"
    picked = ", ".join(str(k) for k in sorted(grid.sampled))
    return (
        "the mask is empty on the strip's slices (no non-zero voxel on the sampled "
        f"volume slices {picked}, 0-based from the most inferior, at the stored size)"
    )


def spot_grid(
    sizes: Sequence[tuple[int, int]], source_shapes: Sequence[tuple[int, int]]
) -> StoredGrid | None:
    """A spot case's grid: every image the same stored (width, height) and source shape."""
    if len(set(sizes)) != 1 or len(set(source_shapes)) != 1:
        return None
    (width, height), source = sizes[0], source_shapes[0]
    return StoredGrid(width, height, source)
