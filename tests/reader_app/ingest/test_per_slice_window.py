"""The ``per-slice`` window (issue 40): Bench 2's "each slice is intensity-normalized to
an 8-bit grayscale image", for readers and models alike, as a study setting."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from reader_app.ingest.manifest import WINDOW_NAMES
from reader_app.ingest.strips import build_strip
from reader_app.ingest.volume import Volume
from reader_app.study.config import StudyConfig, StudyConfigError


def pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("L"))


def ramp_volume(n: int = 4) -> tuple[Volume, np.ndarray]:
    # slice k holds the values k*100 .. k*100 + 4*(8*8 - 1): same shape, ranges apart
    base = np.arange(64, dtype=float).reshape(8, 8) * 4
    vol = np.stack([base + 100 * k for k in range(n)])
    return Volume(n, lambda k: vol[k], None), vol


def test_per_slice_stretches_each_slice_auto_one_range() -> None:
    volume, vol = ramp_volume()
    per_slice = build_strip(volume, ["per-slice"])[:4]
    one_range = build_strip(volume, ["auto"])[:4]
    # strip order is most superior first: slice index 3, 2, 1, 0 (no geometry)
    for tile, k in zip(per_slice, [3, 2, 1, 0], strict=True):
        got = pixels(tile.png)
        # each slice on its own range: min -> 0, max -> 255, (v - lo) / (hi - lo) * 255
        assert (got.min(), got.max()) == (0, 255)
        expected = np.rint((vol[k] - vol[k].min()) / np.ptp(vol[k]) * 255).astype(np.uint8)
        assert (got == expected).all()
        assert tile.window == "per-slice"
    # auto: one range (0 .. 552) for the strip, so slice 0 stays dark, slice 3 bright
    lo, hi = vol.min(), vol.max()
    darkest = pixels(one_range[3].png)
    assert darkest.min() == 0 and darkest.max() == round((252 - lo) / (hi - lo) * 255)
    assert not all(
        (pixels(a.png) == pixels(b.png)).all() for a, b in zip(per_slice, one_range, strict=True)
    )


def test_per_slice_is_a_study_setting_and_a_manifest_window() -> None:
    assert "per-slice" in WINDOW_NAMES
    config = StudyConfig.parse({"default_windows": ["per-slice"]}, title="t", practice_cases=0)
    assert config.default_windows == ("per-slice",)
    with pytest.raises(StudyConfigError, match="per-slice"):
        StudyConfig.parse({"default_windows": ["per slice"]}, title="t", practice_cases=0)
