#!/usr/bin/env python
"""The app server's memory per analyst session, on a study at RadLE 2.0's size.

    .venv/bin/python -m benchmarks.analyst_memory [--sessions 3] [--boot 2000]
        [--quick] [--update-doc docs/performance.md] [--json-out FILE]

The study is the synthetic benchmark-scale one of ``readerstudy demo --scale
radle`` (reader_app/runs/synthetic.py): 200 cases, 12 readers in three
groups and 16 model runs, every answer graded (5,600 rows). One served app
(``readerstudy serve``, SQLite) and one Chromium; each analyst signs in with
their own link in their own browser context, one after the other, and visits
every analyst page (leaderboard, charts, per-case matrix, model runs, exports,
report) with the bootstrap at ``--boot`` replicates; each session stays open.
A thread samples the server's resident set size (VmRSS of the process and its
children, every 0.2 s, as benchmarks/memory.py). Reported: idle, after each
session, the peak. Targets: under 200 MiB above idle after the first
session, and under 20 MiB more for each further one (the study's data and its
scoring are computed once and shared). The last line printed is one JSON
object.
"""

from __future__ import annotations

import argparse
import itertools
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.kit.browser import idle, streamlit_version
from benchmarks.kit.chromium import CHROMIUM, CHROMIUM_ARGS
from benchmarks.kit.doc import ROOT, para, update_doc
from benchmarks.kit.imports import import_costs
from benchmarks.kit.measure import load_average, machine
from benchmarks.kit.servers import serve_app
from benchmarks.memory import Sampler, mib, rss_kib
from reader_app.core.auth import invite_reader
from reader_app.core.db import get_engine, migrate, session_scope
from reader_app.runs.synthetic import RADLE_SCALE, Scale, build_radle_scale_study
from reader_app.study.casebank import get_study
from reader_app.ui.navigation import ROLE_PAGES

SECTION = "## Analyst memory"
FIRST_TARGET_MIB = 200
NEXT_TARGET_MIB = 20
PAGES = (  # sidebar link, page heading, an element that shows the page has rendered
    ("Leaderboard", "Leaderboard", ".st-key-lb_c canvas"),  # the RadLE-C chart, drawn
    ("Charts", "Charts", ".st-key-ch_profile canvas"),  # the first tab's chart, drawn
    ("Per-case matrix", "Per-case matrix", ".st-key-pc_matrix canvas"),  # drawn
    ("Model runs", "Model runs", None),
    ("Exports", "Exports", None),
    ("Report", "Study report", None),
)


def build(url: str, assets: Path, scale: Scale, sessions: int) -> tuple[str, list[str]]:
    """The study; a reader's sign-in link and ``sessions`` analysts' links."""
    migrate(url)
    with session_scope(get_engine(url)) as session:
        slug = build_radle_scale_study(session, assets, scale=scale)
        study = get_study(session=session, slug=slug)
        assert study is not None
        reader = invite_reader(session=session, study=study, code="READER", role="reader")
        return reader.token, [
            invite_reader(session=session, study=study, code=f"AN{i + 1}", role="analyst").token
            for i in range(sessions)
        ]


def settle(page: Any, heading: str, marker: str | None) -> None:
    page.get_by_role("heading", name=heading).first.wait_for(state="visible")
    if marker:
        page.locator(marker).first.wait_for(state="visible")
    idle(page, timeout_ms=180_000)


def analyst_session(page: Any, url: str, token: str, boot: int, pid: int) -> list[float]:
    """Sign in, set B, and visit every analyst page once; the server's RSS (MiB) after
    sign-in and after each page."""
    page.goto(f"{url}/?token={token}")
    settle(page, "Leaderboard", PAGES[0][2])
    steps = [mib(rss_kib(pid))]
    field = page.locator(".st-key-an_boot input")
    field.fill(str(boot))
    field.press("Enter")
    idle(page, timeout_ms=180_000)
    settle(page, "Leaderboard", PAGES[0][2])
    steps.append(mib(rss_kib(pid)))
    for link, heading, marker in PAGES[1:]:  # through the sidebar: one session throughout
        page.get_by_test_id("stSidebarNav").get_by_role("link", name=link).click()
        settle(page, heading, marker)
        steps.append(mib(rss_kib(pid)))
    return steps


def run(
    sessions: int,
    boot: int,
    scale: Scale,
    work: Path,
    reader_first: bool = False,
    root: Path = ROOT,
) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    started = time.monotonic()
    data_dir = work / "data"
    data_dir.mkdir()
    url = f"sqlite:///{data_dir / 'readerstudy.db'}"
    reader_token, tokens = build(url, data_dir / "assets", scale, sessions)
    load_start = load_average()
    after: list[int] = []
    seconds: list[float] = []
    steps: list[list[float]] = []
    app_log = work / "app.log"
    with serve_app(url, data_dir, app_log, root) as app, sync_playwright() as pw:
        pid = app.proc.pid
        time.sleep(1.0)
        idle_kib, idle_file_kib = rss_kib(pid), rss_kib(pid, "RssFile")
        first_file_kib = idle_file_kib
        with Sampler(pid) as sampler:
            browser = pw.chromium.launch(
                executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
            )
            reader_kib = idle_kib
            if reader_first:  # what the app's shared libraries cost any first visitor
                reader = browser.new_context(viewport={"width": 1440, "height": 900}).new_page()
                reader.set_default_timeout(180_000)
                reader.goto(f"{app.url}/?token={reader_token}")
                reader.get_by_role("heading").first.wait_for(state="visible")
                idle(reader, timeout_ms=180_000)
                time.sleep(1.0)
                reader_kib = rss_kib(pid)
            for token in tokens:
                page = browser.new_context(viewport={"width": 1440, "height": 900}).new_page()
                page.set_default_timeout(180_000)
                t0 = time.monotonic()
                steps.append(analyst_session(page, app.url, token, boot, pid))
                seconds.append(round(time.monotonic() - t0, 1))
                time.sleep(1.0)
                after.append(rss_kib(pid))
                if len(after) == 1:
                    first_file_kib = rss_kib(pid, "RssFile")
            browser.close()
    first = (after[0] - idle_kib) / 1024
    further = [(b - a) / 1024 for a, b in itertools.pairwise(after)]
    worst_next = max(further) if further else 0.0
    pages = root / "reader_app" / "ui" / "pages"
    imports = import_costs(
        [root / "reader_app" / "main.py", *(pages / p.file for p in ROLE_PAGES["analyst"])], root
    )
    return {
        "benchmark": "analyst_memory",
        "machine": machine(),
        "streamlit": streamlit_version(),
        "cases": scale.cases,
        "readers": scale.readers,
        "models": scale.models,
        "sessions": sessions,
        "boot": boot,
        "idle_mib": mib(idle_kib),
        "reader_first": reader_first,
        "code": "this checkout" if root == ROOT else f"{root} (--root)",
        "after_reader_mib": mib(reader_kib),
        "analyst_over_reader_mib": round((after[0] - reader_kib) / 1024, 1),
        "after_session_mib": [mib(k) for k in after],
        "first_session_mib": round(first, 1),
        # of which pages of mapped files (the libraries' code): shared, evictable
        "first_session_file_mib": round((first_file_kib - idle_file_kib) / 1024, 1),
        "further_session_mib": [round(f, 1) for f in further],
        "peak_mib": round(sampler.peak_mib, 1),
        "steps": ["sign-in (B default)", f"B = {boot}", *(p[1] for p in PAGES[1:])],
        "step_mib": steps,
        "import_mib": imports,
        "session_s": seconds,
        "first_target_mib": FIRST_TARGET_MIB,
        "next_target_mib": NEXT_TARGET_MIB,
        "met": first < FIRST_TARGET_MIB and worst_next < NEXT_TARGET_MIB,
        "load_start": load_start,
        "load_end": load_average(),
        "total_s": round(time.monotonic() - started, 1),
    }


def markdown(
    res: dict[str, Any],
    command: str,
    before: dict[str, Any] | None = None,
    reader: dict[str, Any] | None = None,
) -> str:
    lines = [SECTION, ""]
    lines += para(
        "`benchmarks/analyst_memory.py`: the app server's resident memory (VmRSS of the",
        "`readerstudy serve` process and its children, sampled every 0.2 s) as analysts sign in",
        f"one after the other on the synthetic RadLE-scale study ({res['cases']} cases,",
        f"{res['readers']} readers, {res['models']} model runs, all graded; `readerstudy demo",
        "--scale radle`). Each analyst, in their own browser context at 1440 x 900, sets the",
        f"bootstrap to B = {res['boot']} and visits the leaderboard, charts, per-case matrix,",
        "model runs, exports and report pages; every session stays open.",
    )
    lines += para(
        f"Command: `{command}`. Machine: {res['machine']}, Streamlit {res['streamlit']}; load",
        f"average {res['load_start']} at the start, {res['load_end']} at the end; run time",
        f"{res['total_s']:.0f} s; seconds per session (all six pages): {res['session_s']}.",
    )
    lines += ["| server RSS | MiB | above the step before |", "|---|---:|---:|"]
    lines.append(f"| started, no session yet | {res['idle_mib']} | |")
    previous = res["idle_mib"]
    for i, value in enumerate(res["after_session_mib"], start=1):
        lines.append(f"| after analyst session {i} | {value} | {value - previous:+.1f} |")
        previous = value
    lines += [f"| **peak** | **{res['peak_mib']}** | |", ""]
    if res.get("reader_first"):
        lines += para(
            f"A reader signed in first: {res['after_reader_mib']} MiB after the reader's",
            f"session; the first analyst session then added {res['analyst_over_reader_mib']}",
            "MiB.",
        )
    lines += [
        "Server RSS (MiB) after each step of each session:",
        "",
        "| session | " + " | ".join(res["steps"]) + " |",
        "|---|" + "---:|" * len(res["steps"]),
    ]
    for i, steps in enumerate(res["step_mib"], start=1):
        lines.append(f"| {i} | " + " | ".join(str(v) for v in steps) + " |")
    lines.append("")
    if before:
        lines += para(
            f"The same run on the code before this work ({before['code']}, its own server,",
            f"same study and steps, load {before['load_start']}): idle {before['idle_mib']} MiB,",
            f"after each session {before['after_session_mib']} MiB, first session",
            f"{before['first_session_mib']:+.1f} MiB, further sessions",
            ", ".join(f"{f:+.1f}" for f in before["further_session_mib"]) + " MiB.",
            *(
                [
                    f"Its pages' own code and other imports: {before['import_mib'][-1][1]} MiB"
                    + (f" ({res['import_mib'][-1][1]} now)." if res.get("import_mib") else ".")
                ]
                if before.get("import_mib")
                else []
            ),
        )
    if reader:
        lines += para(
            "Split (a run with `--reader-first`): a reader signing in first takes the server",
            f"from {reader['idle_mib']} to {reader['after_reader_mib']} MiB, what any first",
            "visitor costs (Streamlit's runtime, SQLAlchemy, pandas, numpy, pyarrow, PIL);",
            f"the first analyst session then adds {reader['analyst_over_reader_mib']} MiB.",
        )
    if res.get("import_mib"):
        lines += where_it_goes(res)
    further = ", ".join(f"{f:+.1f}" for f in res["further_session_mib"]) or "none"
    first_met = "met" if res["first_session_mib"] < res["first_target_mib"] else "not met"
    next_met = (
        "met" if all(f < res["next_target_mib"] for f in res["further_session_mib"]) else "not met"
    )
    lines += para(
        f"Targets: under {res['first_target_mib']} MiB above idle after the first session",
        f"({res['first_session_mib']:+.1f} MiB: **{first_met}**) and under",
        f"{res['next_target_mib']} MiB for each further session ({further} MiB:",
        f"**{next_met}**). The scored study is cached (`st.cache_data`, at most 16 entries,",
        "shared by every session), so a further session on the same data adds only its own",
        "widget state and the chart specs on its pages. Each page run still reads the",
        "study's answers into the tidy frame, as plain rows of the columns it needs (about",
        "4 MiB of short-lived objects; 12 MiB when it read whole Response rows, with every",
        "model's raw reply and the timestamps); the reading times of the Charts and Exports",
        "pages are read the same way (whole Response rows there left the heap about 5 MiB",
        "larger after the first session). What a page run frees is not all given back:",
        "Python keeps a 1 MiB arena of small objects as long as one object in it lives, so",
        "each page's first run leaves a few MiB behind. vl-convert's JavaScript engine",
        "(about 70 MiB) is loaded only when someone downloads a PNG or SVG or builds the",
        "report.",
        "`readerstudy serve` sets, unless already set, `MALLOC_ARENA_MAX=2` (freed memory is",
        "not spread over one glibc arena per script thread), `MALLOC_MMAP_THRESHOLD_=131072`",
        "(glibc otherwise raises its mmap threshold after each large free, so the bootstrap's",
        "arrays land on the heap and their pages stay resident once freed: about 30 MiB) and",
        "`ARROW_DEFAULT_MEMORY_POOL=system` (Arrow's own mimalloc heap kept about 14 MiB of",
        "what a page run freed).",
    )
    return "\n".join(lines)


def where_it_goes(res: dict[str, Any]) -> list[str]:
    """The first session's memory by library: what each adds to a fresh interpreter that
    imports what the analyst pages import (``benchmarks/kit/imports.py``), then the rest."""
    lines = [
        "Where the first session's memory goes: each library's resident memory, measured by",
        "importing what `reader_app/main.py` and the analyst pages import in a fresh",
        "interpreter after Streamlit (in this order, each counted after the ones above it),",
        "and the rest of the first session's growth:",
        "",
        "| part | MiB |",
        "|---|---:|",
    ]
    total = 0.0
    for label, value in res["import_mib"]:
        lines.append(f"| {label} | {value} |")
        total += value
    rest = res["first_session_mib"] - total
    lines += [
        "| the rest: Streamlit's own first-run modules, page runs, each session's state and "
        f"messages, the cached scoring, what the allocators keep | {rest:.1f} |",
        f"| **first session** | **{res['first_session_mib']}** |",
        "",
    ]
    if "first_session_file_mib" in res:
        lines += para(
            f"Of the first session's {res['first_session_mib']} MiB,",
            f"{res['first_session_file_mib']} MiB are pages of mapped files (RssFile: the",
            "libraries' machine code, shared with any process that maps the same files and",
            "dropped by the kernel under memory pressure); the rest is the process's own.",
        )
    lines += para(
        "numpy, pyarrow, pandas and SQLAlchemy are what any analyst page needs (Streamlit",
        "sends every table as Arrow; the scoring is pandas and numpy); about 47 MiB of",
        "pyarrow's are its C++ libraries (libarrow, libarrow_compute, libparquet), mapped",
        "and mostly touched at import. DICOM decoding (pydicom with GDCM, about 31 MiB),",
        "Alembic with Mako and Pygments (about 12 MiB) and pyarrow.parquet (about 9 MiB)",
        "are imported only where they are used (import, migrate, a Parquet export;",
        "tests/reader_app/ui/test_page_imports.py keeps them off every other page). The",
        "charts are Vega-Lite specs written as plain dicts (`reader_app/charts/vl.py`, the",
        "same specs Altair wrote, checked against its schema in the tests): Altair with",
        "jsonschema and narwhals, about 26 MiB, is not imported by the server. The",
        "analyst's pages read the rubric grades through `grading.rubric_grades` and import",
        "a model-run file's parsers only on an import, so the judges' HTTP client (httpx,",
        "stamina, tenacity) and the answer matcher (rapidfuzz) stay off them: about 7 MiB.",
    )
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=3)
    parser.add_argument("--boot", type=int, default=2000)
    parser.add_argument(
        "--reader-first",
        action="store_true",
        help="a reader signs in before the analysts (splits what any first session costs "
        "from what the analyst pages add); the targets still count from idle",
    )
    parser.add_argument(
        "--root",
        type=Path,
        help="serve another checkout's code (e.g. the commit before a change) on the same "
        "study, for a before/after comparison; never writes the doc",
    )
    parser.add_argument("--before-json", type=Path, help="a --root run's JSON, compared in the doc")
    parser.add_argument(
        "--reader-json", type=Path, help="a --reader-first run's JSON, for the split in the doc"
    )
    parser.add_argument(
        "--from-json",
        type=Path,
        help="write the doc from this run's JSON instead of running (with --update-doc)",
    )
    parser.add_argument("--quick", action="store_true", help="smoke run: 2 sessions, 40 cases")
    parser.add_argument("--update-doc", type=Path, help="rewrite our section of this file")
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args()
    if not Path(CHROMIUM).exists():
        print(json.dumps({"benchmark": "analyst_memory", "skipped": f"no Chromium at {CHROMIUM}"}))
        return 0
    scale = Scale(cases=40, readers=4, models=4) if args.quick else RADLE_SCALE
    sessions, boot = (2, 200) if args.quick else (args.sessions, args.boot)
    if args.from_json:
        res = json.loads(args.from_json.read_text())
    else:
        work = Path(tempfile.mkdtemp(prefix="analyst-memory-bench-"))
        try:
            res = run(sessions, boot, scale, work, args.reader_first, args.root or ROOT)
        except BaseException:
            print(f"work folder kept: {work}", file=sys.stderr)
            raise
        shutil.rmtree(work, ignore_errors=True)
    shown = list(sys.argv[1:])
    for flag in ("--json-out", "--before-json", "--reader-json", "--from-json"):
        if flag in shown:  # where runs kept their JSON is no part of the command
            i = shown.index(flag)
            del shown[i : i + 2]
    command = " ".join([".venv/bin/python -m benchmarks.analyst_memory", *shown])
    before = json.loads(args.before_json.read_text()) if args.before_json else None
    reader = json.loads(args.reader_json.read_text()) if args.reader_json else None
    section = markdown(res, command, before, reader)
    print(section, file=sys.stderr)
    if args.update_doc and not args.quick and not args.root:
        update_doc(args.update_doc, section, SECTION)
    if args.json_out:
        args.json_out.write_text(json.dumps(res, indent=1))
    print(json.dumps(res))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
