#!/usr/bin/env python
"""Case-to-case transitions in real Chromium, against a bare-Streamlit floor measured alongside.

    .venv/bin/python -m benchmarks.transition [--quick] [--update-doc docs/performance.md]
        [--transitions 100] [--scaling-transitions 30] [--no-scaling] [--json-out FILE]
        [--postgres-url URL] [--baseline-root DIR [--save-baseline FILE]]

What one transition is: the reader clicks *Submit answer*; it ends when every
image of the next case that the viewer shows (one spot image, or a strip's
large slice and its 16 thumbnails) has been fetched, decoded (``img.decode()``)
and painted (the next animation frame). The page's settling around it (the page
run that moves the progress bar, which follows the server's acknowledgement) is
timed apart, as "settled". Both ends are taken by the browser's
own clock: the click event's ``timeStamp`` and ``performance.now()``, seen by a
``MutationObserver`` armed just before the click. Playwright only fills the
form and clicks; its own latency is outside the window.

The floor is ``benchmarks/bare_app.py``: a bare Streamlit page that swaps one
PNG of the spot image's size on a button click, timed the same way. It runs as
a second server during the whole run, and every exam transition is followed by
one floor transition, so both see the same machine load; ratios are taken
within a configuration.

Configurations (one database, one app server, a fresh browser context each):

- main: 200 cases (every second one a strip), 100 consecutive transitions
  from case 1;
- scaling: 20 and 2,000 cases from case 1; 2,000 cases from case 1,970 (the
  reader's own 1,969 answers already stored); 200 cases with 10 and then 200
  other readers' complete answers in the database (from case 102). Each
  scaling point runs 30 transitions (19 for the 20-case study).

Images: spot cases are 1200 x 1460 grey radiograph-like PNGs (the stored
maximum is 1460 px on the long side), strips 16 slices of 512 x 512 CT-like
PNGs in three windows (lung, mediastinum, bone) plus a montage, as ingest
stores them. Every image a reader can be shown in a measured window has
distinct bytes (a private PNG text chunk), so nothing comes from the browser's
cache by accident; images no measured reader sees share bytes, which keeps a
2,000-case study small on disk.

The same command also times the server-side submit alone (``submit_cost.py``:
``submit_answer`` + the next case on the service layer, 500 answers, SQLite, and
PostgreSQL with ``--postgres-url``). ``--baseline-root`` serves a second app from
an older checkout next to the current one and drives both, interleaved, in the
main run: the before/after of this work, in one run (``--save-baseline`` keeps it
in ``transition_baseline.json``, which the report quotes).

The last line printed is one JSON object. ``--quick`` is a smoke run on tiny
sizes (small images, a few transitions, no scaling).

This file is the driver; the pieces live in ``benchmarks.kit`` (images, study,
servers, browser, measure, doc) and the write-up in ``benchmarks.transition_report``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks import submit_cost
from benchmarks.kit.browser import (
    VIEWPORT,
    chromium_version,
    fill_answer,
    idle,
    streamlit_version,
    timed_click,
)
from benchmarks.kit.chromium import CHROMIUM, CHROMIUM_ARGS
from benchmarks.kit.doc import emit, shown_command, update_doc
from benchmarks.kit.images import ImagePool
from benchmarks.kit.measure import latency_summary, load_average, machine
from benchmarks.kit.servers import serve_app, serve_floor, wait_healthy
from benchmarks.kit.study import (
    BenchStudy,
    add_other_readers,
    add_reader,
    build_study,
    count_responses,
    shown_images,
)
from benchmarks.transition_report import SECTION, TARGET_RATIO, markdown
from reader_app.core.db import migrate

SUBMIT = "[data-field=submit]"  # the case panel's Submit (DESIGN.md section 4)

BASELINE = Path(__file__).resolve().parent / "transition_baseline.json"
# the case viewer (an st.components.v2 element: its images sit in a shadow root)
CASE_IMAGES = ".rv-img, .rv-thumbs img"
FLOOR_IMAGES = ".st-key-floor img"


@dataclass
class Run:
    name: str
    cases: int
    other_readers: int
    first_case: int
    app_ms: list[float] = field(default_factory=list)
    floor_ms: list[float] = field(default_factory=list)
    app_dom_ms: list[float] = field(default_factory=list)
    floor_dom_ms: list[float] = field(default_factory=list)
    app_settled_ms: list[float] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)  # of the case shown after each transition
    load: list[float] = field(default_factory=list)
    responses_in_db: int = 0

    def result(self) -> dict[str, Any]:
        app, floor = latency_summary(self.app_ms), latency_summary(self.floor_ms)
        by_kind = {
            k: latency_summary(
                [ms for ms, kind in zip(self.app_ms, self.kinds, strict=True) if kind == k]
            )
            for k in ("spot", "strip")
        }
        return {
            "name": self.name,
            "cases": self.cases,
            "other_readers": self.other_readers,
            "responses_in_db": self.responses_in_db,
            "first_case": self.first_case,
            "transitions": len(self.app_ms),
            "app": app,
            "floor": floor,
            "app_in_place": latency_summary(self.app_dom_ms),
            "floor_in_place": latency_summary(self.floor_dom_ms),
            "app_settled": latency_summary(self.app_settled_ms),
            "to_spot": by_kind["spot"],
            "to_strip": by_kind["strip"],
            "ratio_p50": round(app["p50_ms"] / floor["p50_ms"], 2),
            "ratio_p95": round(app["p95_ms"] / floor["p95_ms"], 2),
            "load_start": self.load[0] if self.load else None,
            "load_end": self.load[-1] if self.load else None,
            "app_ms": [round(v, 1) for v in self.app_ms],
            "floor_ms": [round(v, 1) for v in self.floor_ms],
            "app_in_place_ms": [round(v, 1) for v in self.app_dom_ms],
            "floor_in_place_ms": [round(v, 1) for v in self.floor_dom_ms],
            "app_settled_ms": [round(v, 1) for v in self.app_settled_ms],
            "next_kind": list(self.kinds),
        }


@dataclass
class Driven:
    """One exam page being driven: its run (figures) and where it signs in."""

    run: Run
    url: str
    token: str


def open_floor(browser: Any, url: str) -> Any:
    """The bare Streamlit floor's page, loaded and warmed up by one transition."""
    floor_page = browser.new_context(viewport=VIEWPORT).new_page()
    floor_page.set_default_timeout(60_000)
    floor_page.goto(url)
    floor_page.locator(FLOOR_IMAGES).wait_for(state="visible")
    idle(floor_page)
    timed_click(floor_page, ".st-key-next button", FLOOR_IMAGES, 1, None)  # warm-up
    return floor_page


def run_transitions(
    browser: Any,
    floor_page: Any,
    study: BenchStudy,
    readers: Sequence[Driven],
    transitions: int,
    texts: Sequence[str] | None = None,
) -> None:
    """``transitions`` answers from each reader's first unanswered case; every step answers
    once on each reader's page (interleaved) and then clicks the floor once. ``texts``:
    the diagnosis typed at each slot (default: a text no key matches)."""
    pages = []
    try:
        for reader in readers:
            context = browser.new_context(viewport=VIEWPORT)
            page = context.new_page()
            page.set_default_timeout(60_000)
            page.goto(f"{reader.url}/?token={reader.token}")
            page.locator(SUBMIT).wait_for(state="visible")
            idle(page)
            reader.run.load.append(load_average())
            pages.append((reader.run, page))
        first = readers[0].run.first_case - 1
        for slot in range(first, first + transitions):
            nxt = slot + 1
            expected = shown_images(study.kinds[nxt])
            progress = f"Case {nxt + 1} of {study.total}"
            order = pages if slot % 2 == 0 else pages[::-1]  # neither always goes first
            for run, page in order:
                text = texts[slot] if texts is not None else f"Benchmark answer {slot}"
                fill_answer(page, text, slot % 5)
                dom, total, settled = timed_click(page, SUBMIT, CASE_IMAGES, expected, progress)
                run.app_ms.append(total)
                run.app_dom_ms.append(dom)
                run.app_settled_ms.append(settled)
                run.kinds.append(study.kinds[nxt])
                idle(page)
            idle(floor_page)
            dom, total, _ = timed_click(floor_page, ".st-key-next button", FLOOR_IMAGES, 1, None)
            for run, _ in pages:
                run.floor_ms.append(total)
                run.floor_dom_ms.append(dom)
        for run, _ in pages:
            run.load.append(load_average())
    finally:
        for _, page in pages:
            page.context.close()


# --------------------------------------------------------------------------- the run


@dataclass(frozen=True)
class Plan:
    cases: int
    transitions: int
    scaling_transitions: int
    scaling: bool
    spot_size: tuple[int, int]
    slice_size: int
    submit_iterations: int


def plan_for(args: argparse.Namespace) -> Plan:
    if args.quick:
        # two transitions: to a strip case (case 2), then to a spot case (case 3)
        return Plan(4, 2, 3, False, (240, 292), 96, 40)
    return Plan(
        args.cases,
        args.transitions,
        args.scaling_transitions,
        not args.no_scaling,
        (1200, 1460),
        512,
        args.submit_iterations,
    )


def run_benchmark(
    plan: Plan, work: Path, strip_every: int, baseline_root: Path | None, postgres_url: str
) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    started = time.monotonic()
    load_at_start = load_average()
    data_dir = work / "data"
    data_dir.mkdir()
    database_url = f"sqlite:///{data_dir / 'readerstudy.db'}"
    migrate(database_url)
    assets = data_dir / "assets"
    pool = ImagePool.make(plan.spot_size, plan.slice_size)
    pool.floor_pngs(work / "floor", 64)

    main_n = plan.transitions
    main = build_study(
        database_url,
        assets,
        pool,
        slug="main",
        cases=plan.cases,
        strip_every=strip_every,
        distinct=[range(plan.cases)],
    )
    studies: list[tuple[str, BenchStudy, int, int]] = [("main", main, 1, main_n)]
    if plan.scaling:
        n = plan.scaling_transitions
        small = build_study(
            database_url,
            assets,
            pool,
            slug="small",
            cases=20,
            strip_every=strip_every,
            distinct=[range(20)],
        )
        big_n = 2000
        late_first = big_n - n - 1  # the last n + 1 cases
        big = build_study(
            database_url,
            assets,
            pool,
            slug="big",
            cases=big_n,
            strip_every=strip_every,
            distinct=[range(0, n + 2), range(late_first - 1, big_n)],
        )
        studies += [
            ("20 cases", small, 1, min(n, 19)),
            ("2,000 cases", big, 1, n),
            (f"2,000 cases, from case {late_first:,}", big, late_first, n),
        ]
    setup_s = time.monotonic() - started

    runs: list[Run] = []
    baseline: Run | None = None
    with contextlib.ExitStack() as stack:
        # started side by side, then each awaited: the servers boot in parallel
        app = stack.enter_context(serve_app(database_url, data_dir, work / "app.log", wait=False))
        old = None
        if baseline_root is not None:
            old = stack.enter_context(
                serve_app(
                    database_url, data_dir, work / "baseline.log", root=baseline_root, wait=False
                )
            )
        floor = stack.enter_context(serve_floor(work / "floor", work / "floor.log", wait=False))
        for server in (app, old, floor):
            if server is not None:
                wait_healthy(server)
        pw = stack.enter_context(sync_playwright())
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        floor_page = open_floor(browser, floor.url)
        for number, (name, study, first, n) in enumerate(studies):
            token = add_reader(study, f"B{number:02d}", answered=first - 1)
            old_token = add_reader(study, "OLD", answered=first - 1) if old and not number else ""
            run = Run(name, study.total, 0, first, responses_in_db=count_responses(database_url))
            readers = [Driven(run, app.url, token)]
            if old is not None and old_token:
                baseline = Run(
                    "main, before", study.total, 0, first, responses_in_db=run.responses_in_db
                )
                readers.append(Driven(baseline, old.url, old_token))
            run_transitions(browser, floor_page, study, readers, n)
            runs.append(run)
            print(_line(run.result()), flush=True)
            if baseline is not None and not number:
                print(_line(baseline.result()), flush=True)
        if plan.scaling:
            n = plan.scaling_transitions
            first = main_n + 2  # cases the main run never showed: no warm server cache
            for others, added in ((10, 10), (200, 190)):
                add_other_readers(main, others - added, added)
                token = add_reader(main, f"BR{others:03d}", answered=first - 1)
                run = Run(
                    f"200 cases + {others} readers' answers",
                    main.total,
                    others,
                    first,
                    responses_in_db=count_responses(database_url),
                )
                run_transitions(browser, floor_page, main, [Driven(run, app.url, token)], n)
                runs.append(run)
                print(_line(run.result()), flush=True)
        browser.close()
    browser_s = time.monotonic() - started

    submit = submit_cost.measure(plan.submit_iterations, min(plan.cases, 200), postgres_url)
    return {
        "benchmark": "transition",
        "machine": f"{machine()}, Chromium {chromium_version()}",
        "streamlit": streamlit_version(),
        "load_start": load_at_start,
        "load_end": load_average(),
        "setup_s": round(setup_s, 1),
        "browser_s": round(browser_s, 1),
        "total_s": round(time.monotonic() - started, 1),
        "spot_image": f"{plan.spot_size[0]} x {plan.spot_size[1]}",
        "spot_png_kib": round(len(pool.spots[0]) / 1024),
        "slice_image": f"{plan.slice_size} x {plan.slice_size}",
        "slice_png_kib": round(statistics.fmean(len(p) for p in pool.slices["lung"]) / 1024),
        "strip_every": strip_every,
        "main": runs[0].result(),
        "runs": [r.result() for r in runs],
        "baseline": baseline.result() if baseline is not None else None,
        "baseline_commit": git_commit(baseline_root) if baseline_root is not None else None,
        "submit": submit,
        "target_ratio_p95": TARGET_RATIO,
        "met": runs[0].result()["ratio_p95"] <= TARGET_RATIO,
    }


def git_commit(root: Path) -> str:
    """The commit a baseline checkout was made from (``git archive`` writes it in a
    pax header, readable with ``git get-tar-commit-id``; we keep it in a file)."""
    marker = root / ".commit"
    return marker.read_text().strip() if marker.exists() else str(root)


def _line(r: dict[str, Any]) -> str:
    return (
        f"{r['name']}: {r['transitions']} transitions, exam p50 {r['app']['p50_ms']} ms "
        f"p95 {r['app']['p95_ms']} ms; floor p50 {r['floor']['p50_ms']} ms "
        f"p95 {r['floor']['p95_ms']} ms; ratio p95 {r['ratio_p95']} "
        f"(load {r['load_start']} -> {r['load_end']})"
    )


def compact(res: dict[str, Any]) -> dict[str, Any]:
    """The result without the per-transition lists (for the last line of output)."""

    def brief(run: dict[str, Any] | None) -> dict[str, Any] | None:
        if run is None:
            return None
        return {k: v for k, v in run.items() if not k.endswith("_ms") and k != "next_kind"}

    return res | {
        "main": brief(res["main"]),
        "baseline": brief(res.get("baseline")),
        "runs": [brief(r) for r in res["runs"]],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: tiny sizes")
    parser.add_argument("--cases", type=int, default=200, help="cases in the main study")
    parser.add_argument("--transitions", type=int, default=100, help="main run")
    parser.add_argument("--scaling-transitions", type=int, default=30)
    parser.add_argument("--no-scaling", action="store_true")
    parser.add_argument("--strip-every", type=int, default=2)
    parser.add_argument("--submit-iterations", type=int, default=500)
    parser.add_argument("--postgres-url", default="", help="also time the submit on PostgreSQL")
    parser.add_argument(
        "--baseline-root",
        type=Path,
        help="a checkout of older code (e.g. `git archive COMMIT | tar -x -C DIR`, with the"
        " commit in DIR/.commit): its app joins the main run, interleaved",
    )
    parser.add_argument(
        "--save-baseline",
        type=Path,
        help="with --baseline-root: write that app's main-run figures here (the doc's"
        " 'before' paragraph comes from benchmarks/transition_baseline.json)",
    )
    parser.add_argument("--update-doc", type=Path, help="rewrite our section of this file")
    parser.add_argument("--json-out", type=Path)
    parser.add_argument("--keep", action="store_true", help="keep the work folder (logs)")
    args = parser.parse_args()
    if not Path(CHROMIUM).exists():
        print(json.dumps({"benchmark": "transition", "skipped": f"no Chromium at {CHROMIUM}"}))
        return 0
    plan = plan_for(args)
    work = Path(tempfile.mkdtemp(prefix="transition-bench-"))
    try:
        res = run_benchmark(plan, work, args.strip_every, args.baseline_root, args.postgres_url)
    except BaseException:
        print(f"work folder kept: {work}", file=sys.stderr)
        raise
    if args.keep:
        print(f"work folder: {work}", file=sys.stderr)
    else:
        shutil.rmtree(work, ignore_errors=True)
    command = shown_command("transition", sys.argv[1:])
    if args.save_baseline and res.get("baseline"):
        saved = json.loads(BASELINE.read_text()) if BASELINE.exists() else {}
        saved |= {
            "commit": res["baseline_commit"],
            "date": time.strftime("%Y-%m-%d"),
            "command": command,
            "main": compact(res)["baseline"] | {"floor": res["main"]["floor"]},
            "after": compact(res)["main"],
        }
        args.save_baseline.write_text(json.dumps(saved, indent=1) + "\n")
    baseline = json.loads(BASELINE.read_text()) if BASELINE.exists() else None
    section = markdown(res, command, baseline)
    print(section, file=sys.stderr)
    if args.update_doc and not args.quick:
        update_doc(args.update_doc, section, SECTION)
    if args.json_out:
        args.json_out.write_text(json.dumps(res, indent=1))
    return emit(compact(res))


if __name__ == "__main__":
    raise SystemExit(main())
