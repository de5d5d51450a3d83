"""Driving real Chromium: click-to-painted timing, idle waits and the answer form.

What one timed click is: from the click event's ``timeStamp`` until every image
the next screen shows is new, fetched, decoded (``img.decode()``) and painted
(the next animation frame), all on the browser's own clock (``performance.now()``,
seen by a ``MutationObserver`` armed just before the click); and, apart, until the
page has settled around it (no stale element, the progress bar at the next case). Playwright only
fills the form and clicks; its own latency is outside the window.
"""

from __future__ import annotations

import re
import subprocess
from typing import TYPE_CHECKING, Any

from benchmarks.kit.chromium import CHROMIUM

if TYPE_CHECKING:
    from playwright.sync_api import ViewportSize

VIEWPORT: ViewportSize = {"width": 1400, "height": 1000}


def chromium_version() -> str:
    try:
        out = subprocess.run([CHROMIUM, "--version"], capture_output=True, text=True, timeout=30)
        match = re.search(r"[\d.]{5,}", out.stdout)
        return match.group(0) if match else "?"
    except (OSError, subprocess.SubprocessError):
        return "?"


def streamlit_version() -> str:
    import streamlit

    return str(streamlit.__version__)


# Armed just before the click. Two ends: ``t1`` when the expected number of images are
# all new (none of their URLs was on screen before the click), decoded, and one more
# frame has been produced (painted): the next case is on screen; ``t2`` when besides
# nothing from the previous script run is left (data-stale) and the progress bar shows
# the expected case: the page has settled. The exam's panel puts the next case up on the
# server's acknowledgement, before the page run that redraws the header, so t1 < t2.
ARM = """([selector, expected, progress]) => {
    // the page and every open shadow root (the case viewer draws in one)
    const roots = () => [document, ...Array.from(document.querySelectorAll('*'))
        .map((e) => e.shadowRoot).filter(Boolean)];
    const findAll = (sel) => roots().flatMap((r) => Array.from(r.querySelectorAll(sel)));
    const old = new Set(findAll(selector).map((i) => i.src));
    const bench = { t0: null, dom: null, t1: null, t2: null };
    window.__bench = bench;
    document.addEventListener('click', (e) => { if (bench.t0 === null) bench.t0 = e.timeStamp; },
                              { capture: true, once: true });
    bench.done = new Promise((resolve) => {
        let busy = false;
        const inPlace = () => {
            const imgs = findAll(selector);
            for (const r of roots()) if (r !== document) observer.observe(r, watch);
            if (imgs.length !== expected || imgs.some((i) => !i.src || old.has(i.src))) return null;
            return imgs;
        };
        const settled = () => {
            if (document.querySelector('[data-stale="true"]')) return false;
            if (progress === null) return true;
            const bar = document.querySelector('[data-testid=stProgress]');
            return Boolean(bar) && bar.innerText.trim().startsWith(progress);
        };
        const check = () => {
            if (bench.t1 !== null) {
                if (bench.t2 === null && settled() && inPlace()) {
                    bench.t2 = performance.now();
                    observer.disconnect();
                    resolve();
                }
                return;
            }
            if (busy) return;
            const imgs = inPlace();
            if (!imgs) return;
            busy = true;
            if (bench.dom === null) bench.dom = performance.now();
            Promise.all(imgs.map((i) => i.decode())).then(
                () => requestAnimationFrame(() => {
                    busy = false;
                    if (inPlace() === null) { check(); return; }  // replaced meanwhile
                    bench.t1 = performance.now();
                    check();
                }),
                () => { busy = false; setTimeout(check, 5); },  // an image was swapped mid-decode
            );
        };
        const watch = {
            subtree: true, childList: true, characterData: true,
            attributes: true, attributeFilter: ['src', 'data-stale'],
        };
        const observer = new MutationObserver(check);
        observer.observe(document.body, watch);
        for (const r of roots()) if (r !== document) observer.observe(r, watch);
    });
}"""

AWAIT = """async (timeout) => {
    const bench = window.__bench;
    const late = new Promise((_, fail) => setTimeout(() => fail(new Error('timeout')), timeout));
    await Promise.race([bench.done, late]);
    return [bench.t0, bench.dom, bench.t1, bench.t2];
}"""

IDLE = """() => document.querySelector('[data-stale="true"]') === null
    && document.querySelector('[data-testid="stStatusWidget"]') === null
    && Array.from(document.images).every((i) => i.complete)"""


def idle(page: Any, timeout_ms: float = 30_000) -> None:
    """Streamlit is not running the script and every image on the page has loaded."""
    page.wait_for_function(IDLE, timeout=timeout_ms, polling=25)


def timed_click(
    page: Any, button: str, selector: str, expected: int, progress: str | None
) -> tuple[float, float, float]:
    """ms from the click event to (the next screen's images in place; the next screen on
    screen: its images decoded and painted, the transition; the page settled: nothing
    stale and the progress bar at the next case)."""
    page.evaluate(ARM, [selector, expected, progress])
    page.locator(button).click()
    t0, dom, t1, t2 = page.evaluate(AWAIT, 60_000)
    if t0 is None:
        raise RuntimeError("the click was not seen by the page")
    return float(dom) - t0, float(t1) - t0, float(t2) - t0


def fill_answer(page: Any, text: str, likert: int) -> None:
    """Type a diagnosis and choose a confidence, as exam_driver.fill_answer does."""
    box = page.get_by_role("textbox", name="Diagnosis", exact=True)
    choice = page.get_by_role("radio", name=re.compile(rf"^{likert} · "))
    for _ in range(3):  # a rerun still in flight may redraw the panel: type again
        box.fill(text)
        choice.click()
        idle(page)
        if box.input_value() == text and choice.is_checked():
            return
    raise RuntimeError("could not fill the answer form")
