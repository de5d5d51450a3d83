"""The exam page's script (answer_form.EXAM_SCRIPT) on a page of Streamlit's st-key-* shape.

The app's own browser tests cover the script end to end; here the moments those tests
reach only by chance are forced: a field reset by the front end just after a draft was
put back into it (a slow machine, a reload), and a reader who then acts.
"""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import Page, expect

from reader_app.ui.components.answer_form import EXAM_SCRIPT

pytestmark = pytest.mark.browser

URL = "http://exam.test/"  # served by page.route: sessionStorage needs a real origin
CASE = "C-7f3a"
DRAFT = {"st-key-findings": "Spiculated nodule, right upper lobe", "st-key-likert": 3}


def _page_html(draft: dict[str, object], idk_after_ms: int | None = None) -> str:
    """``idk_after_ms``: the checkbox is drawn that long after the form, as a widget
    whose code Streamlit is still loading."""
    radios = "".join(
        f'<label><input type="radio" name="l" value="{v}">{v}</label>' for v in range(5)
    )
    checkbox = '<input type="checkbox">' if idk_after_ms is None else ""
    late = (
        ""
        if idk_after_ms is None
        else f"""<script>setTimeout(() => document.querySelector('.st-key-idk__1')
  .insertAdjacentHTML('beforeend', '<input type="checkbox">'), {idk_after_ms});</script>"""
    )
    # the form is drawn after the script is installed, as on the exam page
    return f"""<!doctype html><html><body><div data-testid="stMain"></div>
<template id="form"><div class="st-key-answer_form">
  <div class="st-key-case_token__1"><input type="text" value="{CASE}"></div>
  <div class="st-key-active_ms__1"><input type="text" value=""></div>
  <div class="st-key-findings"><div class="st-key-findings__1"><textarea></textarea></div></div>
  <div class="st-key-likert"><div class="st-key-likert__1">{radios}</div></div>
  <div class="st-key-idk"><div class="st-key-idk__1">{checkbox}</div></div>
  <div class="st-key-submit"><div class="st-key-submit__1"><button>Submit</button></div></div>
</div></template>
<script>sessionStorage.setItem('rs.draft.{CASE}', {json.dumps(json.dumps(draft))});</script>
{EXAM_SCRIPT}
<script>setTimeout(() => document.querySelector('[data-testid=stMain]')
  .append(document.getElementById('form').content.cloneNode(true)), 200);</script>
{late}
</body></html>"""


def _open(page: Page, draft: dict[str, object], idk_after_ms: int | None = None) -> None:
    html = _page_html(draft, idk_after_ms)
    page.route(URL, lambda route: route.fulfill(body=html, content_type="text/html"))
    page.goto(URL)


def _stored_draft(page: Page) -> dict[str, object]:
    return json.loads(page.evaluate(f"sessionStorage.getItem('rs.draft.{CASE}') || '{{}}'"))


def _reset_findings(page: Page) -> None:
    """What the front end does to a field it draws or resets: a value set by code."""
    page.evaluate(
        """() => {
          const t = document.querySelector('.st-key-findings textarea');
          Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, 'value').set.call(t, '');
          t.dispatchEvent(new Event('input', {bubbles: true}));
        }"""
    )


def test_a_draft_reset_by_the_page_after_its_restore_is_put_back_again(page: Page) -> None:
    """The restore's own click on the confidence fires trusted input/change events in
    Chromium; they must not count as the reader's, or a text reset a moment after the
    restore stays empty and the next save writes the empty text over the draft."""
    _open(page, DRAFT)
    findings = page.locator(".st-key-findings textarea")
    expect(findings).to_have_value(DRAFT["st-key-findings"])
    expect(page.locator(".st-key-likert input:checked")).to_have_value("3")

    _reset_findings(page)
    expect(findings).to_have_value(DRAFT["st-key-findings"], timeout=2_000)
    assert _stored_draft(page) == DRAFT


def test_once_the_reader_acts_the_screen_is_theirs(page: Page) -> None:
    """After a real key press the draft follows the reader, and is never put back into a
    field the page then draws empty (a new drawing's widget, as after a submit)."""
    _open(page, DRAFT)
    findings = page.locator(".st-key-findings textarea")
    expect(findings).to_have_value(DRAFT["st-key-findings"])

    findings.click()
    page.keyboard.press("End")
    page.keyboard.type(", 18 mm")
    edited = DRAFT["st-key-findings"] + ", 18 mm"
    expect(findings).to_have_value(edited)
    assert _stored_draft(page)["st-key-findings"] == edited

    # a new widget in place of the one the reader typed into: emptying the focused box
    # itself would let a blur's trusted change event write the empty text, which no
    # real page does (Streamlit draws new widgets after a submit)
    page.evaluate(
        """() => document.querySelector('.st-key-findings__1 textarea')
            .replaceWith(document.createElement('textarea'))"""
    )
    page.wait_for_timeout(500)  # five of the script's ticks
    expect(findings).to_have_value("")
    assert _stored_draft(page)["st-key-findings"] == edited


def test_a_choice_is_in_the_draft_before_its_click_is_over(page: Page) -> None:
    """A reload may come at any moment after a tick or a confidence: the draft must hold
    the choice by the end of the gesture's own events, not at a timer that a reload on a
    busy machine can cancel. A window listener, which runs after the script's, reads the
    stored draft in the same task as the change."""
    _open(page, DRAFT)
    expect(page.locator(".st-key-likert input:checked")).to_have_value("3")
    page.evaluate(
        f"""() => window.addEventListener('change', () => {{
          window.__seen = JSON.parse(sessionStorage.getItem('rs.draft.{CASE}') || '{{}}');
        }})"""
    )
    page.locator(".st-key-idk input").click()
    assert page.evaluate("window.__seen")["st-key-idk"] is True
    page.locator(".st-key-likert input[value='1']").click()
    assert page.evaluate("window.__seen")["st-key-likert"] == 1


def test_until_the_reader_acts_the_draft_comes_back_however_late(page: Page) -> None:
    """After a reload on a busy machine, a widget whose code is still loading is drawn
    seconds after the rest of the form, and a run still arriving can reset a field seconds
    later. Until the reader acts, each gets its draft back ("I don't know" ticked, the
    findings), however late: there is no time limit that a slow machine can outlast."""
    draft = {**DRAFT, "st-key-idk": True}
    _open(page, draft, idk_after_ms=4_500)
    findings = page.locator(".st-key-findings textarea")
    expect(findings).to_have_value(DRAFT["st-key-findings"])
    expect(page.locator(".st-key-idk input")).to_be_checked(timeout=10_000)
    page.wait_for_timeout(4_000)
    _reset_findings(page)
    expect(findings).to_have_value(DRAFT["st-key-findings"], timeout=2_000)
    assert _stored_draft(page) == draft
