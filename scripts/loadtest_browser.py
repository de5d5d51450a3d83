#!/usr/bin/env python
"""Real-browser load: N Chromium contexts take the exam on R served app replicas.

    python scripts/loadtest_browser.py --readers 6 --cases 10 --replicas 2 \
        [--database-url URL] [--kill-at 0.5]

The script builds a fresh synthetic study (as scripts/loadtest.py does), serves
``readerstudy serve`` on R free loopback ports sharing one database, one asset
folder and one ``server.cookieSecret`` (the production shape of docs/deploy.md),
then drives one Chromium context per reader through the stable widget keys
(``diagnosis``, ``likert``, ``submit``) with random pacing. Readers start on
replica i % R and sign in again on the next replica half-way through.

An answer is acknowledged when the case panel shows another case (or the page
the finish screen) after the click: the panel moves on only once the server has
committed the answer. ``--kill-at F`` kill -9s replica 0 once that fraction
of all answers is acknowledged and restarts it on the same port; its readers
reload and resume. The last line of standard output is the same JSON object as
scripts/loadtest.py's (readers, cases, attempted, committed, lost, duplicated,
p50_ms, p95_ms, p99_ms, ...). Bounded: ``--time-limit`` seconds, loopback only.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# loadkit beside this file; benchmarks.kit (the one percentile) from the repository root
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import contextlib

import loadkit
from sqlalchemy.engine import make_url
from sqlmodel import Session, col, select

from benchmarks.kit.chromium import CHROMIUM, CHROMIUM_ARGS
from benchmarks.kit.servers import Server, free_port, wait_healthy

ROOT = Path(__file__).resolve().parents[1]
CASE_RE = re.compile(r"Case (\d+) of (\d+)")
# An answer is acknowledged when the case panel shows another case than the one answered
# (it does so only on the server's word that the answer is committed), or the exam is
# finished. Not the header: it follows a moment later, and a reconnect to a restarted
# server redraws it without any answer stored.
MOVED_ON = """(answered) => {
    if (document.body.innerText.includes('finished')) return true;
    for (const host of document.querySelectorAll('*')) {
        const panel = host.shadowRoot && host.shadowRoot.querySelector('[data-case]');
        if (panel) return panel.dataset.case !== answered;
    }
    return false;
}"""


class Replica:
    """One ``readerstudy serve`` process on a fixed port; kill -9 and restart keep the port."""

    def __init__(self, index: int, env: dict[str, str], run_dir: Path) -> None:
        self.index = index
        self.port = free_port()
        self.env = env
        self.log = run_dir / f"replica-{index}.log"
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 90) -> None:
        with self.log.open("ab") as fh:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "reader_app.cli", "serve", "--port", str(self.port)],
                env=self.env,
                stdout=fh,
                stderr=subprocess.STDOUT,
                cwd=ROOT,
            )
        wait_healthy(Server(self.url, self.proc, self.log), timeout)

    def kill9(self) -> None:
        if self.proc and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def onboard(study: loadkit.LoadStudy) -> None:
    """Give every load reader a profile through the real service, where the app asks for one."""
    try:
        from reader_app.exam.profile import save_profile, validate_profile
    except ImportError:
        return
    from reader_app.core.db import make_engine
    from reader_app.models import Reader

    engine = make_engine(study.database_url, pooled=False)
    with Session(engine) as session:
        readers = session.exec(select(Reader).where(Reader.study_id == study.study_id)).all()
        for reader in readers:
            profile = validate_profile("board-certified", None, 10, "load test")
            save_profile(session=session, reader=reader, profile=profile)
    engine.dispose()


class Run:
    def __init__(self, args: argparse.Namespace, study: loadkit.LoadStudy, replicas: list[Replica]):
        self.args = args
        self.study = study
        self.replicas = replicas
        self.records: list[dict[str, Any]] = []
        self.acked = 0
        self.kills: list[dict[str, Any]] = []
        self.deadline = time.monotonic() + args.time_limit
        self.errors: list[str] = []
        self.reloads = 0
        self.replica_down = asyncio.Event()
        self.replica_down.set()  # set = all replicas up

    async def maybe_kill(self) -> None:
        fractions = self.args.kill_fractions
        expected = self.args.readers * self.args.cases
        if len(self.kills) < len(fractions) and self.acked >= fractions[len(self.kills)] * expected:
            victim = self.replicas[0]
            self.kills.append({"replica": 0, "acked_before": self.acked})
            self.replica_down.clear()
            victim.kill9()
            print(f"loadtest_browser: kill -9 replica 0 after {self.acked} acks", file=sys.stderr)
            await asyncio.sleep(self.args.restart_delay)
            await asyncio.to_thread(victim.start)
            self.replica_down.set()

    async def reader(self, browser: Any, index: int, code: str, token: str) -> None:
        rng = random.Random(f"{self.args.seed}/{code}")
        lo, hi = self.args.think
        half = self.args.cases // 2
        on = index % len(self.replicas)
        switched = len(self.replicas) == 1 or self.args.no_switch
        context = await browser.new_context(viewport={"width": 1280, "height": 900})
        page = await context.new_page()
        page.set_default_timeout(30_000)
        answered = 0
        # case (the form's own id, else "slot:N" from the header) -> what was sent unacked
        unacknowledged: dict[str, tuple[str, int]] = {}
        try:
            await self.open(page, on, token)
            while time.monotonic() < self.deadline:
                state = await self.wait_ready(page, on, token)
                if state == "finished":
                    break
                number = await self.case_number(page, fallback=answered + 1)
                if not switched and number > half:
                    on = (on + 1) % len(self.replicas)  # sign in again on the next replica
                    switched = True
                    await self.open(page, on, token)
                    continue
                await asyncio.sleep(rng.uniform(lo, hi) / 1000)
                slot = number - 1
                key = await self.form_case(page) or f"slot:{slot}"
                if key in unacknowledged:  # a retry re-sends what the form still holds
                    text, likert = unacknowledged[key]
                else:
                    text = loadkit.answer_text(code, slot).replace("\n", " ").replace("\t", " ")
                    likert = rng.randint(0, 4)
                content = {"diagnosis": text, "likert": likert, "idk": False}
                error, ms, form_case = await self.answer(page, text, likert, number)
                key = form_case or key
                self.records.append(
                    {"t": "try", "reader": code, "slot": slot, "form_case": form_case, **content}
                )
                if error is None:
                    answered += 1
                    self.acked += 1
                    self.records.append(
                        {"t": "ack", "reader": code, "slot": slot, "form_case": form_case,
                         "ms": round(ms, 1), "replica": on,
                         # after an unacknowledged click the app keeps whichever came first
                         "duplicate": unacknowledged.pop(key, None) is not None, **content}
                    )  # fmt: skip
                    await self.maybe_kill()
                else:
                    unacknowledged[key] = (text, likert)
                    self.records.append(
                        {"t": "noack", "reader": code, "slot": slot, "form_case": form_case,
                         "error": error}
                    )  # fmt: skip
        except Exception as exc:
            self.errors.append(f"{code}: {type(exc).__name__}: {str(exc)[:300]}")
        finally:
            await context.close()

    async def open(self, page: Any, replica: int, token: str) -> None:
        """Load the exam; a load that fails is tried again a moment later, as a person would
        reload: a replica just restarted on a busy machine can take longer than one page
        timeout, and a replica killed while the page loads refuses until it is back."""
        for attempt in range(5):
            await self.replica_down.wait()  # a kill in progress: wait for the restart
            try:
                await page.goto(f"{self.replicas[replica].url}/?token={token}")
                return
            except Exception:
                if attempt == 4 or time.monotonic() > self.deadline:
                    raise
                self.reloads += 1
                await asyncio.sleep(1.0)

    async def wait_ready(self, page: Any, replica: int, token: str) -> str:
        """Wait for an answerable case or the finish screen, reloading after an outage."""
        for _ in range(5):
            try:
                await page.locator("[data-field=submit], :text('finished')").first.wait_for(
                    timeout=20_000
                )
                if await page.locator("[data-field=submit]").count():
                    return "case"
                return "finished"
            except Exception:
                self.reloads += 1
                with contextlib.suppress(Exception):  # the next round waits for it again
                    await self.open(page, replica, token)
        raise RuntimeError("the exam page never came back")

    async def form_case(self, page: Any) -> str | None:
        """The case id the case panel was drawn for (its ``data-case``), if any."""
        panel = page.locator("[data-case]")
        try:
            case = await panel.first.get_attribute("data-case", timeout=2_000)
        except Exception:
            return None
        return str(case) if case else None

    async def case_number(self, page: Any, fallback: int) -> int:
        match = CASE_RE.search(await page.locator("[data-testid='stMain']").inner_text())
        return int(match.group(1)) if match else fallback

    async def wait_idle(self, page: Any) -> None:
        """Wait until Streamlit is not running the script (its status widget is gone)."""
        with contextlib.suppress(Exception):
            await page.locator("[data-testid='stStatusWidget']").wait_for(
                state="detached", timeout=10_000
            )
        with contextlib.suppress(Exception):  # and every element of the last run replaced
            await page.wait_for_function(
                "() => document.querySelector('[data-stale=\"true\"]') === null",
                timeout=10_000,
            )

    async def answer(
        self, page: Any, text: str, likert: int, number: int
    ) -> tuple[str | None, float, str | None]:
        """Type, choose, click: (None, ms from click to next case, the form's case id),
        or (why not, 0, None). The case id is the panel's ``data-case``, if any."""
        form_case = None
        try:
            await self.wait_idle(page)  # a human is slower than a rerun; a driver must wait
            box = page.get_by_role("textbox", name="Diagnosis", exact=True)
            choice = page.get_by_role("radio", name=re.compile(rf"^{likert} · "))
            for _ in range(3):  # re-type if a rerun still in flight redrew the panel
                await box.fill(text)
                await choice.click()
                await self.wait_idle(page)
                if await box.input_value() == text and await choice.is_checked():
                    break
            form_case = await self.form_case(page)
            t0 = time.perf_counter()
            await page.get_by_role("button", name="Submit answer", exact=True).click()
            timeout = self.args.ack_timeout * 1000
            moved = page.locator(f":text('Case {number + 1} of'), :text('finished')")
            if not form_case:
                await moved.first.wait_for(timeout=timeout)
                return None, (time.perf_counter() - t0) * 1000, form_case
            # the panel moves on only once the server has committed
            await page.wait_for_function(MOVED_ON, arg=form_case, timeout=timeout)
            ms = (time.perf_counter() - t0) * 1000
            with contextlib.suppress(Exception):  # then the header, as a reader reads it
                await moved.first.wait_for(timeout=timeout)
            return None, ms, form_case
        except Exception as exc:  # not acknowledged (e.g. the replica died): re-read the page
            return f"{type(exc).__name__}: {exc}"[:300], 0.0, form_case


def verify_by_slot(
    study: loadkit.LoadStudy, records: list[dict[str, Any]]
) -> tuple[loadkit.Verification, int]:
    """Name each answer's case (the form's own case id, else the header's number mapped
    through the reader's order), then use loadkit.verify. Also count answers whose
    header number disagreed with the form's case (a stale header a person could misread)."""
    from reader_app.core.db import make_engine
    from reader_app.models import Case, Reader, ReaderOrder

    engine = make_engine(study.database_url, pooled=False)
    with Session(engine) as session:
        rows = session.exec(
            select(Reader.code, ReaderOrder.slot, Case.public_id)
            .join(ReaderOrder, col(ReaderOrder.reader_id) == Reader.id)
            .join(Case, col(Case.id) == ReaderOrder.case_id)
            .where(Reader.study_id == study.study_id)
        ).all()
    engine.dispose()
    public = {(code, slot): pid for code, slot, pid in rows}
    mapped, mismatched = [], 0
    for r in records:
        if r["t"] not in ("try", "ack"):
            continue
        by_header = public.get((r["reader"], r["slot"]), "?")
        form_case = r.get("form_case")
        if form_case and form_case != by_header:
            mismatched += 1
        mapped.append({**r, "case": form_case or by_header})
    return loadkit.verify(study, mapped), mismatched


async def drive(run: Run) -> None:
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(
            executable_path=run.args.chromium, headless=True, args=CHROMIUM_ARGS
        )
        try:
            await asyncio.wait_for(
                asyncio.gather(
                    *(run.reader(browser, i, code, token)
                      for i, (code, token) in enumerate(run.study.readers))
                ),
                timeout=run.args.time_limit + 60,
            )  # fmt: skip
        finally:
            await browser.close()


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--readers", type=int, default=4)
    p.add_argument("--cases", type=int, default=6)
    p.add_argument("--replicas", type=int, default=2)
    p.add_argument("--database-url", help="default: a throwaway SQLite file")
    p.add_argument("--no-switch", action="store_true", help="readers stay on one replica")
    p.add_argument("--think-ms", default="100:400", help="pause before each answer, ms")
    p.add_argument("--kill-at", default="", help="answer fractions at which to kill -9 replica 0")
    p.add_argument("--restart-delay", type=float, default=1.0)
    p.add_argument(
        "--ack-timeout", type=float, default=20, help="seconds to wait for the next case"
    )
    p.add_argument("--time-limit", type=float, default=300)
    p.add_argument("--seed", type=int, default=20260101)
    p.add_argument("--records-out", help="write every try/ack/noack record here (JSON lines)")
    p.add_argument("--chromium", default=CHROMIUM)
    args = p.parse_args(argv)
    if args.readers < 1 or args.cases < 2 or args.replicas < 1:
        p.error("--readers >= 1, --cases >= 2 and --replicas >= 1")
    lo, _, hi = args.think_ms.partition(":")
    args.think = (float(lo), float(hi or lo))
    args.kill_fractions = sorted(float(x) for x in args.kill_at.split(",") if x.strip())
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    run_dir = Path(tempfile.mkdtemp(prefix="readerstudy-browser-load-"))
    replicas: list[Replica] = []
    try:
        url = args.database_url or f"sqlite:///{run_dir / 'load.db'}"
        if url.startswith("postgresql://"):
            url = "postgresql+psycopg://" + url[len("postgresql://") :]
        data_dir = run_dir / "data"
        study = loadkit.create_load_study(url, data_dir / "assets", args.readers, args.cases)
        onboard(study)
        env = {k: v for k, v in os.environ.items() if not k.startswith("STREAMLIT_")}
        env.update(
            READERSTUDY_DATABASE_URL=url,
            READERSTUDY_DATA_DIR=str(data_dir),  # one shared asset folder
            STREAMLIT_SERVER_COOKIE_SECRET=secrets.token_urlsafe(32),  # shared by all replicas
        )
        replicas = [Replica(i, env, run_dir) for i in range(args.replicas)]
        t0 = time.monotonic()
        for replica in replicas:
            replica.start()
        print(
            f"loadtest_browser: {len(replicas)} replica(s) healthy in {time.monotonic() - t0:.1f}s",
            file=sys.stderr,
            flush=True,
        )
        run = Run(args, study, replicas)
        started = time.monotonic()
        asyncio.run(drive(run))
        wall_s = time.monotonic() - started
        check, header_mismatch = verify_by_slot(study, run.records)
        if args.records_out:
            with open(args.records_out, "w", encoding="utf-8") as fh:
                fh.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in run.records)
        latencies = [r["ms"] for r in run.records if r["t"] == "ack"]
        expected = args.readers * args.cases
        summary: dict[str, Any] = {
            "readers": args.readers,
            "cases": args.cases,
            "backend": make_url(url).get_backend_name(),
            "replicas": args.replicas,
            "switch_replica": args.replicas > 1 and not args.no_switch,
            "attempted": sum(1 for r in run.records if r["t"] == "try"),
            "acknowledged": check.acknowledged,
            "committed": check.committed,
            "expected": expected,
            "complete": check.committed == expected,
            "lost": check.lost,
            "duplicated": check.duplicated,
            **loadkit.latency_summary(latencies),
            "committed_unacknowledged": check.committed_unacknowledged,
            "reloads": run.reloads,
            "header_mismatch": header_mismatch,
            "unacknowledged_clicks": sum(1 for r in run.records if r["t"] == "noack"),
            "kills": len(run.kills),
            "errors": len(run.errors),
            "wall_s": round(wall_s, 1),
            "think_ms": list(args.think),
            "detail": {
                "kill_log": run.kills,
                "examples": check.examples,
                "errors": run.errors[:5],
                "noack": [r["error"] for r in run.records if r["t"] == "noack"][:5],
            },
        }
    finally:
        for replica in replicas:
            replica.stop()
        shutil.rmtree(run_dir, ignore_errors=True)
    print(
        f"loadtest_browser: {summary['committed']}/{expected} answers committed, lost "
        f"{summary['lost']}, duplicated {summary['duplicated']}, p95 {summary['p95_ms']} ms",
        flush=True,
    )
    print(json.dumps(summary, ensure_ascii=False), flush=True)
    ok = summary["complete"] and not (summary["lost"] or summary["duplicated"] or run.errors)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
