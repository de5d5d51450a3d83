#!/usr/bin/env python
"""The analyst's sign-in and pages, first and second visit, against a bare Streamlit page.

    .venv/bin/python -m benchmarks.analyst_pages [--rounds 3] [--passes 3] [--before-root DIR]
        [--quick] [--update-doc docs/performance.md] [--json-out FILE]

The study is the synthetic RadLE-size one of benchmarks.analyst_memory (200
cases, 12 readers, 16 model runs, every answer graded), on SQLite. Each round
starts, side by side, a bare Streamlit page (benchmarks/bare_app.py: one PNG),
the app of this checkout and, with ``--before-root``, the app of another
checkout (``git archive`` of the code before, served from there), so every
figure of a round has a fresh server beside its comparison under the same load.
In one Chromium, each in a new browser context:

- bare page: ``goto`` until its image is in place and Streamlit idle (first
  visit), then again, ``--passes`` times (second visit: their median);
- app: the analyst's sign-in link until the Leaderboard has drawn its RadLE-C
  chart (bootstrap B = 2000, the default) and Streamlit is idle (the sign-in,
  the first visit of the Leaderboard), then each other analyst page through the
  sidebar (first visits), then every page again, ``--passes`` times (second
  visits: each page's median). One reload of the bare page varied 280-480 ms
  from round to round here: a single second visit made the ratios swing by half.

The app variants alternate their order from round to round. Reported: medians
over the rounds, and the ratio to the bare page's median of the same visit.
Targets (issue 43): sign-in and every first visit at most 1.3x the bare page's
first visit; second visits at most 1.2x its second. The last line printed is
one JSON object.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from benchmarks.analyst_memory import PAGES, build, settle
from benchmarks.kit.browser import idle
from benchmarks.kit.chromium import CHROMIUM, CHROMIUM_ARGS
from benchmarks.kit.doc import ROOT, emit, para, shown_command, update_doc
from benchmarks.kit.images import radiograph_png
from benchmarks.kit.measure import load_average, machine
from benchmarks.kit.servers import serve_app, serve_floor, wait_healthy
from reader_app.runs.synthetic import RADLE_SCALE, Scale

SECTION = "## Analyst pages"
FIRST_TARGET = 1.3
SECOND_TARGET = 1.2
PASSES = 3  # second visits per round: one reload of the bare page varies 280-480 ms here


def _ms(t0: float) -> float:
    return round((time.monotonic() - t0) * 1000, 1)


def floor_visits(browser: Any, url: str, passes: int) -> tuple[float, float]:
    """ms of the bare page's first visit, and the median of ``passes`` visits after it."""
    page = browser.new_context(viewport={"width": 1440, "height": 900}).new_page()
    out = []
    for _ in range(1 + passes):
        t0 = time.monotonic()
        page.goto(url)
        page.get_by_test_id("stImage").first.wait_for(state="visible", timeout=180_000)
        idle(page, timeout_ms=180_000)
        out.append(_ms(t0))
    page.context.close()
    return out[0], statistics.median(out[1:])


def app_visits(browser: Any, url: str, token: str, passes: int) -> dict[str, list[float]]:
    """ms of the sign-in (Leaderboard), each other page's first visit, and each page's
    second visit (the median of ``passes`` rounds of the pages after the first)."""
    page = browser.new_context(viewport={"width": 1440, "height": 900}).new_page()
    page.set_default_timeout(180_000)
    t0 = time.monotonic()
    page.goto(f"{url}/?token={token}")
    settle(page, PAGES[0][1], PAGES[0][2])
    first = [_ms(t0)]
    nav = page.get_by_test_id("stSidebarNav")
    for link, heading, marker in PAGES[1:]:
        t0 = time.monotonic()
        nav.get_by_role("link", name=link).click()
        settle(page, heading, marker)
        first.append(_ms(t0))
    later: list[list[float]] = [[] for _ in PAGES]
    for _ in range(passes):
        for i, (link, heading, marker) in enumerate(PAGES):
            t0 = time.monotonic()
            nav.get_by_role("link", name=link).click()
            settle(page, heading, marker)
            later[i].append(_ms(t0))
    page.context.close()
    return {"first": first, "second": [statistics.median(v) for v in later]}


def run(
    rounds: int, scale: Scale, work: Path, before: Path | None, passes: int = PASSES
) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    started = time.monotonic()
    data_dir = work / "data"
    data_dir.mkdir()
    url = f"sqlite:///{data_dir / 'readerstudy.db'}"
    _, tokens = build(url, data_dir / "assets", scale, 1)
    floor_dir = work / "floor"
    floor_dir.mkdir()
    (floor_dir / "0.png").write_bytes(radiograph_png(0, 1024, 1024))
    variants = {"this": ROOT, **({"before": before} if before else {})}
    floor: list[tuple[float, float]] = []
    apps: dict[str, list[dict[str, list[float]]]] = {name: [] for name in variants}
    loads: list[float] = []
    load_start = load_average()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        for r in range(rounds):
            loads.append(load_average())
            with ExitStack() as stack:
                bare = stack.enter_context(serve_floor(floor_dir, work / "floor.log", wait=False))
                served = {
                    name: stack.enter_context(
                        serve_app(url, data_dir, work / f"{name}.log", root, wait=False)
                    )
                    for name, root in variants.items()
                }
                for server in (bare, *served.values()):
                    wait_healthy(server)
                time.sleep(1.0)
                floor.append(floor_visits(browser, bare.url, passes))
                order = list(variants) if r % 2 == 0 else list(reversed(variants))
                for name in order:
                    apps[name].append(app_visits(browser, served[name].url, tokens[0], passes))
        browser.close()
    floor_first = statistics.median(f for f, _ in floor)
    floor_second = statistics.median(s for _, s in floor)
    names = [p[1] for p in PAGES]
    summary: dict[str, Any] = {}
    for name, visits in apps.items():
        first = [statistics.median(v["first"][i] for v in visits) for i in range(len(PAGES))]
        second = [statistics.median(v["second"][i] for v in visits) for i in range(len(PAGES))]
        summary[name] = {
            "first_ms": dict(zip(names, first, strict=True)),
            "second_ms": dict(zip(names, second, strict=True)),
            "first_ratio": {
                n: round(f / floor_first, 2) for n, f in zip(names, first, strict=True)
            },
            "second_ratio": {
                n: round(s / floor_second, 2) for n, s in zip(names, second, strict=True)
            },
        }
    this = summary["this"]
    return {
        "benchmark": "analyst_pages",
        "machine": machine(),
        "cases": scale.cases,
        "readers": scale.readers,
        "models": scale.models,
        "rounds": rounds,
        "passes": passes,
        "floor_first_ms": floor_first,
        "floor_second_ms": floor_second,
        "floor": floor,
        "apps": apps,
        "summary": summary,
        "met": max(this["first_ratio"].values()) <= FIRST_TARGET
        and max(this["second_ratio"].values()) <= SECOND_TARGET,
        "loads": loads,
        "load_start": load_start,
        "load_end": load_average(),
        "total_s": round(time.monotonic() - started, 1),
    }


def markdown(res: dict[str, Any], command: str) -> str:
    names = [p[1] for p in PAGES]
    titles = {"this": "this checkout", "before": "the code before (--before-root)"}
    head = "| visit | " + " | ".join(titles.get(n, n) for n in res["summary"]) + " |"
    rows = [head, "|---|" + "---:|" * len(res["summary"])]
    rows.append(
        f"| bare Streamlit page, first / second | {res['floor_first_ms']:.0f} / "
        f"{res['floor_second_ms']:.0f} ms |" + " |" * (len(res["summary"]) - 1)
    )
    for kind, label in (("first", "first visit"), ("second", "second visit")):
        for n in names:
            cells = []
            for s in res["summary"].values():
                ms, ratio = s[f"{kind}_ms"][n], s[f"{kind}_ratio"][n]
                cells.append(f"{ms:.0f} ms (**{ratio}x**)")
            shown = "sign-in (Leaderboard)" if kind == "first" and n == names[0] else n
            rows.append(f"| {shown}, {label} | " + " | ".join(cells) + " |")
    return "\n".join(
        [
            SECTION,
            "",
            f"Command: `{command}` ({res['machine']}).",
            "",
            *para(
                f"RadLE-size study ({res['cases']} cases, {res['readers']} readers,"
                f" {res['models']} model runs), SQLite, bootstrap B = 2000. Each of"
                f" {res['rounds']} rounds starts a bare Streamlit page and the app(s) side by"
                " side, then visits them in one Chromium: medians over the rounds, each app"
                " figure with its ratio to the bare page's median of the same visit (first"
                " visit after a server start, or second: in each round the median of"
                f" {res.get('passes', 1)} passes over the pages, and of as many reloads of the"
                " bare page). Load (1-minute average) at each"
                f" round: {', '.join(str(x) for x in res['loads'])} (a 1-minute average: it"
                " still holds the tail of whatever ran just before). Targets: first visits"
                " at most"
                f" {FIRST_TARGET}x, second at most {SECOND_TARGET}x:"
                f" {'met' if res['met'] else 'not met'} by this checkout.",
            ),
            *rows,
        ]
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--passes", type=int, default=PASSES, help="second visits per round (their median)"
    )
    parser.add_argument("--before-root", type=Path, help="another checkout, served beside")
    parser.add_argument("--quick", action="store_true", help="a small study, one round")
    parser.add_argument("--update-doc", type=Path)
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args()
    scale = RADLE_SCALE
    if args.quick:
        args.rounds, args.passes = 1, 1
        scale = Scale(cases=20, readers=3, models=2)
    with tempfile.TemporaryDirectory(prefix="analyst-pages-") as tmp:
        res = run(args.rounds, scale, Path(tmp), args.before_root, args.passes)
    if args.update_doc and not args.quick:
        update_doc(args.update_doc, markdown(res, shown_command("analyst_pages", sys.argv[1:])))
    return emit(res, args.json_out)


if __name__ == "__main__":
    raise SystemExit(main())
