"""Grounding in real Chromium, on SQLite and PostgreSQL: the leaderboard's G/GA/U
columns, the accuracy-against-grounding chart and the per-case thumbnail.

The study is tests/reader_app/analysis/grounding_scenario.py (regions and
locations written row by row). The thumbnail the page serves is compared pixel
for pixel with what the service draws from the database. Screenshots at
1440x900 and 1024x768 go to test-artifacts/.
"""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image
from playwright.sync_api import Page, expect
from sqlmodel import Session

from reader_app.analysis.case_grounding import case_grounding, thumbnails
from reader_app.core.settings import Settings
from reader_app.study.assets import load_asset
from tests.e2e.conftest import ServedApp, artifact
from tests.e2e.exam_driver import submit_button
from tests.factories import make_reader
from tests.reader_app.analysis.grounding_scenario import grounded_study

pytestmark = pytest.mark.browser

SIZES = ((1440, 900), (1024, 768))


def _pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


def test_analyst_sees_grounding_columns_chart_and_thumbnail(
    served: ServedApp, page: Page, session: Session, settings: Settings, db_url: str
) -> None:
    db = "pg" if db_url.startswith("postgres") else "sqlite"
    study = grounded_study(session, settings)
    token = make_reader(session, study, code="AN1", role="analyst").token
    reader = make_reader(session, study, code="R09", ready=True).token

    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(f"{served.url}/?token={token}")
    table = page.locator(".st-key-lb_table")
    expect(table).to_contain_text("GA", timeout=30_000)
    for head in ("G", "GA", "U"):
        expect(table.locator("th", has_text=head).first).to_be_visible()
    # R01's G over the 4 grounded cases: hits 1,1,0,1 -> 0.750
    expect(table.locator('tr[data-name="R01"]')).to_contain_text("0.750")
    for w, h in SIZES:
        page.set_viewport_size({"width": w, "height": h})
        table.scroll_into_view_if_needed()
        page.screenshot(path=str(artifact(f"grounding-leaderboard-{db}-{w}x{h}.png")))
    page.set_viewport_size({"width": 1440, "height": 900})

    page.goto(f"{served.url}/charts?token={token}")
    tab = page.get_by_role("tab", name="Accuracy against grounding")  # a study with regions
    tab.click()
    expect(tab).to_have_attribute("aria-selected", "true", timeout=30_000)
    chart = page.locator(".st-key-ch_grounding").get_by_test_id("stVegaLiteChart")
    expect(chart.locator("canvas, svg").first).to_be_visible(timeout=30_000)
    expect(page.locator(".st-key-ch_grounding_png button")).to_be_visible()
    for w, h in SIZES:
        page.set_viewport_size({"width": w, "height": h})
        page.locator(".st-key-ch_grounding").scroll_into_view_if_needed()
        page.screenshot(path=str(artifact(f"grounding-chart-{db}-{w}x{h}.png")))

    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(f"{served.url}/per-case?token={token}")
    tab = page.get_by_role("tab", name="Where responders looked")
    tab.click()
    expect(tab).to_have_attribute("aria-selected", "true", timeout=30_000)
    images = page.locator(".st-key-pc_ground_images")
    expect(images.locator("img").first).to_be_visible(timeout=30_000)
    expect(images).to_contain_text("image · 3 marker(s)")
    # pick the strip by keyboard: its slice 3 carries the box, R01's marker is on it
    box = page.locator(".st-key-pc_ground_case input")
    box.click()
    page.keyboard.type("case-004")
    page.keyboard.press("Enter")
    expect(images).to_contain_text("slice 3 · 1 marker(s)", timeout=30_000)
    img = images.locator("img").first
    expect(img).to_be_visible()
    page.wait_for_function(
        "el => el.complete && el.naturalWidth > 0", arg=img.element_handle(), timeout=20_000
    )
    served_png = page.request.get(str(img.get_attribute("src"))).body()
    view = case_grounding(session=session, study=study, source_id="case-004")
    assert view is not None
    [expected] = thumbnails(view, lambda sha: load_asset(settings.asset_dir, sha))
    got, want = _pixels(served_png), _pixels(expected.png)
    assert got.shape == want.shape, (got.shape, want.shape)
    diff = np.argwhere((got != want).any(axis=2))
    assert not len(diff), (len(diff), diff[:5].tolist(), got[tuple(diff[0])], want[tuple(diff[0])])
    for w, h in SIZES:
        page.set_viewport_size({"width": w, "height": h})
        images.scroll_into_view_if_needed()
        page.screenshot(path=str(artifact(f"grounding-thumbnail-{db}-{w}x{h}.png")))

    # a reader at the same URL gets the exam, never the region
    page.goto(f"{served.url}/per-case?token={reader}")
    expect(submit_button(page)).to_be_visible(timeout=30_000)
    assert page.locator(".st-key-pc_ground_images").count() == 0
    assert "Where responders looked" not in page.content()
