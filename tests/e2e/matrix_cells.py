"""The per-case matrix's canvas (reader_app/ui/static/matrix.js) as a person uses it:
the pointer over a cell's centre (where its glyph is drawn), the tooltip read, and a
cell's colour read off the pixels. The canvas says where its cells are (data-*)."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image
from playwright.sync_api import Locator, Page

TIP = ".rs-matrix-tip"


def canvas(page: Page) -> Locator:
    return page.locator(".st-key-pc_matrix canvas.rs-matrix-canvas")


def _grid(page: Page) -> dict[str, float]:
    data = canvas(page).evaluate("c => ({...c.dataset})")
    return {k: float(data[k]) for k in ("left", "gridTop", "cellW", "cellH", "rows", "cols")}


def cell_centre(page: Page, row: int, col: int) -> tuple[float, float]:
    """The page coordinates of cell (row, col)'s centre."""
    box = canvas(page).bounding_box()
    assert box is not None
    g = _grid(page)
    assert 0 <= row < g["rows"] and 0 <= col < g["cols"], (row, col, g)
    x = box["x"] + g["left"] + (col + 0.5) * g["cellW"]
    y = box["y"] + g["gridTop"] + (row + 0.5) * g["cellH"]
    return x, y


def hover(page: Page, row: int, col: int) -> dict[str, str]:
    """The pointer on cell (row, col)'s centre; what its tooltip says, key by key."""
    page.mouse.move(*cell_centre(page, row, col))
    tip = page.locator(TIP)
    tip.wait_for(state="visible")
    cells = tip.locator("tr").evaluate_all(
        "rs => rs.map(r => [r.cells[0].textContent, r.cells[1].textContent])"
    )
    return dict(cells)


def cell_colours(page: Page) -> np.ndarray:
    """Each cell's fill (rows x cols x RGB), read 2 px inside its top-left corner (clear
    of the glyph in its centre and of the 0.5 px border)."""
    g = _grid(page)
    shot = Image.open(io.BytesIO(canvas(page).screenshot())).convert("RGB")
    box = canvas(page).bounding_box()
    assert box is not None
    scale = shot.width / box["width"]  # the device pixel ratio
    pixels = np.asarray(shot)
    out = np.zeros((int(g["rows"]), int(g["cols"]), 3), dtype=int)
    for r in range(int(g["rows"])):
        for c in range(int(g["cols"])):
            x = (g["left"] + c * g["cellW"] + 2.5) * scale
            y = (g["gridTop"] + r * g["cellH"] + 2.5) * scale
            out[r, c] = pixels[int(y), int(x)]
    return out
