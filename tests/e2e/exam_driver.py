"""Drive the reader's exam the way a reader does, through the stable field names.

DESIGN.md section 4: the case panel's fields are found by their accessible names
(Diagnosis, Findings, Impression, ``N · <label>``, I don't know, No focal finding,
Submit answer); ``Pause`` is a Streamlit button (``st-key-pause``). The panel
carries the case's public id as ``data-case``.
"""

from __future__ import annotations

import re

from playwright.sync_api import Locator, Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.e2e.ws_trace import trace_of

PROGRESS = "[data-testid=stProgress]"


SUBMIT = re.compile(r"^(Submit answer|Submit report|Save changed answer)$")
PANEL = "[data-case]"


def submit_button(page: Page) -> Locator:
    return page.get_by_role("button", name=SUBMIT)


def diagnosis_box(page: Page) -> Locator:
    return page.get_by_role("textbox", name="Diagnosis", exact=True)


def text_box(page: Page, name: str) -> Locator:
    """A text field of the panel by its accessible name (Diagnosis, Findings, Impression)."""
    return page.get_by_role("textbox", name=name, exact=True)


def idk_box(page: Page) -> Locator:
    return page.get_by_role("checkbox", name="I don't know", exact=True)


def no_focal_box(page: Page) -> Locator:
    return page.get_by_role("checkbox", name="No focal finding", exact=True)


def likert_choice(page: Page, likert: int) -> Locator:
    return page.get_by_role("radio", name=re.compile(rf"^{likert} · "))


def panel_case(page: Page) -> str:
    """The public id of the case the panel shows."""
    return str(page.locator(PANEL).first.get_attribute("data-case"))


FOCUSED_FIELD = """() => {
    let el = document.activeElement;
    while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
    const field = el && el.closest ? el.closest('[data-field]') : null;
    return field ? field.dataset.field : null;
}"""


def focused_field(page: Page) -> str | None:
    """The ``data-field`` of the panel field that has the focus (None: none has)."""
    value = page.evaluate(FOCUSED_FIELD)
    return None if value is None else str(value)


def expect_focus(page: Page, field: str, *, timeout: float = 10_000) -> None:
    """Wait until the panel field ``field`` (its ``data-field``) has the focus."""
    try:
        page.wait_for_function(f"(f) => ({FOCUSED_FIELD})() === f", arg=field, timeout=timeout)
    except PlaywrightTimeout as exc:
        raise AssertionError(f"the focus is on {focused_field(page)!r}, not {field!r}") from exc


def open_exam(page: Page, url: str) -> None:
    page.goto(url)
    expect(submit_button(page)).to_be_visible(timeout=30_000)
    settled(page)


def progress(page: Page) -> str:
    return page.locator(PROGRESS).first.inner_text().strip()


def expect_progress(page: Page, text: str, *, timeout: float = 10_000) -> None:
    pattern = re.compile(rf"^{re.escape(text)}\b")
    expect(page.locator(PROGRESS).first).to_contain_text(pattern, timeout=timeout)


def expect_case(page: Page, number: int, total: int, *, timeout: float = 10_000) -> None:
    expect_progress(page, f"Case {number} of {total}", timeout=timeout)


def accept_consent(page: Page) -> None:
    page.locator(".st-key-consent_agree button").click()
    expect(page.locator(".st-key-profile_save")).to_be_visible()


def fill_profile(page: Page, *, trainee_year: int | None = None, years: int = 5) -> None:
    role = "Radiology trainee" if trainee_year else "Board-certified"
    page.locator(".st-key-profile_role label").filter(has_text=role).click()
    if trainee_year:
        box = page.locator(".st-key-profile_year input")
        box.fill(str(trainee_year))
        box.press("Tab")
    box = page.locator(".st-key-profile_years input")
    box.fill(str(years))
    box.press("Tab")
    page.locator(".st-key-profile_save button").click()
    expect(submit_button(page)).to_be_visible()


_NEXT_SCREEN = """([selector, before]) => {
    const bar = document.querySelector(selector);
    const moved = document.querySelector('.st-key-continue') !== null
        || (bar !== null && bar.innerText.trim() !== before);
    return moved && document.querySelector('[data-stale="true"]') === null;
}"""


def settled(page: Page) -> None:
    """Wait until Streamlit has replaced every element of the previous run."""
    page.wait_for_function("() => document.querySelector('[data-stale=\"true\"]') === null")


def _submit_and_wait(page: Page) -> None:
    """Submit, then wait for the next screen: a new case, practice feedback or the end."""
    before = progress(page)
    submit_button(page).click()
    wait_next_screen(page, before)


def fill_answer(page: Page, diagnosis: str, likert: int) -> None:
    box = diagnosis_box(page)
    box.fill(diagnosis)
    box.press("Tab")
    choose_likert(page, likert)


def type_diagnosis(page: Page, text: str, *, clear: bool = True) -> None:
    """Click into the diagnosis box and type with real key presses."""
    box = diagnosis_box(page)
    box.click()
    if clear:
        page.keyboard.press("Control+A")
        page.keyboard.press("Backspace")
    page.keyboard.type(text)


def choose_likert(page: Page, likert: int) -> None:
    likert_choice(page, likert).click()
    expect(likert_choice(page, likert)).to_be_checked()


def toggle_idk(page: Page) -> None:
    idk_box(page).click()


def on_screen(page: Page) -> dict[str, object]:
    """The form's values as the reader sees them (found by their accessible names)."""
    box = diagnosis_box(page)
    idk = idk_box(page)
    likert = None
    for n in range(5):
        choice = likert_choice(page, n)
        if choice.count() and choice.is_checked():
            likert = n
    return {
        "diagnosis": box.input_value() if box.count() else None,
        "likert": likert,
        "idk": idk.is_checked() if idk.count() else None,
    }


def submit(page: Page, how: str = "click") -> None:
    """Submit the way a reader does: click, Ctrl+Enter or Enter (focus stays where it is)."""
    if how == "click":
        submit_button(page).click()
    elif how == "dblclick":
        submit_button(page).dblclick()
    elif how == "space":
        page.keyboard.press(" ")
    elif how == "ctrl+enter":
        page.keyboard.press("Control+Enter")
    elif how == "enter":
        page.keyboard.press("Enter")
    else:
        raise ValueError(how)


def wait_next_screen(page: Page, before: str) -> None:
    """Wait for the screen after ``before``; on a timeout, say what the page held and what
    the browser and the server exchanged (tests/e2e/ws_trace.py)."""
    try:
        page.wait_for_function(_NEXT_SCREEN, arg=[PROGRESS, before])
    except PlaywrightTimeout as exc:
        raise AssertionError(
            f"still on {progress(page)!r} after a submit from {before!r}; "
            f"the form shows {on_screen(page)}\n{trace_of(page)}"
        ) from exc


def answer(page: Page, diagnosis: str, likert: int) -> None:
    """Answer the current case and wait for the next screen."""
    fill_answer(page, diagnosis, likert)
    _submit_and_wait(page)


def answer_idk(page: Page) -> None:
    toggle_idk(page)
    expect(idk_box(page)).to_be_checked()
    _submit_and_wait(page)


def continue_after_feedback(page: Page) -> None:
    page.locator(".st-key-continue button").click()
    expect(submit_button(page)).to_be_visible()


VIEWER_READY = """() => {
    const v = window.readerstudyViewer;
    return Boolean(v) && v.image.complete && v.image.naturalWidth > 0
        && document.querySelector('[data-stale="true"]') === null;
}"""


def viewer_ready(page: Page) -> None:
    """Wait until the case viewer shows its image (it lives in a shadow root)."""
    page.wait_for_function(VIEWER_READY)


VIEWER_HAS_FOCUS = """() => {
    const r = window.readerstudyViewer.root;
    const a = r.getRootNode().activeElement || document.activeElement;
    return Boolean(a) && r.contains(a);
}"""
MARKER = "() => window.readerstudyViewer.marker()"
FOCUS_HINT = "The viewer has the keys"  # the marker corner's line after a focusing click


def viewer_has_focus(page: Page) -> bool:
    """Whether the viewer (its image or one of its controls) has the focus."""
    return bool(page.evaluate(VIEWER_HAS_FOCUS))


def focus_click(page: Page, x: float, y: float) -> None:
    """A mouse click at client point (x, y) on the image while the focus is outside the
    viewer (issue 38): it gives the viewer the keys and places no marker (nor moves one),
    and the marker's corner says so."""
    assert not viewer_has_focus(page), "the viewer has the focus already"
    before = page.evaluate(MARKER)
    page.mouse.click(x, y)
    expect(page.locator(".rv-marktext")).to_contain_text(FOCUS_HINT)
    assert viewer_has_focus(page), "the click did not give the viewer the focus"
    assert page.evaluate(MARKER) == before, "a focusing click placed or moved the marker"


def click_to_mark(page: Page, x: float, y: float) -> None:
    """Place the marker at client point (x, y) by mouse as a reader does: the click that
    gives the viewer the focus when it lacks it (checked to place nothing), then the click
    that marks."""
    if not viewer_has_focus(page):
        focus_click(page, x, y)
    page.mouse.click(x, y)


def is_strip(page: Page) -> bool:
    viewer_ready(page)
    return page.locator(".rv-thumbs button").count() > 0


def slice_number(page: Page) -> int:
    return int(page.evaluate("() => window.readerstudyViewer.state().slice"))


def slice_label(page: Page) -> str:
    return page.locator(".rv-label").inner_text()


def step_slices(page: Page, steps: int) -> None:
    """Step with the Right arrow key (the viewer's shortcut), as a reader would."""
    start = slice_number(page)
    page.locator(PROGRESS).first.click()  # focus the page, not a text box
    for n in range(1, steps + 1):
        page.keyboard.press("ArrowRight")
        expect(page.locator(".rv-label")).to_contain_text(f"{start + n}/")


def choose_window(page: Page, label: str) -> None:
    viewer_ready(page)
    page.locator(".rv-presets button").filter(has_text=label).click()
    expect(page.locator(".rv-presets button[aria-pressed=true]")).to_contain_text(label)
