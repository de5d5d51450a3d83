"""A 3-D image that hands out axial slices one at a time, already display-oriented.

Both readers (DICOM series, NIfTI) produce this, and strips only use this, so a
volume renders to the same pixels whichever format it came in.

Display convention (radiological): row 0 is the most anterior, column 0 the
patient's right. Slice 0 is the most inferior; positions increase upwards
(a strip is then sent and shown from the top down: ``strips.strip_indices``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from reader_app.study.window_presets import Window


@dataclass(frozen=True)
class Volume:
    n_slices: int
    read_slice: Callable[[int], np.ndarray]  # index in display order -> 2-D float64 (rescaled)
    z_mm: Sequence[float] | None = None  # slice positions along the normal; None: no geometry
    file_window: Window | None = None
    modality: str | None = None
    invert: bool = False
    description: str = ""  # for the ingestion report
    # per display slice, its 1-based number in the source's own order (a NIfTI's voxel
    # index along its slice axis, a DICOM series' InstanceNumber); None: the display index
    source_numbers: Sequence[int] | None = None
    # NIfTI with geometry: the closest-canonical (RAS) voxel-to-mm affine, so a mask can be
    # checked to lie on this voxel grid
    affine: np.ndarray | None = field(default=None, compare=False, repr=False)
    # millimetres per pixel of a display slice, (x across, y down); None: not known
    pixel_mm: tuple[float, float] | None = None


def lps_display_ops(row: np.ndarray, col: np.ndarray) -> tuple[bool, bool, bool]:
    """(transpose, flip_rows, flip_cols) turning a DICOM pixel array to display convention.

    DICOM's patient axes are LPS: +x is the patient's left, +y posterior. Display
    wants columns running towards +x and rows towards +y. ``row`` is the direction
    of increasing column index, ``col`` that of increasing row index (IOP order).
    """
    if abs(row[0]) >= abs(row[1]):
        return False, bool(col[1] < 0), bool(row[0] < 0)
    # in-plane axes swapped: after transposing, old rows run along x
    return True, bool(row[1] < 0), bool(col[0] < 0)


def apply_display_ops(arr: np.ndarray, ops: tuple[bool, bool, bool]) -> np.ndarray:
    transpose, flip_rows, flip_cols = ops
    if transpose:
        arr = arr.T
    if flip_rows:
        arr = arr[::-1, :]
    if flip_cols:
        arr = arr[:, ::-1]
    return np.ascontiguousarray(arr, dtype=np.float64)
