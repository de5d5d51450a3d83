#!/usr/bin/env python
"""The app server's memory with 20 concurrent reader sessions on strip cases.

    .venv/bin/python -m benchmarks.memory [--readers 20] [--cases-each 2]
        [--quick] [--update-doc docs/performance.md] [--json-out FILE]

One served app (``readerstudy serve``, SQLite) and one Chromium with a browser
context per reader, all open at once. The study is all strips: 16 slices of
512 x 512 CT-like PNGs in three windows plus montages, every image distinct,
and every reader has their own shuffled order, so the sessions show different
cases. Round after round, each reader switches window twice, steps through
slices, answers (which puts the following case's images on the page too) and
moves on, ``--cases-each`` times. A thread samples the resident set size
(VmRSS from /proc, the server process plus any children) every 0.2 s; the
report gives it before any session, the peak, and at the end with every
session still open. Target: under 1 GiB. The last line printed is one JSON
object.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from benchmarks.kit.browser import (
    VIEWPORT,
    chromium_version,
    fill_answer,
    idle,
    streamlit_version,
)
from benchmarks.kit.chromium import CHROMIUM, CHROMIUM_ARGS
from benchmarks.kit.doc import emit, para, shown_command, update_doc
from benchmarks.kit.images import ImagePool
from benchmarks.kit.measure import load_average, machine, process_tree
from benchmarks.kit.servers import serve_app
from benchmarks.kit.study import add_reader, build_study
from reader_app.core.db import migrate

SUBMIT = "[data-field=submit]"  # the case panel's Submit (DESIGN.md section 4)

SECTION = "## Memory"
TARGET_MIB = 1024


def rss_kib(pid: int, field: str = "VmRSS") -> int:
    """VmRSS of ``pid`` and all its descendants, in KiB (0 for a process that is gone);
    ``field`` another line of /proc/PID/status, e.g. RssFile (mapped files' pages)."""
    total = 0
    for p in process_tree(pid):
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith(f"{field}:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total


class Sampler:
    def __init__(self, pid: int, every: float = 0.2) -> None:
        self.pid, self.every = pid, every
        self.samples: list[tuple[float, int]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        start = time.monotonic()
        while not self._stop.is_set():
            self.samples.append((time.monotonic() - start, rss_kib(self.pid)))
            self._stop.wait(self.every)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def peak_mib(self) -> float:
        return max(kib for _, kib in self.samples) / 1024 if self.samples else 0.0


def mib(kib: int) -> float:
    return round(kib / 1024, 1)


WINDOW_LABELS = ("Mediastinum", "Bone", "Lung")


def one_case(
    page: Any, slot: int, windows: tuple[str, ...] = WINDOW_LABELS, steps: int = 2
) -> None:
    """What a reader does on a strip case: other windows, a few slices, an answer."""
    # the case viewer runs windows and slices in the browser (no rerun, no server memory)
    for label in windows:
        page.locator(".rv-presets button").filter(has_text=label).click()
    page.locator("[data-testid=stProgress]").first.click()  # focus the page, not a text box
    for _ in range(steps):
        page.keyboard.press("ArrowRight")
    idle(page)
    fill_answer(page, f"Memory benchmark {slot}", slot % 5)
    before = page.locator("[data-testid=stProgress]").first.inner_text()
    page.locator(SUBMIT).click()
    page.wait_for_function(
        "(before) => { const b = document.querySelector('[data-testid=stProgress]');"
        " return b && b.innerText !== before; }",
        arg=before,
    )
    idle(page)


def run(
    readers: int,
    cases_each: int,
    slice_size: int,
    work: Path,
    settle_s: float = 1.0,
    light: bool = False,
) -> dict[str, Any]:
    """``settle_s``: the pause before each still reading (idle, end, after close);
    ``light``: one window switch and one slice step per case (every kind of action
    once: a smoke run)."""
    from playwright.sync_api import sync_playwright

    started = time.monotonic()
    data_dir = work / "data"
    data_dir.mkdir()
    url = f"sqlite:///{data_dir / 'readerstudy.db'}"
    migrate(url)
    n_cases = readers + cases_each + 2
    pool = ImagePool.make((240, 292), slice_size)
    study = build_study(
        url,
        data_dir / "assets",
        pool,
        slug="memory",
        cases=n_cases,
        strip_every=1,
        distinct=[range(n_cases)],
    )
    tokens = [add_reader(study, f"M{r:03d}", answered=0, shuffle=r + 1) for r in range(readers)]
    load_start = load_average()
    with serve_app(url, data_dir, work / "app.log") as app, sync_playwright() as pw:
        pid = app.proc.pid
        time.sleep(settle_s)
        idle_kib = rss_kib(pid)
        with Sampler(pid) as sampler:
            browser = pw.chromium.launch(
                executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
            )
            pages = []
            for token in tokens:
                page = browser.new_context(viewport=VIEWPORT).new_page()
                page.set_default_timeout(90_000)
                page.goto(f"{app.url}/?token={token}")
                pages.append(page)
            for page in pages:
                page.locator(SUBMIT).wait_for(state="visible")
                idle(page)
            open_kib = rss_kib(pid)
            for round_no in range(cases_each):
                for r, page in enumerate(pages):
                    if light:
                        one_case(page, round_no * readers + r, ("Mediastinum",), 1)
                    else:
                        one_case(page, round_no * readers + r)
            time.sleep(settle_s)
            end_kib = rss_kib(pid)
            browser.close()
        time.sleep(settle_s)
        closed_kib = rss_kib(pid)
    peak = sampler.peak_mib
    return {
        "benchmark": "memory",
        "machine": f"{machine()}, Chromium {chromium_version()}",
        "streamlit": streamlit_version(),
        "readers": readers,
        "cases_each": cases_each,
        "slice_size": slice_size,
        "slice_png_kib": round(sum(len(p) for p in pool.slices["lung"]) / 16 / 1024),
        "idle_mib": mib(idle_kib),
        "sessions_open_mib": mib(open_kib),
        "peak_mib": round(peak, 1),
        "end_mib": mib(end_kib),
        "after_close_mib": mib(closed_kib),
        "target_mib": TARGET_MIB,
        "met": peak < TARGET_MIB,
        "samples": len(sampler.samples),
        "load_start": load_start,
        "load_end": load_average(),
        "total_s": round(time.monotonic() - started, 1),
    }


def markdown(res: dict[str, Any], command: str) -> str:
    verdict = "**met**" if res["met"] else "**not met**"
    lines = [SECTION, ""]
    lines += para(
        "`benchmarks/memory.py`: the app server's resident memory (VmRSS of the",
        "`readerstudy serve` process and its children, sampled every 0.2 s) while"
        f" {res['readers']} reader sessions are open at once in one Chromium, on an all-strip",
        f"study (16 slices of {res['slice_size']} x {res['slice_size']} in three windows, about",
        f"{res['slice_png_kib']} KiB per PNG, every image distinct, every reader in their own",
        "order). Each reader, in turn, switches through the three windows, steps two slices",
        f"and answers, {res['cases_each']} cases each; answering also puts the following",
        "case's images on the page (the prefetch).",
    )
    lines += para(
        f"Command: `{command}`. Machine: {res['machine']}, Streamlit {res['streamlit']}; load",
        f"average {res['load_start']} at the start, {res['load_end']} at the end; run time",
        f"{res['total_s']:.0f} s.",
    )
    lines += [
        "| server RSS | MiB |",
        "|---|---:|",
        f"| started, no session yet | {res['idle_mib']} |",
        f"| {res['readers']} sessions open, first case shown | {res['sessions_open_mib']} |",
        f"| **peak** | **{res['peak_mib']}** |",
        f"| after the last answer, sessions still open | {res['end_mib']} |",
        f"| 1 s after the browser closed | {res['after_close_mib']} |",
        "",
    ]
    lines += para(
        f"Target: under {res['target_mib']} MiB: {verdict} (peak {res['peak_mib']} MiB). What",
        "holds memory: the imported libraries (most of the first session's jump), each",
        "session's state, the images on each session's page (Streamlit keeps their bytes in",
        "memory: 17 for a strip plus up to 16 prefetched), and the shared cache of stored",
        "PNGs (`asset_bytes`, at most 512 entries, one copy for all sessions). The figure",
        "does not fall when the browser closes: Streamlit keeps a disconnected session for a",
        "while in case it reconnects, and Python keeps freed memory for reuse.",
    )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--readers", type=int, default=20)
    parser.add_argument("--cases-each", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="smoke run: 2 readers, tiny images")
    parser.add_argument("--update-doc", type=Path, help="rewrite our section of this file")
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args()
    if not Path(CHROMIUM).exists():
        print(json.dumps({"benchmark": "memory", "skipped": f"no Chromium at {CHROMIUM}"}))
        return 0
    readers, cases_each, size = (2, 1, 96) if args.quick else (args.readers, args.cases_each, 512)
    settle_s = 0.2 if args.quick else 1.0  # a smoke run proves the plumbing, not the figures
    work = Path(tempfile.mkdtemp(prefix="memory-bench-"))
    try:
        res = run(readers, cases_each, size, work, settle_s, light=args.quick)
    except BaseException:
        print(f"work folder kept: {work}", file=sys.stderr)
        raise
    shutil.rmtree(work, ignore_errors=True)
    command = shown_command("memory", sys.argv[1:])
    section = markdown(res, command)
    print(section, file=sys.stderr)
    if args.update_doc and not args.quick:
        update_doc(args.update_doc, section, SECTION)
    return emit(res, args.json_out)


if __name__ == "__main__":
    raise SystemExit(main())
