"""Windowing, inversion, downscaling and metadata-free PNGs, with hand-derived values."""

from __future__ import annotations

import io
import struct

import numpy as np
import pytest
from PIL import Image

from reader_app.ingest.render import (
    MAX_SIDE,
    SourceImage,
    apply_window,
    auto_range,
    encode_png,
    grey_to_uint8,
    resolve_windows,
)
from reader_app.study.window_presets import WINDOW_PRESETS


def png_chunks(data: bytes) -> list[str]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    chunks, pos = [], 8
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        chunks.append(data[pos + 4 : pos + 8].decode("ascii"))
        pos += 12 + length
    return chunks


def test_presets_are_the_issue_values() -> None:
    as_wl = {name: (w.width, w.center) for name, w in WINDOW_PRESETS.items()}
    assert as_wl == {
        "lung": (1500, -600),
        "mediastinum": (350, 50),
        "bone": (2000, 500),
        "brain": (80, 40),
    }


def test_lung_window_by_hand() -> None:
    # pydicom LINEAR (PS3.3 C.11.2.1.2.1): c' = -600.5, w' = 1499, output 0..255.
    # x <= c' - w'/2 = -1350 -> 0; x > c' + w'/2 = 149 -> 255;
    # x = -600 -> ((-600 + 600.5) / 1499 + 0.5) * 255 = 127.585 -> 128
    # x = -1000 -> ((-399.5) / 1499 + 0.5) * 255 = 59.54 -> 60
    hu = np.array([[-2000.0, -1350.0, -1000.0, -600.0, 149.0, 150.0]])
    out = apply_window(hu, WINDOW_PRESETS["lung"])
    assert out.dtype == np.uint8
    assert out.tolist() == [[0, 0, 60, 128, 255, 255]]


def test_brain_window_by_hand() -> None:
    # c' = 39.5, w' = 79: 0 HU -> ((0 - 39.5) / 79 + 0.5) * 255 = 0; 40 -> 129.11 -> 129
    out = apply_window(np.array([[0.0, 40.0, 80.0]]), WINDOW_PRESETS["brain"])
    assert out.tolist() == [[0, 129, 255]]


def test_monochrome1_is_inverted() -> None:
    values = np.array([[0.0, 10.0]])
    plain = grey_to_uint8(SourceImage(values), "auto")
    inverted = grey_to_uint8(SourceImage(values, invert=True), "auto")
    assert plain.tolist() == [[0, 255]]
    assert inverted.tolist() == [[255, 0]]


def test_auto_range_of_a_flat_image_is_black() -> None:
    assert auto_range(np.full((2, 2), 7.0)).tolist() == [[0, 0], [0, 0]]


def test_file_window_needs_one() -> None:
    with pytest.raises(ValueError, match="no window"):
        grey_to_uint8(SourceImage(np.zeros((2, 2))), "file")


def test_downscale_scales_the_pixel_spacing() -> None:
    """A PNG downscaled by ingest measures the source's millimetres (issue 42)."""
    wide = encode_png(np.zeros((1000, 2920), dtype=np.uint8), pixel_mm=(0.5, 0.25))
    assert (wide.width, wide.height) == (1460, 500)
    assert wide.pixel_mm == (pytest.approx(1.0), pytest.approx(0.5))  # 2920 / 1460 = 2
    assert encode_png(np.zeros((30, 40), dtype=np.uint8), pixel_mm=(0.7, 0.8)).pixel_mm == (
        0.7,
        0.8,
    )
    assert encode_png(np.zeros((30, 40), dtype=np.uint8)).pixel_mm is None


def test_downscale_long_side_and_no_upscale() -> None:
    wide = encode_png(np.zeros((1000, 2920), dtype=np.uint8))
    assert (wide.width, wide.height) == (MAX_SIDE, 500)
    small = encode_png(np.zeros((30, 40), dtype=np.uint8))
    assert (small.width, small.height) == (40, 30)


def test_png_has_pixels_only() -> None:
    rgb = encode_png(np.zeros((8, 8, 3), dtype=np.uint8), label="x", window=None)
    grey = encode_png(np.full((8, 8), 9, dtype=np.uint8), role="slice", window="lung")
    for image in (rgb, grey):
        assert png_chunks(image.png) == ["IHDR", "IDAT", "IEND"]
    assert Image.open(io.BytesIO(grey.png)).mode == "L"
    assert (grey.role, grey.window) == ("slice", "lung")


@pytest.mark.parametrize(
    ("kind", "own", "modality", "expected"),
    [
        ("spot", True, "CT", ["file"]),  # a spot image keeps its own window
        ("spot", False, "CT", ["lung", "mediastinum"]),
        ("spot", False, "MR", ["auto"]),  # HU presets never apply to MR
        ("spot", False, None, ["auto"]),  # nor to a spot image of unknown modality
        ("strip", True, "CT", ["lung", "mediastinum"]),  # the study asks; strips follow
        ("strip", True, "MR", ["file"]),
        ("strip", False, None, ["lung", "mediastinum"]),  # NIfTI: modality unknown
        ("strip", False, "MR", ["auto"]),
    ],
)
def test_resolve_windows(kind: str, own: bool, modality: str | None, expected: list[str]) -> None:
    defaults = ["lung", "mediastinum"]
    got = resolve_windows(
        [], kind=kind, has_file_window=own, modality=modality, default_windows=defaults
    )
    assert got == expected
    assert resolve_windows(
        ["bone"], kind=kind, has_file_window=own, modality=modality, default_windows=defaults
    ) == ["bone"]
