"""Synthetic images for the browser benchmarks, as ingest stores them.

Spot cases: grey chest-radiograph-like PNGs; strips: 16 CT-like slices in three
windows plus a montage each. Every image a measured reader can meet gets bytes
of its own (a private PNG text chunk), so nothing comes from the browser's
cache by accident; images no measured reader sees share bytes, which keeps a
2,000-case study small on disk.
"""

from __future__ import annotations

import io
import struct
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from PIL import Image

from reader_app.study.casebank import RenderedImage

WINDOWS = ("lung", "mediastinum", "bone")
STRIP_SLICES = 16


def _png(pixels: np.ndarray) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(pixels, "L").save(buf, format="PNG")
    return buf.getvalue()


def radiograph_png(seed: int, width: int, height: int) -> bytes:
    """A grey chest-radiograph-like picture with film noise (about 1 MB at 1200 x 1460)."""
    rng = np.random.default_rng(seed)
    y = np.linspace(-1.0, 1.0, height, dtype=np.float32)[:, None]
    x = np.linspace(-1.0, 1.0, width, dtype=np.float32)[None, :]
    body = 70 + 100 * np.exp(-((x / 0.62) ** 2) - (y / 0.75) ** 2)
    lungs = 45 * np.exp(-(((np.abs(x) - 0.35) / 0.2) ** 2) - ((y + 0.1) / 0.45) ** 2)
    ribs = 12 * np.cos(18 * y + seed) * (np.abs(x) < 0.6)
    pixels = body - lungs + ribs + rng.normal(0, 3.5, (height, width)).astype(np.float32)
    return _png(np.clip(pixels, 0, 255).astype(np.uint8))


def ct_slice_png(seed: int, window: str, size: int) -> bytes:
    """An axial chest-CT-like slice (body, lungs, spine, 15 HU noise) under a window preset."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[:size, :size].astype(np.float32)
    hu = np.full((size, size), -1000.0, dtype=np.float32)
    hu[((x - size / 2) / (size * 0.42)) ** 2 + ((y - size / 2) / (size * 0.32)) ** 2 <= 1] = 40
    grow = (seed % 16) * size / 256
    for cx in (0.32, 0.68):
        lung = ((x - size * cx) / (size * 0.13 + grow)) ** 2 + (
            (y - size * 0.48) / (size * 0.2)
        ) ** 2
        hu[lung <= 1] = -850
    hu[(x - size / 2) ** 2 + (y - size * 0.7) ** 2 <= (size * 0.05) ** 2] = 700
    hu += rng.normal(0, 15, (size, size)).astype(np.float32)
    center, width = {"lung": (-600, 1500), "mediastinum": (50, 350), "bone": (500, 2000)}[window]
    pixels = (hu - (center - width / 2)) / width * 255
    return _png(np.clip(pixels, 0, 255).astype(np.uint8))


def tagged(png: bytes, tag: str) -> bytes:
    """The same picture with different bytes: a tEXt chunk after IHDR (browsers ignore it)."""
    data = b"bench\0" + tag.encode()
    chunk = struct.pack(">I", len(data)) + b"tEXt" + data
    chunk += struct.pack(">I", zlib.crc32(b"tEXt" + data) & 0xFFFFFFFF)
    return png[:33] + chunk + png[33:]  # 8-byte signature + 25-byte IHDR chunk


@dataclass
class ImagePool:
    """A few base pictures, made once; cases get distinct bytes by tagging them."""

    spot_size: tuple[int, int]
    slice_size: int
    spots: list[bytes] = field(default_factory=list)
    slices: dict[str, list[bytes]] = field(default_factory=dict)

    @classmethod
    def make(cls, spot_size: tuple[int, int], slice_size: int, n_spots: int = 3) -> ImagePool:
        pool = cls(spot_size, slice_size)
        pool.spots = [radiograph_png(s, *spot_size) for s in range(n_spots)]
        pool.slices = {
            w: [ct_slice_png(j, w, slice_size) for j in range(STRIP_SLICES)] for w in WINDOWS
        }
        return pool

    def case_images(self, index: int, strip: bool, distinct: bool) -> list[RenderedImage]:
        """What ingest stores for a case; ``distinct``: bytes no other case has."""

        def mark(png: bytes, what: str) -> bytes:
            return tagged(png, f"case {index} {what}") if distinct else png

        if not strip:
            w, h = self.spot_size
            return [RenderedImage(mark(self.spots[index % len(self.spots)], "spot"), w, h)]
        images = []
        size = self.slice_size
        for window in WINDOWS:
            for j, png in enumerate(self.slices[window]):
                images.append(
                    RenderedImage(
                        mark(png, f"{window} {j}"),
                        size,
                        size,
                        label=f"{j + 1}/{STRIP_SLICES}",
                        window=window,
                        role="slice",
                    )
                )
            images.append(
                RenderedImage(
                    self.slices[window][0],
                    size,
                    size,
                    label=f"montage · {window}",
                    window=window,
                    role="montage",
                )
            )
        return images

    def floor_pngs(self, folder: Path, count: int) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        for i in range(count):
            png = tagged(self.spots[i % len(self.spots)], f"floor {i}")
            (folder / f"{i:04d}.png").write_bytes(png)
