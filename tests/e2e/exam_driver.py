"""Drive the reader's exam the way a reader does, through the stable widget keys.

Keys (DESIGN.md section 4): ``diagnosis``, ``likert``, ``idk``, ``submit``,
``pause``; Streamlit renders a key as the CSS class ``st-key-<key>``.
"""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

PROGRESS = "[data-testid=stProgress]"


def open_exam(page: Page, url: str) -> None:
    page.goto(url)
    expect(page.locator(".st-key-submit")).to_be_visible()
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
    expect(page.locator(".st-key-submit")).to_be_visible()


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
    page.locator(".st-key-submit button").click()
    page.wait_for_function(_NEXT_SCREEN, arg=[PROGRESS, before])


def fill_answer(page: Page, diagnosis: str, likert: int) -> None:
    box = page.locator(".st-key-diagnosis input")
    box.fill(diagnosis)
    box.press("Tab")  # Streamlit commits a text input on blur
    page.locator(".st-key-likert label").filter(has_text=re.compile(rf"^{likert} ·")).click()
    expect(page.locator(".st-key-likert input:checked")).to_have_count(1)


def answer(page: Page, diagnosis: str, likert: int) -> None:
    """Answer the current case and wait for the next screen."""
    fill_answer(page, diagnosis, likert)
    _submit_and_wait(page)


def answer_idk(page: Page) -> None:
    page.locator(".st-key-idk button").click()
    expect(page.locator(".st-key-diagnosis input")).to_be_disabled()
    _submit_and_wait(page)


def continue_after_feedback(page: Page) -> None:
    page.locator(".st-key-continue button").click()
    expect(page.locator(".st-key-submit")).to_be_visible()


def is_strip(page: Page) -> bool:
    return page.locator(".st-key-slice").count() > 0


def slice_number(page: Page) -> int:
    return int(page.locator(".st-key-slice input[type=range]").input_value())


def step_slices(page: Page, steps: int) -> None:
    """Step with the Right arrow key (the viewer's shortcut), as a reader would."""
    start = slice_number(page)
    page.locator(PROGRESS).first.click()  # focus the page, not a text box
    slider = page.locator(".st-key-slice input[type=range]")
    for n in range(1, steps + 1):
        page.keyboard.press("ArrowRight")
        expect(slider).to_have_value(str(start + n))


def choose_window(page: Page, label: str) -> None:
    settled(page)
    page.locator(".st-key-window button").filter(has_text=label).click()
    expect(page.locator(".st-key-window button[aria-checked=true]")).to_have_text(label)
