"""Colour as people with colour-vision deficiency see it, to check the charts' palettes.

Machado, Oliveira and Fernandes (2009), "A physiologically-based model for simulation of
color vision deficiency", IEEE TVCG 15(6): the matrices at severity 1.0 (dichromacy),
applied to linear RGB. Differences are CIE76 Delta E in CIELAB (D65).
"""

from __future__ import annotations

import math
from typing import Final

from reader_app.charts.contrast import rgb

MACHADO_2009: Final = {
    "protanopia": (
        (0.152286, 1.052583, -0.204868),
        (0.114503, 0.786281, 0.099216),
        (-0.003882, -0.048116, 1.051998),
    ),
    "deuteranopia": (
        (0.367322, 0.860646, -0.227968),
        (0.280085, 0.672501, 0.047413),
        (-0.011820, 0.042940, 0.968881),
    ),
    "tritanopia": (
        (1.255528, -0.076749, -0.178779),
        (-0.078411, 0.930809, 0.147602),
        (0.004733, 0.691367, 0.303900),
    ),
}


def _linear(c: float) -> float:
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def simulate(colour: str, deficiency: str | None) -> tuple[float, float, float]:
    """The colour's linear RGB (0-1) as seen with ``deficiency`` (None: normal vision)."""
    lin = [_linear(v / 255) for v in rgb(colour)]
    if deficiency is None:
        return lin[0], lin[1], lin[2]
    m = MACHADO_2009[deficiency]
    out = [min(max(sum(m[i][j] * lin[j] for j in range(3)), 0.0), 1.0) for i in range(3)]
    return out[0], out[1], out[2]


def _lab(lin: tuple[float, float, float]) -> tuple[float, float, float]:
    r, g, b = lin
    x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883

    def f(t: float) -> float:
        return t ** (1 / 3) if t > (6 / 29) ** 3 else t / (3 * (6 / 29) ** 2) + 4 / 29

    return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))


def delta_e(a: str, b: str, deficiency: str | None = None) -> float:
    """How far apart ``a`` and ``b`` look (CIE76), with ``deficiency`` simulated."""
    return math.dist(_lab(simulate(a, deficiency)), _lab(simulate(b, deficiency)))
