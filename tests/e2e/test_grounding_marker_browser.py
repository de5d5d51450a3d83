"""The reader's location step in real Chromium, on SQLite and PostgreSQL (issue 19).

A reader marks a point with real mouse clicks and key presses on a spot case and
on a strip slice, at fit (1x) and zoomed in with the view panned; the database
then holds the intended stored-image point within 1 px (and the slice). The
client point of an image point is computed here from the <img>'s box and the
image's STORED size (case_images.width/height), not from the viewer's own
transform, so a viewer whose "image pixels" were not stored pixels would fail.
"No focal finding", clearing (with grounding_required: an error, nothing
stored) and a reload (the draft marker comes back) are checked the same way.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect
from sqlalchemy import text
from sqlmodel import Session, col, select

from reader_app.charts.contrast import contrast
from reader_app.core.auth import sign_in_link
from reader_app.grounding.store import parse_location_json
from reader_app.models import Case, Reader, Response
from scoring.regions import Location
from tests.e2e.conftest import Server, artifact, served_on_database
from tests.e2e.exam_driver import (
    choose_likert,
    click_to_mark,
    diagnosis_box,
    expect_case,
    expect_focus,
    fill_answer,
    focus_click,
    focused_field,
    idk_box,
    is_strip,
    likert_choice,
    no_focal_box,
    open_exam,
    panel_case,
    progress,
    slice_number,
    step_slices,
    submit_button,
    type_diagnosis,
    viewer_ready,
    wait_next_screen,
)
from tests.factories import make_reader, make_study

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("grounding_marker_browser")]

SIZE = 256  # the phantom images' stored width and height (tests/factories.py)
PIN = ".rv-marker"


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def server(
    request: pytest.FixtureRequest, sqlite_template: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    with served_on_database(
        request, sqlite_template, tmp_path_factory, "grounding_marker"
    ) as served:
        yield served


@pytest.fixture
def db(server: Server) -> Iterator[Session]:
    with Session(server.engine, expire_on_commit=False) as s:
        yield s


def _start(server: Server, db: Session, page: Page, n_cases: int, **config: object) -> Reader:
    study = make_study(
        db,
        server.settings.asset_dir,
        slug="g" + uuid.uuid4().hex[:10],
        n_cases=n_cases,
        strip_every=2 if n_cases > 3 else 0,
        strip_slices=16,
        phantom=True,
        config={"grounding": True, **config},
    )
    invite = make_reader(db, study, ready=True)
    open_exam(page, sign_in_link(server.app.url, invite.token))
    return invite.reader


def _locations(db: Session, reader: Reader) -> dict[str, tuple[Location | None, bool]]:
    """Case public id -> the stored (point, no focal finding) of each of the reader's answers."""
    db.expire_all()
    rows = db.exec(
        select(Case.public_id, Response.location_json)
        .join(Case, col(Case.id) == Response.case_id)
        .where(Response.reader_id == reader.id)
    ).all()
    return {public_id: parse_location_json(text) for public_id, text in rows}


CLIENT_POINT = """([x, y, w, h]) => {
    const img = window.readerstudyViewer.image;
    const box = img.getBoundingClientRect();
    return {x: box.left + x * box.width / w, y: box.top + y * box.height / h};
}"""


def _client(page: Page, x: float, y: float) -> tuple[float, float]:
    """Where stored-image point (x, y) is on the screen, from the <img>'s box and stored size."""
    pt = page.evaluate(CLIENT_POINT, [x, y, SIZE, SIZE])
    return float(pt["x"]), float(pt["y"])


def _marker(page: Page) -> dict[str, float] | None:
    return page.evaluate("() => window.readerstudyViewer.marker()")  # type: ignore[no-any-return]


def _expect_marker(page: Page, x: float, y: float, slice_no: int | None = None) -> None:
    page.wait_for_function(
        """([x, y, s]) => { const m = window.readerstudyViewer.marker();
            return m && Math.abs(m.x - x) <= 1 && Math.abs(m.y - y) <= 1 && m.slice === s; }""",
        arg=[x, y, slice_no],
    )
    _pin_on(page, x, y)


def _pin_on(page: Page, x: float, y: float) -> None:
    """The drawn marker's centre is on the image point (within 1 image px) at this zoom."""
    expect(page.locator(PIN)).to_be_visible()
    box = page.locator(PIN).bounding_box()
    assert box is not None
    cx, cy = _client(page, x, y)
    scale = (
        page.evaluate("() => window.readerstudyViewer.image.getBoundingClientRect().width") / SIZE
    )  # CSS px per image px
    assert abs(box["x"] + box["width"] / 2 - cx) <= max(scale, 1)
    assert abs(box["y"] + box["height"] / 2 - cy) <= max(scale, 1)


def _click(page: Page, x: float, y: float) -> None:
    cx, cy = _client(page, x, y)
    stage = page.locator(".rv-stage").bounding_box()
    assert stage is not None
    assert stage["x"] < cx < stage["x"] + stage["width"], "the point is not in view"
    assert stage["y"] < cy < stage["y"] + stage["height"], "the point is not in view"
    click_to_mark(page, cx, cy)  # a focusing click first when the viewer lacks the focus


def _zoom_and_pan(page: Page) -> None:
    """Zoom in with the viewer's + button and pan with a mouse drag (which marks nothing)."""
    before = _marker(page)
    for _ in range(3):
        page.locator(".rv-tools button[data-act=zoom-in]").click()
    page.wait_for_function("() => window.readerstudyViewer.state().scale > 1.9")
    stage = page.locator(".rv-stage").bounding_box()
    assert stage is not None
    cx, cy = stage["x"] + stage["width"] / 2, stage["y"] + stage["height"] / 2
    pan = page.evaluate("() => window.readerstudyViewer.state().pan")
    page.mouse.move(cx, cy)
    page.mouse.down()
    page.mouse.move(cx + 50, cy + 30, steps=6)
    page.mouse.up()
    page.wait_for_function(
        "(p) => { const q = window.readerstudyViewer.state().pan; return q.x !== p.x; }", arg=pan
    )
    assert _marker(page) == before, "a drag placed or moved the marker"


def _submit(page: Page, diagnosis: str) -> str:
    """Answer and submit; return the submitted case's public id."""
    shown = str(page.evaluate("() => window.readerstudyViewer.caseId"))
    fill_answer(page, diagnosis, 3)
    before = progress(page)
    submit_button(page).click()
    wait_next_screen(page, before)
    return shown


def _near(stored: tuple[Location | None, bool], x: float, y: float, s: int | None) -> bool:
    point, nff = stored
    return (
        point is not None
        and not nff
        and point.slice == s
        and abs(point.x - x) <= 1
        and abs(point.y - y) <= 1
    )


def test_marks_on_spot_and_strip_slices_at_fit_and_zoomed_are_stored_within_one_pixel(
    server: Server, page: Page, db: Session
) -> None:
    page.set_viewport_size({"width": 1440, "height": 900})
    reader = _start(server, db, page, 4)
    expected: dict[str, tuple[float, float, int | None]] = {}
    seen = {"spot": 0, "strip": 0}
    for number in range(1, 5):
        expect_case(page, number, 4)
        viewer_ready(page)
        kind = "strip" if is_strip(page) else "spot"
        zoomed = seen[kind] == 1  # the first of each kind at fit, the second zoomed and panned
        seen[kind] += 1
        expect(page.locator(".rv-marktext")).to_contain_text("No marker")
        slice_no: int | None = None
        if kind == "strip":
            step_slices(page, 6 if zoomed else 3)  # the arrow keys, focus on the page
            slice_no = 7 if zoomed else 4
        if zoomed:
            _zoom_and_pan(page)
        x, y = (141.37, 97.61) if zoomed else (60.25, 201.5)
        _click(page, x, y)
        _expect_marker(page, x, y, slice_no)
        if kind == "strip":
            # the marker belongs to its slice: hidden on the next one, back on its own
            page.locator("[data-testid=stProgress]").first.click()
            page.keyboard.press("ArrowRight")
            expect(page.locator(PIN)).to_be_hidden()
            page.keyboard.press("ArrowLeft")
            _expect_marker(page, x, y, slice_no)
        if zoomed and kind == "spot":
            # the keyboard: Shift+arrows move the marker by 1 px; the plain arrows (slice
            # steps) leave it alone on a spot image
            keys = ["Shift+ArrowRight"] * 3 + ["Shift+ArrowUp"] + ["Shift+ArrowDown"] * 3
            for key in ["ArrowRight", "ArrowUp", *keys]:
                page.keyboard.press(key)
            m = _marker(page)
            assert m is not None
            assert (round(m["x"] - x, 2), round(m["y"] - y, 2)) == (3.0, 2.0), m  # 3-0, 3-1
            x, y = x + 3, y + 2
            _expect_marker(page, x, y, slice_no)
        if zoomed and kind == "strip":
            page.screenshot(path=str(artifact("grounding-marker-strip-zoomed-1440x900.png")))
        if kind == "spot" and not zoomed:
            page.screenshot(path=str(artifact("grounding-marker-spot-1440x900.png")))
        expected[_submit(page, f"{kind} {number}")] = (x, y, slice_no)
    expect(page.get_by_text("You have finished this exam")).to_be_visible()
    stored = _locations(db, reader)
    assert set(stored) == set(expected)
    for public_id, (x, y, s) in expected.items():
        assert _near(stored[public_id], x, y, s), (stored[public_id], (x, y, s))


def test_no_focal_finding_clearing_reload_and_the_keyboard(
    server: Server, page: Page, db: Session
) -> None:
    page.set_viewport_size({"width": 1024, "height": 768})
    reader = _start(server, db, page, 3)

    # case 1: mark, clear, submit -> refused, nothing stored; then "No focal finding"
    expect_case(page, 1, 3)
    viewer_ready(page)
    _click(page, 100.5, 80.25)
    _expect_marker(page, 100.5, 80.25)
    page.locator(".rv-marking button[data-act=clear-marker]").click()
    expect(page.locator(PIN)).to_be_hidden()
    assert _marker(page) is None
    fill_answer(page, "Clear then submit", 2)
    submit_button(page).click()
    expect(page.get_by_text("Mark the finding on the image")).to_be_visible()
    expect_case(page, 1, 3)
    assert _locations(db, reader) == {}
    page.screenshot(path=str(artifact("grounding-marker-missing-1024x768.png")))
    # a marker answers the error, which goes; cleared again, the error is back
    _click(page, 40.0, 60.0)
    expect(page.get_by_text("Mark the finding on the image")).to_be_hidden()
    page.screenshot(path=str(artifact("grounding-marker-placed-1024x768.png")))
    page.locator(".rv-marking button[data-act=clear-marker]").click()
    expect(page.get_by_text("Mark the finding on the image")).to_be_visible()
    assert _locations(db, reader) == {}
    no_focal_box(page).click()
    expect(page.get_by_text("Mark the finding on the image")).to_be_hidden()  # ticked: moot
    first = str(page.evaluate("() => window.readerstudyViewer.caseId"))
    before = progress(page)
    submit_button(page).click()
    wait_next_screen(page, before)
    assert _locations(db, reader) == {first: (None, True)}

    # case 2: the draft marker survives a reload, and is what is stored
    expect_case(page, 2, 3)
    viewer_ready(page)
    expect(no_focal_box(page)).not_to_be_checked()
    _click(page, 30.75, 222.0)
    _expect_marker(page, 30.75, 222.0)
    fill_answer(page, "Reloaded", 1)
    page.reload()
    expect_case(page, 2, 3, timeout=30_000)
    viewer_ready(page)
    _expect_marker(page, 30.75, 222.0)  # put back from the tab's draft
    expect(diagnosis_box(page)).to_have_value("Reloaded")
    page.screenshot(path=str(artifact("grounding-marker-reloaded-1024x768.png")))
    second = _submit(page, "Reloaded")
    assert _near(_locations(db, reader)[second], 30.75, 222.0, None)

    # case 3: the marker's own keys: Enter on the focused image places nothing; M (the
    # pointer off the image) places it at the centre of the view, Delete clears it, M
    # with the pointer over the image places it there, Shift+arrows move it by 1 px
    expect_case(page, 3, 3)
    viewer_ready(page)
    page.mouse.move(1, 1)  # off the viewer
    page.locator(".rv-stage").focus()
    page.keyboard.press("Enter")
    assert _marker(page) is None
    page.keyboard.press("m")
    page.wait_for_function("() => window.readerstudyViewer.marker() !== null")
    centre = _marker(page)
    assert centre is not None
    assert abs(centre["x"] - SIZE / 2) <= 1 and abs(centre["y"] - SIZE / 2) <= 1, centre
    page.keyboard.press("Delete")
    page.wait_for_function("() => window.readerstudyViewer.marker() === null")
    page.mouse.move(*_client(page, 70.0, 190.0))
    page.keyboard.press("M")
    _expect_marker(page, 70.0, 190.0)
    page.keyboard.press("Shift+ArrowLeft")
    page.keyboard.press("Shift+ArrowLeft")
    page.keyboard.press("Shift+ArrowUp")
    x, y = 70.0 - 2, 190.0 - 1
    _expect_marker(page, x, y)
    expect(page.locator(".rv-marktext")).to_contain_text(f"x {round(x)}, y {round(y)}")
    third = _submit(page, "Keyboard")
    expect(page.get_by_text("You have finished this exam")).to_be_visible()
    stored = _locations(db, reader)
    assert _near(stored[third], x, y, None), stored[third]
    assert len(stored) == 3


def _slice_shown(page: Page, number: int) -> None:
    """The strip shows slice ``number`` (its label on the image, and the viewer's state)."""
    expect(page.locator(".rv-label")).to_contain_text(f"{number}/16")
    assert slice_number(page) == number


def test_keys_that_mean_one_thing_on_a_strip_and_a_reload_keeps_the_slice(
    server: Server, page: Page, db: Session
) -> None:
    """Issue 38: on a grounding strip, the click that gives the viewer the focus places no
    marker; the arrow keys step slices before and after a marker is placed (never moving
    it); a reload comes back to the slice on screen (not slice 1, not the marker's); the
    stored location is the one the screen showed."""
    page.set_viewport_size({"width": 1440, "height": 900})
    study = make_study(
        db,
        server.settings.asset_dir,
        slug="k" + uuid.uuid4().hex[:10],
        n_cases=1,
        strip_every=1,
        strip_slices=16,
        phantom=True,
        config={"grounding": True},
    )
    invite = make_reader(db, study, ready=True)
    open_exam(page, sign_in_link(server.app.url, invite.token))
    expect_case(page, 1, 1)
    viewer_ready(page)
    assert is_strip(page)
    expect_focus(page, "diagnosis")  # a case opens with the focus in its first field
    _slice_shown(page, 1)

    # the first click on the image only focuses the viewer: no marker, and the line says so
    focus_click(page, *_client(page, 60.0, 70.0))
    assert _marker(page) is None
    expect(page.locator(PIN)).to_be_hidden()
    # the arrows step slices (the focus is on the image now)
    for n in range(2, 9):
        page.keyboard.press("ArrowRight")
        _slice_shown(page, n)
    assert _marker(page) is None, "an arrow key placed a marker"
    # the next click marks, on slice 8
    _click(page, 100.5, 120.25)
    _expect_marker(page, 100.5, 120.25, 8)
    m = _marker(page)
    assert m is not None and m["slice"] == 8
    # with a marker placed, the arrows still step slices and leave the marker alone
    for n, key in [(9, "ArrowRight"), (10, "ArrowDown"), (11, "ArrowRight"), (10, "ArrowLeft")]:
        page.keyboard.press(key)
        _slice_shown(page, n)
    expect(page.locator(PIN)).to_be_hidden()  # the marker shows on its slice only
    assert _marker(page) == m
    # Shift+arrows move the marker only on its own slice: here they say where it is
    page.keyboard.press("Shift+ArrowRight")
    expect(page.locator(".rv-marktext")).to_contain_text("The marker is on slice 8")
    assert _marker(page) == m
    fill_answer(page, "Strip keys", 2)

    # a reload comes back to slice 10, the slice on screen (not 1, not the marker's 8)
    page.reload()
    expect_case(page, 1, 1, timeout=30_000)
    viewer_ready(page)
    _slice_shown(page, 10)
    expect(diagnosis_box(page)).to_have_value("Strip keys")
    assert _marker(page) == m  # the draft's marker, on its slice
    expect(page.locator(PIN)).to_be_hidden()
    # after the reload the focus is outside the viewer again: a click only focuses, and
    # moves nothing, even with a marker placed
    focus_click(page, *_client(page, 200.0, 30.0))
    assert _marker(page) == m
    page.keyboard.press("ArrowLeft")
    _slice_shown(page, 9)
    page.keyboard.press("ArrowUp")
    _slice_shown(page, 8)
    _expect_marker(page, m["x"], m["y"], 8)
    page.keyboard.press("Shift+ArrowRight")
    page.keyboard.press("Shift+ArrowRight")
    page.keyboard.press("Shift+ArrowDown")
    x, y = m["x"] + 2, m["y"] + 1  # two steps right, one down, one image pixel each
    _expect_marker(page, x, y, 8)
    shown = _on_screen_marker(page)
    case = panel_case(page)
    before = progress(page)
    submit_button(page).click()
    wait_next_screen(page, before)
    expect(page.get_by_text("You have finished this exam")).to_be_visible()
    point, nff = _locations(db, invite.reader)[case]
    assert point is not None and not nff and point.slice == 8, point
    assert abs(point.x - x) <= 0.01 and abs(point.y - y) <= 0.01, (point, x, y)
    # the screen showed the same point (the pin's centre, within a pixel)
    assert abs(point.x - shown[0]) <= 1 and abs(point.y - shown[1]) <= 1, (point, shown)


FOCUS_RING = """() => {
    let el = document.activeElement;
    while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
    const up = (e) => e.parentElement
        || (e.getRootNode() instanceof ShadowRoot ? e.getRootNode().host : null);
    let ground = getComputedStyle(document.body).backgroundColor;
    for (let e = up(el); e; e = up(e)) {
        const c = getComputedStyle(e).backgroundColor;
        const m = c.match(/rgba?\\(([^)]+)\\)/);
        const parts = m ? m[1].split(",").map(Number) : [];
        if (m && (parts.length < 4 || parts[3] >= 0.99)) { ground = c; break; }
    }
    const s = getComputedStyle(el);
    return {style: s.outlineStyle, width: parseFloat(s.outlineWidth), colour: s.outlineColor,
            ground};
}"""


def _ring_is_visible(page: Page, field: str) -> None:
    """The focused field draws a solid ring at least 2 px wide, at 3:1 or more against the
    background it is drawn on (WCAG 1.4.11, non-text contrast)."""
    ring = page.evaluate(FOCUS_RING)
    assert ring["style"] == "solid" and ring["width"] >= 2, (field, ring)
    ratio = contrast(ring["colour"], ring["ground"])
    assert ratio >= 3.0, f"{field}: ring {ring['colour']} on {ring['ground']} = {ratio:.2f}:1"


def test_the_keyboard_walks_the_location_form_in_order_with_a_visible_ring(
    server: Server, page: Page, db: Session
) -> None:
    """Issue 25: on each new case the first field has the focus; Tab goes diagnosis ->
    confidence -> I don't know -> No focal finding -> Submit, each with a visible ring;
    an answer given with the keyboard alone is stored as the page showed it."""
    page.set_viewport_size({"width": 1024, "height": 768})
    reader = _start(server, db, page, 2)
    for number in (1, 2):
        expect_case(page, number, 2)
        viewer_ready(page)
        case = panel_case(page)
        expect_focus(page, "diagnosis")
        _ring_is_visible(page, "diagnosis")
        page.keyboard.type(f"Keyboard walk {number}")
        order = []
        for _ in range(4):
            page.keyboard.press("Tab")
            field = focused_field(page)
            assert field is not None
            _ring_is_visible(page, field)
            order.append(field)
            if field == "likert":
                page.keyboard.press("ArrowRight")  # the first choice, then the next: 1
            if field == "no_focal_finding":
                page.keyboard.press(" ")
        assert order == ["likert", "idk", "no_focal_finding", "submit"], order
        expect(likert_choice(page, 1)).to_be_checked()
        expect(no_focal_box(page)).to_be_checked()
        expect(idk_box(page)).not_to_be_checked()
        before = progress(page)
        page.keyboard.press("Enter")
        wait_next_screen(page, before)
        row = _stored_rows(db, reader)[case]
        assert (row.diagnosis, row.likert, row.idk) == (f"Keyboard walk {number}", 1, False)
        assert parse_location_json(row.location_json) == (None, True)
    expect(page.get_by_text("You have finished this exam")).to_be_visible()


def test_an_optional_location_may_be_left_out(server: Server, page: Page, db: Session) -> None:
    reader = _start(server, db, page, 1, grounding_required=False)
    expect_case(page, 1, 1)
    viewer_ready(page)
    expect(page.get_by_text("(optional)")).to_be_visible()
    shown = _submit(page, "No marker needed")
    assert _locations(db, reader) == {shown: (None, False)}


def _stored_rows(db: Session, reader: Reader) -> dict[str, Response]:
    db.expire_all()
    rows = db.exec(
        select(Case.public_id, Response)
        .join(Case, col(Case.id) == Response.case_id)
        .where(Response.reader_id == reader.id)
    ).all()
    return {public_id: row for public_id, row in rows}


def _on_screen_marker(page: Page) -> tuple[float, float]:
    """The marker where the screen shows it: the pin's centre, mapped back to stored-image
    pixels from the <img>'s box and the stored size (not from the viewer's own state)."""
    box = page.locator(PIN).bounding_box()
    img = page.evaluate(
        "() => { const b = window.readerstudyViewer.image.getBoundingClientRect();"
        " return {x: b.left, y: b.top, w: b.width, h: b.height}; }"
    )
    assert box is not None
    cx, cy = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    return (cx - img["x"]) * SIZE / img["w"], (cy - img["y"]) * SIZE / img["h"]


def _check_stored(db: Session, reader: Reader, case: str, at: tuple[float, float]) -> None:
    row = _stored_rows(db, reader)[case]
    point, nff = parse_location_json(row.location_json)
    assert point is not None and not nff, row.location_json
    assert abs(point.x - at[0]) <= 1 and abs(point.y - at[1]) <= 1, (point, at)
    record = json.loads(row.interaction_json or "null")
    assert record is not None, "no viewer record stored"
    assert record["zoom_used"] is True and record["max_zoom"] == 1.25, record


STEADY = """() => {
    const b = window.readerstudyViewer.image.getBoundingClientRect();
    const key = [b.left, b.top, b.width, b.height].map(Math.round).join();
    const now = performance.now();
    if (window.__rsBox !== key) { window.__rsBox = key; window.__rsSince = now; return false; }
    return now - window.__rsSince > 450;
}"""


def _steady(page: Page) -> None:
    """Wait until the image has stayed put for a moment (the viewer lays itself out again
    as the page around it settles): a click aimed from its box then lands there."""
    page.wait_for_function(STEADY, polling=100)


def _focus_submit(page: Page) -> None:
    submit_button(page).focus()
    expect(submit_button(page)).to_be_focused()


# Each gesture gets the case ready (marker, zoom, fields) and submits; returns nothing.
def _by_click(page: Page) -> None:
    submit_button(page).click()


def _by_enter_on_button(page: Page) -> None:
    _focus_submit(page)
    page.keyboard.press("Enter")


def _by_space_on_button(page: Page) -> None:
    _focus_submit(page)
    page.keyboard.press(" ")


def _by_enter_in_the_box(page: Page) -> None:
    diagnosis_box(page).click()
    page.keyboard.press("End")
    page.keyboard.press("Enter")


def _by_ctrl_enter(page: Page) -> None:
    page.locator(".rv-stage").focus()  # anywhere on the page: here the image
    page.keyboard.press("Control+Enter")


SUBMIT_GESTURES = [
    _by_click,
    _by_enter_on_button,
    _by_space_on_button,
    _by_enter_in_the_box,
    _by_ctrl_enter,
]


def _spot_study(server: Server, db: Session, n: int) -> tuple[Reader, str]:
    study = make_study(
        db,
        server.settings.asset_dir,
        slug="m" + uuid.uuid4().hex[:10],
        n_cases=n,
        phantom=True,
        config={"grounding": True},
    )
    invite = make_reader(db, study, ready=True)
    return invite.reader, sign_in_link(server.app.url, invite.token)


def test_the_marker_and_viewer_record_are_stored_whatever_the_submit_gesture(
    server: Server, page: Page, db: Session
) -> None:
    """Issue 25: click, Enter and Space on the focused button, Enter in the box,
    Ctrl+Enter, and a refused submit followed by a moved marker and a keyboard submit.
    After each, the stored location is the marker on screen (within a pixel) and the
    viewer record is stored."""
    n = len(SUBMIT_GESTURES) + 1
    reader, link = _spot_study(server, db, n)
    open_exam(page, link)
    for number, gesture in enumerate(SUBMIT_GESTURES, start=1):
        expect_case(page, number, n)
        viewer_ready(page)
        case = panel_case(page)
        page.locator(".rv-tools button[data-act=zoom-in]").click()  # the record: x1.25
        x, y = 40.0 + 20 * number, 70.5 + 11 * number
        _steady(page)
        _click(page, x, y)
        _expect_marker(page, x, y)
        type_diagnosis(page, f"Gesture {gesture.__name__}")
        choose_likert(page, number % 5)
        shown = _on_screen_marker(page)
        assert _stored_rows(db, reader) == {} or case not in _stored_rows(db, reader)
        before = progress(page)
        gesture(page)
        wait_next_screen(page, before)
        _check_stored(db, reader, case, shown)
        assert len(_stored_rows(db, reader)) == number, gesture.__name__

    # refused (no confidence), the marker moved, then a keyboard submit: the new marker
    expect_case(page, n, n)
    viewer_ready(page)
    case = panel_case(page)
    page.locator(".rv-tools button[data-act=zoom-in]").click()
    _steady(page)
    _click(page, 50.0, 50.0)
    _expect_marker(page, 50.0, 50.0)
    type_diagnosis(page, "Refused first")
    submit_button(page).click()
    expect(page.get_by_text("Choose your confidence")).to_be_visible()
    assert case not in _stored_rows(db, reader)
    _click(page, 180.25, 150.75)  # moved
    _expect_marker(page, 180.25, 150.75)
    choose_likert(page, 2)
    shown = _on_screen_marker(page)
    before = progress(page)
    _by_enter_on_button(page)
    wait_next_screen(page, before)
    _check_stored(db, reader, case, shown)
    assert abs(shown[0] - 180.25) <= 1 and abs(shown[1] - 150.75) <= 1
    expect(page.get_by_text("You have finished this exam")).to_be_visible()


def test_a_touch_tap_stores_the_marker_and_the_viewer_record(
    server: Server, browser: Browser, db: Session
) -> None:
    """Chromium touch emulation: the marker is placed and the answer submitted by taps."""
    reader, link = _spot_study(server, db, 1)
    context = browser.new_context(viewport={"width": 1024, "height": 768}, has_touch=True)
    try:
        page = context.new_page()
        page.set_default_timeout(20_000)
        open_exam(page, link)
        viewer_ready(page)
        case = panel_case(page)
        page.locator(".rv-tools button[data-act=zoom-in]").tap()
        _steady(page)
        cx, cy = _client(page, 120.0, 90.0)
        page.touchscreen.tap(cx, cy)
        _expect_marker(page, 120.0, 90.0)
        type_diagnosis(page, "Tapped")
        likert_choice(page, 3).tap()
        shown = _on_screen_marker(page)
        before = progress(page)
        submit_button(page).tap()
        wait_next_screen(page, before)
        _check_stored(db, reader, case, shown)
    finally:
        context.close()


DRAFT_ROW = """select d.diagnosis, d.likert, d.marker_json, d.interaction_json from exam_drafts d
    join cases c on c.id = d.case_id where d.reader_id = :reader and c.public_id = :case"""


def _draft_row(db: Session, reader: Reader, case: str) -> tuple[object, ...] | None:
    db.expire_all()
    db.rollback()  # a fresh snapshot: the server writes between our reads
    row = db.execute(text(DRAFT_ROW), {"reader": reader.id, "case": case}).first()
    return None if row is None else tuple(row)


def _wait_draft(
    db: Session, reader: Reader, case: str, diagnosis: str, likert: int | None
) -> tuple[object, ...]:
    """The server's draft row once it holds ``diagnosis`` and ``likert`` (the panel reports
    about a second after the last change)."""
    deadline = time.monotonic() + 15
    row = None
    while time.monotonic() < deadline:
        row = _draft_row(db, reader, case)
        if row is not None and row[0] == diagnosis and row[1] == likert:
            return row
        time.sleep(0.2)
    raise AssertionError(f"the server's draft is {row}, not {(diagnosis, likert)}")


def test_a_draft_follows_the_reader_to_another_browser_and_across_a_server_restart(
    server: Server, browser: Browser, db: Session
) -> None:
    """Issue 25, drafts kept by the server. In browser context A the reader zooms, picks the
    bone window, places a marker, types a diagnosis (the panel's reports do not take the
    focus: typing goes on after one) and a confidence, and closes A without submitting.
    A NEW context B, signed in as the same reader, shows the same text, confidence and
    marker, and the draft row holds them. The served app is stopped and started again on
    the same database: after a reload the draft is back. Typed and reloaded at once, the
    tab's newer copy is shown and reaches the server. Submitting in B stores what B showed,
    the viewer record continued from A (bone window, the zoom), and the draft row is gone."""
    study = make_study(
        db,
        server.settings.asset_dir,
        slug="d" + uuid.uuid4().hex[:10],
        n_cases=2,
        phantom=True,
        windows=("lung", "bone"),
        config={"grounding": True},
    )
    invite = make_reader(db, study, ready=True)
    reader, link = invite.reader, sign_in_link(server.app.url, invite.token)

    a = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = a.new_page()
    page.set_default_timeout(20_000)
    open_exam(page, link)
    viewer_ready(page)
    case = panel_case(page)
    page.locator(".rv-presets button").filter(has_text="Bone").click()
    for _ in range(3):
        page.locator(".rv-tools button[data-act=zoom-in]").click()
    page.wait_for_function("() => window.readerstudyViewer.state().scale > 1.9")
    page.locator(".rv-tools button[data-act=fit]").click()  # the marker's point in view
    _steady(page)
    _click(page, 101.0, 77.0)
    _expect_marker(page, 101.0, 77.0)
    type_diagnosis(page, "Left apical")
    _wait_draft(db, reader, case, "Left apical", None)  # reported once typing paused
    page.keyboard.type(" pneumothorax")  # the focus stayed in the box through that run
    choose_likert(page, 3)
    row = _wait_draft(db, reader, case, "Left apical pneumothorax", 3)
    marker = json.loads(str(row[2]))
    assert abs(marker["x"] - 101.0) <= 1 and abs(marker["y"] - 77.0) <= 1, marker
    assert _stored_rows(db, reader) == {}
    a.close()  # without submitting

    b = browser.new_context(viewport={"width": 1024, "height": 768})
    try:
        page = b.new_page()
        page.set_default_timeout(20_000)
        for step in ("another browser", "a server restart"):
            if step == "a server restart":
                server.owner.restart()  # the fixture stops the new process at its end
            open_exam(page, link)
            viewer_ready(page)
            assert panel_case(page) == case, step
            expect(diagnosis_box(page)).to_have_value("Left apical pneumothorax")
            expect(likert_choice(page, 3)).to_be_checked()
            _expect_marker(page, 101.0, 77.0)
            row = _draft_row(db, reader, case)
            assert row is not None and row[:2] == ("Left apical pneumothorax", 3), (step, row)
        # typed and reloaded at once (before the report): the tab's copy is the newer and
        # is shown, and the server catches up without another change
        type_diagnosis(page, "Left apical pneumothorax, small")
        page.reload()
        open_exam(page, page.url)
        viewer_ready(page)
        expect(diagnosis_box(page)).to_have_value("Left apical pneumothorax, small")
        _wait_draft(db, reader, case, "Left apical pneumothorax, small", 3)
        _expect_marker(page, 101.0, 77.0)
        shown = _on_screen_marker(page)
        before = progress(page)
        submit_button(page).click()
        wait_next_screen(page, before)
    finally:
        b.close()
    stored = _stored_rows(db, reader)[case]
    assert (stored.diagnosis, stored.likert, stored.idk) == (
        "Left apical pneumothorax, small",
        3,
        False,
    )
    point, nff = parse_location_json(stored.location_json)
    assert point is not None and not nff
    assert abs(point.x - shown[0]) <= 1 and abs(point.y - shown[1]) <= 1, (point, shown)
    record = json.loads(stored.interaction_json or "null")
    assert record["windows_used"][:2] == ["lung", "bone"], record
    assert record["zoom_used"] is True and record["max_zoom"] == 1.95, record
    assert _draft_row(db, reader, case) is None
