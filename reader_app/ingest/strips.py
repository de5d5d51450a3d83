"""CT slice strips: 16 axial slices sampled evenly, one PNG each plus a labelled montage.

Model runs may send either the slices or the montage; readers see the same
pixels. For every window the images are, in order: the slices from the most
superior to the most inferior (apex to base on a chest CT, as Bench 2 sends
them; role "slice", label ``"1/16 · slice 40 of 40 · z = 97.5 mm"``: position
in the strip, number in the source volume, z where the geometry is known),
then the montage (role "montage").
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from reader_app.ingest.render import apply_window, auto_range, encode_png, encode_values
from reader_app.ingest.volume import Volume
from reader_app.study.casebank import RenderedImage
from reader_app.study.window_presets import PER_SLICE, WINDOW_PRESETS

STRIP_SLICES = 16
MIN_LABELLED_TILE = 96  # px: below this the montage carries no burned-in labels


def sample_indices(n: int, count: int = STRIP_SLICES) -> list[int]:
    """round(linspace(0, n-1, count)), deduplicated (only matters when n < count)."""
    if n <= 0:
        return []
    picks = np.round(np.linspace(0, n - 1, count)).astype(int)
    return sorted({int(i) for i in picks})


def strip_indices(n: int, count: int = STRIP_SLICES) -> list[int]:
    """The sampled display indices in strip order: most superior first (Volume's
    slice 0 is the most inferior)."""
    return sample_indices(n, count)[::-1]


def slice_label(pos: int, count: int, number: int, n: int, z_mm: float | None) -> str:
    """``pos``/``count`` in the strip, ``number`` (1-based) of ``n`` in the source volume."""
    where = f" · z = {z_mm:.1f} mm" if z_mm is not None else ""
    return f"{pos}/{count} · slice {number} of {n}{where}"


def source_number(volume: Volume, index: int) -> int:
    return int(volume.source_numbers[index]) if volume.source_numbers else index + 1


def window_slices(slices: Sequence[np.ndarray], window: str, volume: Volume) -> list[np.ndarray]:
    if window == "auto":
        # one range for the whole strip, so slices stay comparable
        lo = min(float(s.min()) for s in slices)
        hi = max(float(s.max()) for s in slices)
        out = [auto_range(s, lo, hi) for s in slices]
    elif window == PER_SLICE:  # Bench 2: each slice to 8 bits on its own range
        out = [auto_range(s) for s in slices]
    else:
        spec = volume.file_window if window == "file" else WINDOW_PRESETS[window]
        if spec is None:
            raise ValueError("the volume has no window of its own")
        out = [apply_window(s, spec) for s in slices]
    return [255 - s for s in out] if volume.invert else out


def build_strip(
    volume: Volume, windows: Sequence[str], *, original_values: bool = False
) -> list[RenderedImage]:
    """Sample, window and encode; reads only the sampled slices from the volume.
    ``original_values``: each slice also carries its values (``encode_values``)."""
    indices = strip_indices(volume.n_slices)
    slices = [volume.read_slice(k) for k in indices]
    shapes = {s.shape for s in slices}
    if len(shapes) != 1:
        raise ValueError(f"slices differ in shape: {sorted(shapes)}")
    count = len(indices)
    labels = [
        slice_label(
            pos,
            count,
            source_number(volume, k),
            volume.n_slices,
            volume.z_mm[k] if volume.z_mm else None,
        )
        for pos, k in enumerate(indices, start=1)
    ]
    jobs: list[tuple[np.ndarray, str, str, str]] = []  # (pixels, label, window, role)
    for window in windows:
        tiles = window_slices(slices, window, volume)
        jobs += [(tile, label, window, "slice") for tile, label in zip(tiles, labels, strict=True)]
        montage = make_montage(tiles, labels)
        jobs.append((montage, f"montage · {count} slices · {window}", window, "montage"))

    def encode(job: tuple[np.ndarray, str, str, str]) -> RenderedImage:
        # a slice keeps the volume's spacing (the viewer's distance tool); a montage,
        # several slices side by side, has none that a measure across tiles could use
        mm = volume.pixel_mm if job[3] == "slice" else None
        return encode_png(job[0], label=job[1], window=job[2], role=job[3], pixel_mm=mm)

    # PNG encoding dominates a strip's time; Pillow's encoder releases the GIL, so
    # threads use every core. map() keeps the order, and each PNG is deterministic.
    with ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1)) as pool:
        rendered = list(pool.map(encode, jobs))
    if not original_values:
        return rendered
    # one values PNG per slice, the same for every window (content-addressed: stored once)
    first = next(im for im in rendered if im.role == "slice")
    values = [encode_values(s, (first.width, first.height)) for s in slices]
    per_window = len(slices) + 1  # the slices, then the montage
    return [
        replace(im, values_png=values[i % per_window]) if im.role == "slice" else im
        for i, im in enumerate(rendered)
    ]


def make_montage(tiles: Sequence[np.ndarray], labels: Sequence[str]) -> np.ndarray:
    """Tiles in a near-square grid (4x4 for 16), each with its label burned in."""
    n = len(tiles)
    cols = math.ceil(math.sqrt(n))
    rows = math.ceil(n / cols)
    h, w = tiles[0].shape
    canvas = Image.new("L", (cols * w, rows * h), color=0)
    font = ImageFont.load_default(size=max(10, h // 20))
    draw = ImageDraw.Draw(canvas)
    for i, (tile, label) in enumerate(zip(tiles, labels, strict=True)):
        x, y = (i % cols) * w, (i // cols) * h
        canvas.paste(Image.fromarray(tile), (x, y))
        if h < MIN_LABELLED_TILE:
            continue  # a label would cover a thumbnail-sized tile entirely
        box = draw.textbbox((x + 4, y + 4), label, font=font)
        draw.rectangle((box[0] - 2, box[1] - 2, box[2] + 2, box[3] + 2), fill=0)
        draw.text((x + 4, y + 4), label, fill=255, font=font)
    return np.asarray(canvas)
