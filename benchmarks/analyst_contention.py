#!/usr/bin/env python
"""Reader transitions while an analyst cycles the analyst pages, against the analyst idle.

    .venv/bin/python -m benchmarks.analyst_contention [--rounds 8] [--block 10]
        [--analyst-nice 19] [--quick] [--update-doc docs/performance.md] [--json-out FILE]

The study is the synthetic one of ``readerstudy demo`` (reader_app/runs/synthetic.py)
at lab scale: 200 spot cases, 50 readers and 20 model runs who answered every
case (14,000 rows), on SQLite. Two app servers of this checkout serve it side by
side: one with the scoring worker (``READERSTUDY_SCORING_WORKER=on``, the
default: the analyst pages load and score in a worker process) and one without
(``off``: in the serving process, as before issue 43's worker), plus the bare
Streamlit floor page of benchmarks/transition.py.

Each app server has one reader (a fresh one, answering in manifest order) and one
analyst. The analyst is a Chromium of its own, in a child process of this
driver, at nice 19 with its autogroup (``--analyst-nice``: in use it draws the
charts on the analyst's own computer, not on the server's cores), signed in
with the analyst's link: while told to, it visits the analyst
pages through the sidebar one after the other, without pause (Leaderboard,
Charts, Per-case matrix, Model runs, Exports, Report, and again); otherwise it
waits. Every reader answer changes the study's data version, so every analyst
page run finds its figures out of date and loads and scores the study again
(bootstrap B = 2000): the worst case for the readers.

The readers' transitions are benchmarks/transition.py's (``run_transitions``:
from the Submit click to the next case's image decoded and painted, in the
browser's clock; one floor transition after each). They run in blocks of
``--block`` transitions; a round is four blocks, one per (server, analyst idle
or cycling), in an order that alternates from round to round, so the idle and
cycling figures of a server are measured interleaved under the same machine
load. Reported per server: p50/p95 of the transitions and of the page settling,
idle and cycling, and their ratio (cycling / idle). Target (issue 43): p95
cycling at most 1.3x idle, for the default server. The last line printed is one
JSON object.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from sqlmodel import col, select

from benchmarks.analyst_memory import PAGES, settle
from benchmarks.kit.browser import chromium_version
from benchmarks.kit.chromium import CHROMIUM, CHROMIUM_ARGS
from benchmarks.kit.doc import ROOT, emit, para, shown_command, update_doc
from benchmarks.kit.images import ImagePool
from benchmarks.kit.measure import latency_summary, load_average, machine, process_tree
from benchmarks.kit.servers import serve_app, serve_floor, wait_healthy
from benchmarks.kit.study import BenchStudy, add_reader
from benchmarks.transition import Driven, Run, open_floor, run_transitions
from reader_app.core.auth import invite_reader
from reader_app.core.db import get_engine, migrate, session_scope
from reader_app.models import AnswerKey, Case
from reader_app.runs.synthetic import Scale, build_radle_scale_study
from reader_app.study.casebank import get_study

SECTION = "## Readers while an analyst browses"
TARGET = 1.3
LAB = Scale(cases=200, readers=50, models=20)
SERVERS = ("worker", "in-process")  # READERSTUDY_SCORING_WORKER on / off


# --------------------------------------------------------------------------- the analyst


def lower_priority(pids: list[int], nice: int) -> None:
    """Give ``pids`` the niceness ``nice``, also as their autogroup's: Playwright starts
    Chromium in a session of its own, and with the kernel's autogroups (on here) a
    process's niceness weighs only against its own session; the autogroup's weighs
    against the server's."""
    if nice <= 0:
        return
    for pid in pids:
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, pid, nice)
            Path(f"/proc/{pid}/autogroup").write_text(str(nice))


def cycle(url: str, token: str, control: Path) -> int:
    """The analyst's browser (a child process): pages one after the other while
    ``control/go`` exists; ``control/state`` says "cycling" or "paused"; ends at
    ``control/stop``. One line per page visit in ``control/visits``."""
    from playwright.sync_api import sync_playwright

    state = control / "state"
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        page = browser.new_context(viewport={"width": 1440, "height": 900}).new_page()
        lower_priority(process_tree(os.getpid())[1:], os.nice(0))  # the driver, Chromium
        page.set_default_timeout(180_000)
        page.goto(f"{url}/?token={token}")
        settle(page, PAGES[0][1], PAGES[0][2])
        nav = page.get_by_test_id("stSidebarNav")
        state.write_text("paused")
        visit = 0
        while not (control / "stop").exists():
            if not (control / "go").exists():
                if state.read_text() != "paused":
                    state.write_text("paused")
                time.sleep(0.05)
                continue
            if state.read_text() != "cycling":
                state.write_text("cycling")
            visit += 1
            link, heading, marker = PAGES[visit % len(PAGES)]
            t0 = time.monotonic()
            nav.get_by_role("link", name=link).click()
            settle(page, heading, marker)
            with (control / "visits").open("a") as fh:
                fh.write(f"{link}\t{(time.monotonic() - t0) * 1000:.0f}\n")
        browser.close()
    return 0


class Analyst:
    """Drives one ``cycle`` child process through its control folder."""

    def __init__(self, url: str, token: str, control: Path, log: Path, nice: int) -> None:
        control.mkdir(parents=True)
        self.control = control
        argv = [sys.executable, "-m", "benchmarks.analyst_contention", "--cycle"]
        with log.open("ab") as fh:
            self.proc = subprocess.Popen(
                [*argv, url, token, str(control)],
                stdout=fh,
                stderr=subprocess.STDOUT,
                cwd=ROOT,
                # the analyst's browser (this process and the Chromium it starts inherit it)
                preexec_fn=(lambda: os.nice(nice)) if nice else None,
            )
        self.log = log

    def _state(self) -> str:
        path = self.control / "state"
        return path.read_text() if path.exists() else ""

    def _wait(self, state: str, timeout: float = 300) -> None:
        deadline = time.monotonic() + timeout
        while self._state() != state:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the analyst ended:\n{self.log.read_text()[-3000:]}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"the analyst never became {state}")
            time.sleep(0.05)

    def visits(self) -> list[float]:
        path = self.control / "visits"
        lines = path.read_text().splitlines() if path.exists() else []
        return [float(line.split("\t")[1]) for line in lines]

    def start(self) -> None:
        """Cycling, with a first page visit done (the cycling is under way)."""
        before = len(self.visits())
        (self.control / "go").touch()
        self._wait("cycling")
        deadline = time.monotonic() + 300
        while len(self.visits()) == before and time.monotonic() < deadline:
            time.sleep(0.05)

    def pause(self) -> None:
        (self.control / "go").unlink(missing_ok=True)
        self._wait("paused")

    def wait_signed_in(self) -> None:
        self._wait("paused")

    def stop(self) -> None:
        (self.control / "go").unlink(missing_ok=True)
        (self.control / "stop").touch()
        try:
            self.proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


# --------------------------------------------------------------------------- the run


def build(url: str, assets: Path, scale: Scale) -> tuple[BenchStudy, list[str], list[str]]:
    """The synthetic study, an analyst's link per server, and each case's key text (what
    the readers type: grade memory grades it at once, so the study stays scorable)."""
    migrate(url)
    with session_scope(get_engine(url)) as session:
        slug = build_radle_scale_study(session, assets, scale=scale)
        study = get_study(session=session, slug=slug)
        assert study is not None and study.id is not None
        tokens = [
            invite_reader(session=session, study=study, code=f"AN{i}", role="analyst").token
            for i in range(len(SERVERS))
        ]
        cases = session.exec(
            select(Case).where(Case.study_id == study.id).order_by(col(Case.position))
        ).all()
        bench = BenchStudy(url, study.id, [c.kind for c in cases], [c.id or 0 for c in cases])
        keys = {
            k.case_id: k.diagnosis
            for k in session.exec(
                select(AnswerKey).where(col(AnswerKey.case_id).in_(bench.case_ids))
            )
        }
    return bench, tokens, [keys[c] for c in bench.case_ids]


def merged(name: str, blocks: list[Run]) -> Run:
    out = Run(name, blocks[0].cases, 0, blocks[0].first_case)
    for b in blocks:
        out.app_ms += b.app_ms
        out.floor_ms += b.floor_ms
        out.app_dom_ms += b.app_dom_ms
        out.floor_dom_ms += b.floor_dom_ms
        out.app_settled_ms += b.app_settled_ms
        out.kinds += b.kinds
        out.load += b.load
    return out


def run(rounds: int, block: int, scale: Scale, work: Path, nice: int) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    started = time.monotonic()
    data_dir = work / "data"
    data_dir.mkdir()
    url = f"sqlite:///{data_dir / 'readerstudy.db'}"
    study, analyst_tokens, texts = build(url, data_dir / "assets", scale)
    if rounds * 2 * block >= study.total:
        raise SystemExit(
            f"{rounds} rounds of 2 blocks of {block} need more than {study.total} cases"
        )
    pool = ImagePool.make((240, 292), 96)
    pool.floor_pngs(work / "floor", 64)
    tokens = {s: add_reader(study, f"B{i}", answered=0) for i, s in enumerate(SERVERS)}
    setup_s = time.monotonic() - started
    blocks: dict[tuple[str, str], list[Run]] = {
        (s, a): [] for s in SERVERS for a in ("idle", "cycling")
    }
    visits: dict[str, list[float]] = {s: [] for s in SERVERS}
    next_case = {s: 1 for s in SERVERS}
    load_start = load_average()
    with contextlib.ExitStack() as stack:
        apps = {
            s: stack.enter_context(
                serve_app(
                    url,
                    data_dir,
                    work / f"{s}.log",
                    wait=False,
                    env={"READERSTUDY_SCORING_WORKER": "on" if s == "worker" else "off"},
                )
            )
            for s in SERVERS
        }
        floor = stack.enter_context(serve_floor(work / "floor", work / "floor.log", wait=False))
        for server in (*apps.values(), floor):
            wait_healthy(server)
        analysts = {}
        for s, token in zip(SERVERS, analyst_tokens, strict=True):
            analysts[s] = Analyst(
                apps[s].url, token, work / f"analyst-{s}", work / f"an-{s}.log", nice
            )
            stack.callback(analysts[s].stop)
        for analyst in analysts.values():
            analyst.wait_signed_in()
        pw = stack.enter_context(sync_playwright())
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        floor_page = open_floor(browser, floor.url)
        order = [(s, a) for s in SERVERS for a in ("idle", "cycling")]
        for r in range(rounds):
            for s, mode in order if r % 2 == 0 else order[::-1]:
                analyst = analysts[s]
                seen = len(analyst.visits())
                if mode == "cycling":
                    analyst.start()
                part = Run(f"{s}, {mode}", study.total, 0, next_case[s])
                run_transitions(
                    browser, floor_page, study, [Driven(part, apps[s].url, tokens[s])], block, texts
                )
                if mode == "cycling":
                    analyst.pause()
                    visits[s] += analyst.visits()[seen:]
                next_case[s] += block
                blocks[(s, mode)].append(part)
                r_ = part.result()
                print(
                    f"round {r + 1}: {s}, analyst {mode}: p50 {r_['app']['p50_ms']} ms, p95 "
                    f"{r_['app']['p95_ms']} ms, settled p95 {r_['app_settled']['p95_ms']} ms; "
                    f"floor p95 {r_['floor']['p95_ms']} ms (load {load_average()})",
                    flush=True,
                )
        browser.close()
    summary: dict[str, Any] = {}
    for s in SERVERS:
        quiet = merged(f"{s}, idle", blocks[(s, "idle")]).result()
        busy = merged(f"{s}, cycling", blocks[(s, "cycling")]).result()
        summary[s] = {
            "idle": _brief(quiet),
            "cycling": _brief(busy),
            "ratio_p50": round(busy["app"]["p50_ms"] / quiet["app"]["p50_ms"], 2),
            "ratio_p95": round(busy["app"]["p95_ms"] / quiet["app"]["p95_ms"], 2),
            "settled_ratio_p95": round(
                busy["app_settled"]["p95_ms"] / quiet["app_settled"]["p95_ms"], 2
            ),
            "floor_ratio_p95": round(busy["floor"]["p95_ms"] / quiet["floor"]["p95_ms"], 2),
            "analyst_visits": len(visits[s]),
            "analyst_visit_ms": latency_summary(visits[s]),
            "idle_ms": quiet["app_ms"],
            "cycling_ms": busy["app_ms"],
        }
    return {
        "benchmark": "analyst_contention",
        "machine": f"{machine()}, Chromium {chromium_version()}",
        "cases": scale.cases,
        "readers": scale.readers,
        "models": scale.models,
        "rounds": rounds,
        "block": block,
        "analyst_nice": nice,
        "summary": summary,
        "target_ratio_p95": TARGET,
        "met": summary["worker"]["ratio_p95"] <= TARGET,
        "load_start": load_start,
        "load_end": load_average(),
        "setup_s": round(setup_s, 1),
        "total_s": round(time.monotonic() - started, 1),
    }


def _brief(r: dict[str, Any]) -> dict[str, Any]:
    return {
        "transitions": r["transitions"],
        "app": r["app"],
        "app_settled": r["app_settled"],
        "floor": r["floor"],
        "load": [r["load_start"], r["load_end"]],
    }


def markdown(res: dict[str, Any], command: str) -> str:
    rows = [
        "| server | analyst | transitions | p50 ms | p95 ms | settled p95 ms | floor p95 ms |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for s, fig in res["summary"].items():
        for a in ("idle", "cycling"):
            f = fig[a]
            rows.append(
                f"| {s} | {a} | {f['transitions']} | {f['app']['p50_ms']} | {f['app']['p95_ms']} "
                f"| {f['app_settled']['p95_ms']} | {f['floor']['p95_ms']} |"
            )
        rows.append(
            f"| {s} | **cycling / idle** | | {fig['ratio_p50']}x | **{fig['ratio_p95']}x** "
            f"| {fig['settled_ratio_p95']}x | {fig['floor_ratio_p95']}x |"
        )
    w = res["summary"]["worker"]
    return "\n".join(
        [
            SECTION,
            "",
            f"Command: `{command}` ({res['machine']}).",
            "",
            *para(
                f"Synthetic study ({res['cases']} cases, {res['readers']} readers,"
                f" {res['models']} model runs, every answer graded), SQLite. Two app servers of"
                " this checkout serve it side by side: `worker` (the default: the analyst pages"
                " load and score the study in a worker process at low CPU priority) and"
                " `in-process` (`READERSTUDY_SCORING_WORKER=off`). On each, a reader answers"
                " (benchmarks/transition.py's transitions, each followed by one on the bare"
                " floor page) while that server's analyst, a Chromium of its own, is idle or"
                " visits the analyst pages one after the other without pause (B = 2000; each"
                " reader answer makes the figures out of date, so every analyst page run loads"
                f" and scores again). Blocks of {res['block']} transitions, {res['rounds']}"
                " rounds of the four (server, analyst) blocks in alternating order: each"
                " ratio compares figures measured interleaved in the same run. The analyst of"
                f" `worker` made {w['analyst_visits']} page visits in its cycling blocks"
                f" (p50 {w['analyst_visit_ms']['p50_ms']} ms); the one of `in-process`"
                f" {res['summary']['in-process']['analyst_visits']}. The analysts' Chromiums"
                f" run at nice {res.get('analyst_nice', 0)}, their autogroups too"
                " (`--analyst-nice`): in use the analyst's browser draws on the analyst's own"
                " computer, not on the server's two cores. Each server runs in a session of"
                " its own, as a service does (the kernel shares the CPU between sessions"
                " first, and the driver's may be niced as a whole). Load (1-minute average)"
                f" {res['load_start']} at the start, {res['load_end']} at the end (the"
                " benchmark's own two servers, worker, three Chromiums and floor page on 2"
                " cores, and whatever else runs), so the absolute figures are noisy; the"
                f" ratios are what this measures. Target: `worker` p95 cycling at most"
                f" {TARGET}x idle: {'met' if res['met'] else 'not met'} in this run.",
            ),
            *rows,
        ]
    )


def main() -> int:
    if len(sys.argv) == 5 and sys.argv[1] == "--cycle":
        return cycle(sys.argv[2], sys.argv[3], Path(sys.argv[4]))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    # 8 rounds: 80 transitions a cell, so the p95 is the fourth-slowest, not the third
    # of 50 (transitions come in whole frames, and one slow frame moved 5 rounds' ratio)
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--block", type=int, default=10, help="transitions per block")
    parser.add_argument("--quick", action="store_true", help="a small study, one short round")
    parser.add_argument(
        "--analyst-nice",
        type=int,
        default=19,
        help="niceness of the analyst's browser, which in real use runs on its own computer",
    )
    parser.add_argument("--update-doc", type=Path)
    parser.add_argument("--json-out", type=Path)
    parser.add_argument("--keep", action="store_true", help="keep the work folder (logs)")
    args = parser.parse_args()
    if not Path(CHROMIUM).exists():
        return emit({"benchmark": "analyst_contention", "skipped": f"no Chromium at {CHROMIUM}"})
    scale = LAB
    if args.quick:
        args.rounds, args.block = 1, 2
        scale = Scale(cases=12, readers=3, models=2)
    work = Path(tempfile.mkdtemp(prefix="analyst-contention-"))
    res = run(args.rounds, args.block, scale, work, args.analyst_nice)
    if args.keep:
        print(f"work folder: {work}", file=sys.stderr)
    else:
        import shutil

        shutil.rmtree(work, ignore_errors=True)
    section = markdown(res, shown_command("analyst_contention", sys.argv[1:]))
    print(section, file=sys.stderr)
    if args.update_doc and not args.quick:
        update_doc(args.update_doc, section, SECTION)
    return emit(res, args.json_out)


if __name__ == "__main__":
    raise SystemExit(main())
