"""WCAG 2 contrast between two sRGB colours (https://www.w3.org/TR/WCAG21/#dfn-contrast-ratio).

Used to choose the charts' and the leaderboard's colours and, in the tests, to
check them against the background they are really drawn on.
"""

from __future__ import annotations

import re
from typing import Final

AA_TEXT: Final = 4.5  # normal text
AA_LARGE: Final = 3.0  # large text, lines, marks and other graphical objects
_NAMED: Final = {"black": "#000000", "white": "#ffffff"}


def rgb(colour: str) -> tuple[int, int, int]:
    """``#rrggbb``, ``#rgb``, ``rgb(r, g, b)``/``rgba(...)`` or black/white as integers."""
    text = _NAMED.get(colour.strip().lower(), colour.strip().lower())
    if m := re.fullmatch(r"#([0-9a-f]{6})", text):
        h = m.group(1)
        return int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16)
    if m := re.fullmatch(r"#([0-9a-f]{3})", text):
        r, g, b = (int(c * 2, 16) for c in m.group(1))
        return r, g, b
    if m := re.fullmatch(r"rgba?\(\s*(\d+),\s*(\d+),\s*(\d+)(?:,\s*[\d.]+)?\s*\)", text):
        r, g, b = (int(v) for v in m.groups())
        return r, g, b
    raise ValueError(f"not a colour this module reads: {colour!r}")


def _linear(channel: int) -> float:
    c = channel / 255
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def luminance(colour: str) -> float:
    r, g, b = (_linear(c) for c in rgb(colour))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: str, b: str) -> float:
    """From 1 (same) to 21 (black on white)."""
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)
