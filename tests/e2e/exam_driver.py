"""Drive the exam page the way a reader does, through the stable widget keys."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect


def open_exam(page: Page, url: str) -> None:
    page.goto(url)
    expect(page.locator(".st-key-submit")).to_be_visible()


def expect_case(page: Page, number: int, total: int) -> None:
    expect(page.get_by_text(re.compile(rf"Case {number} of {total}\b"))).to_be_visible()


def answer(page: Page, diagnosis: str, likert: int) -> None:
    box = page.locator(".st-key-diagnosis input")
    box.fill(diagnosis)
    box.press("Tab")  # Streamlit commits a text input on blur
    page.locator(".st-key-likert label").filter(has_text=re.compile(rf"^{likert} ·")).click()
    expect(page.locator(".st-key-likert input:checked")).to_have_count(1)
    page.locator(".st-key-submit button").click()


def answer_idk(page: Page) -> None:
    page.locator(".st-key-idk label").click()
    expect(page.locator(".st-key-diagnosis input")).to_be_disabled()
    page.locator(".st-key-submit button").click()
