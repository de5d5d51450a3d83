"""Shared workstations (issue 38), in real Chromium on SQLite and PostgreSQL.

Reader A works in one tab of a grounding study: a marker then "No focal finding" on
the first case, the tick then a marker on the second (the screen never shows both;
the database is checked against the screen after each submit), a thumbnail click, a
typed-but-unsent draft with a marker on the last case; A signs out. Then reader B
opens B's own link in the SAME tab (A's tab copies put back first, as a tab that was
never signed out would hold them): every case B reaches opens empty, and B's stored
rows hold only what B did (B's text, no thumbnail click, B's own active time). B signs
out; A opens A's link again: A's draft comes back, from the server alone (the tab kept
nothing).
"""

from __future__ import annotations

import itertools
import json
import re
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Locator, Page, expect
from sqlalchemy import text
from sqlmodel import Session, col, select

from reader_app.core.auth import sign_in_link
from reader_app.grounding.store import parse_location_json
from reader_app.models import Case, Reader, Response
from tests.e2e.conftest import Server, served_on_database
from tests.e2e.exam_driver import (
    choose_likert,
    click_to_mark,
    diagnosis_box,
    expect_case,
    is_strip,
    likert_choice,
    no_focal_box,
    open_exam,
    panel_case,
    progress,
    submit_button,
    type_diagnosis,
    viewer_ready,
    wait_next_screen,
)
from tests.factories import make_reader, make_study

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("shared_workstation_browser")]

SIZE = 256  # the phantom images' stored width and height (tests/factories.py)
N = 3


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def server(
    request: pytest.FixtureRequest, sqlite_template: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    with served_on_database(request, sqlite_template, tmp_path_factory, "shared_ws") as served:
        yield served


@pytest.fixture
def db(server: Server) -> Iterator[Session]:
    with Session(server.engine, expire_on_commit=False) as s:
        yield s


STORAGE = """() => Object.fromEntries(Object.keys(sessionStorage)
    .filter((k) => k.startsWith("rs.")).map((k) => [k, sessionStorage.getItem(k)]))"""


def _storage(page: Page) -> dict[str, str]:
    return dict(page.evaluate(STORAGE))


def _click_image(page: Page, x: float, y: float) -> None:
    """Real clicks on stored-image point (x, y) (from the <img>'s box and stored size): the
    one that gives the viewer the focus when it lacks it, then the one that marks."""
    pt = page.evaluate(
        """([x, y, s]) => { const b = window.readerstudyViewer.image.getBoundingClientRect();
            return {x: b.left + x * b.width / s, y: b.top + y * b.height / s}; }""",
        [x, y, SIZE],
    )
    click_to_mark(page, pt["x"], pt["y"])


def _marker(page: Page) -> dict[str, float] | None:
    return page.evaluate("() => window.readerstudyViewer.marker()")  # type: ignore[no-any-return]


def _rows(db: Session, reader: Reader) -> dict[str, Response]:
    db.expire_all()
    db.rollback()
    rows = db.exec(
        select(Case.public_id, Response)
        .join(Case, col(Case.id) == Response.case_id)
        .where(Response.reader_id == reader.id)
    ).all()
    return {public_id: row for public_id, row in rows}


def _draft(db: Session, reader: Reader, case: str) -> tuple[object, ...] | None:
    db.expire_all()
    db.rollback()
    row = db.execute(
        text(
            "select d.diagnosis, d.likert, d.marker_json from exam_drafts d join cases c"
            " on c.id = d.case_id where d.reader_id = :r and c.public_id = :c"
        ),
        {"r": reader.id, "c": case},
    ).first()
    return None if row is None else tuple(row)


def _wait_draft(db: Session, reader: Reader, case: str, diagnosis: str) -> tuple[object, ...]:
    deadline = time.monotonic() + 15
    row = None
    while time.monotonic() < deadline:
        row = _draft(db, reader, case)
        if row is not None and row[0] == diagnosis:
            return row
        time.sleep(0.2)
    raise AssertionError(f"the server's draft is {row}, not {diagnosis!r}")


def _submit(page: Page) -> str:
    shown = panel_case(page)
    before = progress(page)
    submit_button(page).click()
    wait_next_screen(page, before)
    return shown


def _expect_empty(page: Page) -> None:
    """The case opens with nothing of anyone's: no text, confidence, tick or marker."""
    expect(diagnosis_box(page)).to_have_value("")
    for n in range(5):
        expect(likert_choice(page, n)).not_to_be_checked()
    expect(no_focal_box(page)).not_to_be_checked()
    assert _marker(page) is None
    expect(page.locator(".rv-marktext")).to_contain_text("No marker")


def _sign_out(page: Page) -> None:
    if page.locator(".st-key-sign_out button").count() == 0:
        page.locator(".st-key-pause button").click()
    page.locator(".st-key-sign_out button").click()
    expect(page.get_by_text("You are signed out")).to_be_visible()
    # the sign-in page's element clears the tab (it mounts just after the page's text)
    page.wait_for_function(
        "() => !Object.keys(sessionStorage).some((k) => k.startsWith('rs.'))", timeout=10_000
    )


def test_one_tab_two_readers_nothing_of_a_reaches_b_and_a_draft_comes_back(
    server: Server, page: Page, db: Session
) -> None:
    page.set_viewport_size({"width": 1440, "height": 900})
    study = make_study(
        db,
        server.settings.asset_dir,
        slug="w" + uuid.uuid4().hex[:10],
        n_cases=N,
        strip_every=2,
        strip_slices=6,
        phantom=True,
        config={"grounding": True},
    )
    a = make_reader(db, study, "R-A", ready=True)
    b = make_reader(db, study, "R-B", ready=True)
    link_a = sign_in_link(server.app.url, a.token)

    # --- reader A ----------------------------------------------------------------
    open_exam(page, link_a)
    # case 1: a marker, then "No focal finding": the tick clears the marker, and says so
    expect_case(page, 1, N)
    viewer_ready(page)
    _click_image(page, 60.0, 70.0)
    page.wait_for_function("() => window.readerstudyViewer.marker() !== null")
    no_focal_box(page).click()
    expect(page.get_by_text("Marker cleared: No focal finding is ticked.")).to_be_visible()
    assert _marker(page) is None
    expect(page.locator(".rv-marker")).to_be_hidden()
    type_diagnosis(page, "A first")
    choose_likert(page, 4)
    first = _submit(page)
    assert parse_location_json(_rows(db, a.reader)[first].location_json) == (None, True)
    # case 2: the tick is not carried over; ticked, then a marker: the marker unticks it
    expect_case(page, 2, N)
    viewer_ready(page)
    expect(no_focal_box(page)).not_to_be_checked()
    no_focal_box(page).click()
    expect(no_focal_box(page)).to_be_checked()
    _click_image(page, 100.0, 120.0)
    expect(no_focal_box(page)).not_to_be_checked()
    expect(page.get_by_text("No focal finding unticked: a marker is placed.")).to_be_visible()
    type_diagnosis(page, "A second")
    choose_likert(page, 3)
    marker = _marker(page)
    assert marker is not None
    second = _submit(page)
    point, nff = parse_location_json(_rows(db, a.reader)[second].location_json)
    assert not nff and point is not None
    assert (round(point.x, 2), round(point.y, 2)) == (marker["x"], marker["y"])
    # case 3: a thumbnail click on a strip, a marker, typed and not sent; A dwells on it
    expect_case(page, 3, N)
    viewer_ready(page)
    last = panel_case(page)
    if is_strip(page):
        page.locator(".rv-thumbs button").nth(2).click()
    _click_image(page, 30.0, 40.0)
    type_diagnosis(page, "A unsent draft")
    choose_likert(page, 2)
    _wait_draft(db, a.reader, last, "A unsent draft")
    page.wait_for_timeout(4_000)  # A's active time on this case: more than B will spend
    page.locator("[data-testid=stProgress]").first.click()  # the focus leaves the panel
    kept = _storage(page)
    owners = {k.split(".")[1] for k in kept}
    assert len(owners) == 1, kept  # one reader's copies
    (owner_a,) = owners
    assert re.fullmatch(r"[0-9a-f]{24}", owner_a), owner_a  # opaque (tab_storage.tab_owner)
    assert f"rs.{owner_a}.draft.{last}" in kept, kept  # the tab's copy, filed by A and case
    assert all(k.startswith(f"rs.{owner_a}.") for k in kept), kept
    said = json.dumps(kept)
    assert a.token not in said and "R-A" not in said  # an opaque key: no token, no code
    _sign_out(page)
    assert _storage(page) == {}  # Sign out dropped the tab's copies

    # --- reader B, the same tab; A's copies put back as a never-signed-out tab holds them
    page.evaluate(
        "(kept) => { for (const [k, v] of Object.entries(kept)) sessionStorage.setItem(k, v); }",
        kept,
    )
    open_exam(page, sign_in_link(server.app.url, b.token))
    assert not any(k.startswith(f"rs.{owner_a}.") for k in _storage(page))  # B's claim
    spent: dict[str, float] = {}
    typed: dict[str, str] = {}
    for number in range(1, N + 1):
        expect_case(page, number, N)
        viewer_ready(page)
        opened = time.monotonic()
        case = panel_case(page)
        _expect_empty(page)
        typed[case] = f"B {number}"
        type_diagnosis(page, typed[case])
        choose_likert(page, 1)
        no_focal_box(page).click()
        _submit(page)
        spent[case] = (time.monotonic() - opened) * 1000
    expect(page.get_by_text("You have finished this exam")).to_be_visible()
    rows = _rows(db, b.reader)
    assert {c: r.diagnosis for c, r in rows.items()} == typed
    for case, row in rows.items():
        assert row.likert == 1 and parse_location_json(row.location_json) == (None, True)
        record = json.loads(row.interaction_json or "{}")
        assert record.get("thumbnail_clicks", 0) == 0, record  # A's click is not B's
        assert "" not in record.get("windows_used", []), record
        # B's visible time on the case, no more: A's 4 s on the last case are A's
        assert row.active_ms is not None and row.active_ms <= spent[case] + 500, (row, spent)
    assert _draft(db, b.reader, last) is None

    # --- B signs out; A signs in again: A's draft is back, from the server ----------
    _sign_out(page)
    assert _storage(page) == {}
    open_exam(page, link_a)
    expect_case(page, 3, N)
    viewer_ready(page)
    assert panel_case(page) == last
    expect(diagnosis_box(page)).to_have_value("A unsent draft")
    expect(likert_choice(page, 2)).to_be_checked()
    m = _marker(page)
    assert m is not None and abs(m["x"] - 30.0) <= 1 and abs(m["y"] - 40.0) <= 1, m
    assert set(_rows(db, a.reader)) == {first, second}  # nothing of B's among A's rows


def _overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    """Whether two bounding boxes (x, y, width, height) share any area."""
    return (
        a["x"] < b["x"] + b["width"]
        and b["x"] < a["x"] + a["width"]
        and a["y"] < b["y"] + b["height"]
        and b["y"] < a["y"] + a["height"]
    )


def _boxes_apart(page: Page, names: dict[str, Locator]) -> None:
    """Every named element is visible and no two of their boxes overlap."""
    boxes: dict[str, dict[str, float]] = {}
    for name, locator in names.items():
        expect(locator).to_be_visible()
        box = locator.bounding_box()
        assert box is not None and box["width"] > 0 and box["height"] > 0, name
        boxes[name] = dict(box)
    for (one, a), (other, b) in itertools.combinations(boxes.items(), 2):
        assert not _overlap(a, b), f"{one} {a} covers {other} {b}"


def test_notices_never_cover_other_notices_or_headings(
    server: Server, page: Page, db: Session
) -> None:
    """Issue 38: the practice submit's "Saved your answer to practice case 1" is said in
    the page's flow, never as a toast over the practice's notice, the "Reference answer"
    heading or, after "Next case" straight away, the first scored case's "Practice is
    over" note: their bounding boxes never overlap, at two window sizes."""
    for width, height in [(1440, 900), (1024, 768)]:
        page.set_viewport_size({"width": width, "height": height})
        study = make_study(
            db,
            server.settings.asset_dir,
            slug="n" + uuid.uuid4().hex[:10],
            n_cases=1,
            n_practice=1,
        )
        invite = make_reader(db, study, "R-N", ready=True)
        open_exam(page, sign_in_link(server.app.url, invite.token))
        expect(page.get_by_text("Practice 1 of 1")).to_be_visible()
        viewer_ready(page)
        type_diagnosis(page, "Practice guess")
        choose_likert(page, 2)
        submit_button(page).click()
        saved = page.get_by_text("Saved your answer to practice case 1")
        heading = page.get_by_text("Reference answer", exact=True)
        # the form's own note ("...follows your answer") stays on screen, stale, until the
        # submit's run ends; it is gone once the answer screen is whole
        expect(page.get_by_text("The reference answer follows your answer.")).to_have_count(0)
        _boxes_apart(
            page,
            {
                "the saved notice": saved,
                "the practice notice": page.get_by_text(
                    "Practice case: not scored. Here is the reference answer.", exact=True
                ),
                "the Reference answer heading": heading,
                "the Your answer heading": page.get_by_text("Your answer", exact=True),
            },
        )
        assert page.locator("[data-testid=stToast]").count() == 0  # no floating notice
        # "Next case" at once: nothing of the last screen lingers over the next one
        page.locator(".st-key-continue button").click()
        expect_case(page, 1, 1)
        note = page.get_by_text("Practice is over")
        expect(note).to_be_visible()
        for lingering in page.get_by_text("Saved your answer").all():
            box, over = lingering.bounding_box(), note.bounding_box()
            assert box is None or over is None or not _overlap(box, over), (box, over)
        _boxes_apart(
            page,
            {"the Practice is over note": note, "the Diagnosis box": diagnosis_box(page)},
        )
        assert page.locator("[data-testid=stToast]").count() == 0
        _sign_out(page)
