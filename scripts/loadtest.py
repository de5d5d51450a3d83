#!/usr/bin/env python
"""Drive N simulated readers through the exam service layer and count lost or doubled answers.

    python scripts/loadtest.py --readers 50 --cases 200 [--database-url URL]
                               [--replicas 2] [--kill-at 0.3,0.6] [--think-ms 20:200]

The script creates its own fresh study (tiny synthetic PNG cases) in the target
database, then starts ``--replicas`` worker processes. Each worker is a stand-in
for one app replica: its own engine and connection pool (``reader_app.core.db.make_engine``,
exactly as the app builds it) and one thread per simulated reader, which signs
in with the reader's token and then loops ``next_case`` -> think -> ``submit_answer``
with its own session per call, as the exam page does. With two or more replicas
every reader answers the first half of the exam on one replica and "signs in
again" on the next for the second half, which resumes from the database alone.

A small share of answers is submitted twice at the same moment with different
text (two tabs racing): exactly one may create the row. Transient database
errors (a PostgreSQL restart, a dropped connection) are retried for up to
``--retry-window`` seconds with the same answer, so a commit whose
acknowledgement was lost comes back as "already saved", never as a second row.

Every acknowledged answer is appended to a per-process log with one write()
before the next case is fetched, so ``--kill-at`` (kill -9 of a replica when
that fraction of all answers is acknowledged, then a restart) can prove that
nothing acknowledged before the kill is lost.

Everything is bounded: ``--time-limit`` stops readers and workers, loads go
only to the database URL given (loopback in our tests), and the run ends by
itself. The last line of standard output is one JSON object (DESIGN.md section 4);
the exit code is 0 only if the exam completed with 0 lost and 0 duplicated.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

# loadkit beside this file; benchmarks.kit (the one percentile) from the repository root
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import loadkit
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import Engine, make_url
from sqlmodel import Session

T = TypeVar("T")
TRANSIENT = (sa_exc.OperationalError, sa_exc.InterfaceError, sa_exc.TimeoutError)


# --------------------------------------------------------------------------- worker


class MarkerWatcher:
    """One thread polls the hand-over folder and wakes readers waiting to switch replica."""

    def __init__(self, folder: Path, deadline: float) -> None:
        self.folder = folder
        self.deadline = deadline
        self.events: dict[str, threading.Event] = {}
        self._stop = threading.Event()
        threading.Thread(target=self._poll, daemon=True).start()

    def event(self, code: str) -> threading.Event:
        return self.events.setdefault(code, threading.Event())

    def _poll(self) -> None:
        while not self._stop.is_set() and time.time() < self.deadline:
            for name in os.listdir(self.folder):
                self.event(name).set()
            time.sleep(0.05)

    def stop(self) -> None:
        self._stop.set()


class Replica:
    """One worker process: an engine like an app replica's, one thread per reader."""

    def __init__(self, spec: dict[str, Any]) -> None:
        from reader_app.core.db import make_engine

        self.spec = spec
        self.study = loadkit.LoadStudy.from_json(spec["study"])
        self.engine: Engine = make_engine(self.study.database_url)
        self.deadline: float = spec["deadline"]
        self.half: int = spec["half"]
        self.handover = Path(spec["run_dir"]) / "handover"
        self.log = loadkit.AckLog(
            Path(spec["run_dir"]) / f"acks-r{spec['replica']}-{os.getpid()}.jsonl"
        )
        self.watcher = MarkerWatcher(self.handover, self.deadline)

    def retry(self, fn: Callable[[Session], T], who: str) -> T:
        """Run fn in a fresh session; retry transient database errors within the window."""
        started = time.monotonic()
        pause = 0.05
        while True:
            try:
                with Session(self.engine, expire_on_commit=False) as session:
                    return fn(session)
            except TRANSIENT as exc:
                waited = time.monotonic() - started
                self.log.write(t="retry", reader=who, error=type(exc).__name__)
                if waited > self.spec["retry_window"] or time.time() > self.deadline:
                    raise
                time.sleep(pause)
                pause = min(pause * 2, 1.0)

    def submit(
        self,
        code: str,
        reader: Any,
        case: Any,
        text: str | None,
        rng: random.Random,
        shown_at: Any,
        barrier: threading.Barrier | None = None,
    ) -> None:
        from reader_app.exam.submit import submit_answer, validate_answer

        idk = text is None
        answer = validate_answer(text, None if idk else rng.randint(0, 4), idk)
        content = {"diagnosis": answer.diagnosis, "likert": answer.likert, "idk": answer.idk}
        self.log.write(t="try", reader=code, case=case.public_id, ts=time.time(), **content)
        if barrier is not None:
            barrier.wait(timeout=10)
        t0 = time.perf_counter()
        result = self.retry(
            lambda s: submit_answer(
                session=s,
                reader=reader,
                case_public_id=case.public_id,
                answer=answer,
                shown_at=shown_at,
                image_sha256=case.image_sha256,
                meta={"loadtest": True, "replica": self.spec["replica"]},
            ),
            code,
        )
        ms = (time.perf_counter() - t0) * 1000
        self.log.write(
            t="ack",
            reader=code,
            case=case.public_id,
            response_id=result.response_id,
            duplicate=result.duplicate,
            ms=round(ms, 3),
            ts=time.time(),
            race=barrier is not None,
            **content,
        )

    def run_reader(self, code: str, token: str, segment: str) -> None:
        from reader_app.core.auth import authenticate
        from reader_app.exam.next_case import next_case
        from reader_app.exam.order import ensure_order
        from reader_app.models import utcnow

        spec = self.spec
        rng = random.Random(f"{spec['seed']}/{code}/{segment}/{os.getpid()}")
        lo, hi = spec["think_ms"]
        try:
            if segment == "second":
                while not self.watcher.event(code).wait(0.5):
                    if time.time() > self.deadline:
                        return
            reader = self.retry(lambda s: authenticate(session=s, token=token), code)
            self.retry(lambda s: ensure_order(session=s, reader=reader), code)
            while time.time() < self.deadline:
                case = self.retry(lambda s: next_case(session=s, reader=reader), code)
                if case is None or (segment == "first" and case.slot >= self.half):
                    break
                shown_at = utcnow()
                time.sleep(rng.uniform(lo, hi) / 1000)
                text = (
                    None
                    if rng.random() < spec["idk_rate"]
                    else loadkit.answer_text(code, case.slot)
                )
                if rng.random() < spec["race_rate"]:
                    barrier = threading.Barrier(2)
                    twin_text = loadkit.answer_text(code, case.slot, " (tab 2)")
                    twin = threading.Thread(
                        target=self.submit,
                        args=(
                            code,
                            reader,
                            case,
                            twin_text,
                            random.Random(rng.random()),
                            shown_at,
                            barrier,
                        ),
                    )
                    twin.start()
                    self.submit(code, reader, case, text, rng, shown_at, barrier)
                    twin.join()
                else:
                    self.submit(code, reader, case, text, rng, shown_at)
            if segment == "first":
                (self.handover / code).touch()
        except Exception as exc:  # a reader that cannot go on is reported, not hidden
            self.log.write(t="error", reader=code, error=f"{type(exc).__name__}: {exc}"[:500])

    def run(self) -> None:
        threads = [
            threading.Thread(target=self.run_reader, args=(code, token, segment), daemon=True)
            for code, token, segment in self.spec["assignments"]
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(max(0.0, self.deadline - time.time()) + 5)
        self.watcher.stop()
        self.log.close()
        self.engine.dispose()


def worker_main(spec_path: str) -> int:
    spec = json.loads(Path(spec_path).read_text())
    Replica(spec).run()
    return 0


# --------------------------------------------------------------------------- orchestrator


def normalise_url(url: str) -> str:
    return (
        "postgresql+psycopg://" + url[len("postgresql://") :]
        if url.startswith("postgresql://")
        else url
    )


def assignments(readers: list[tuple[str, str]], replicas: int, switch: bool) -> list[list[Any]]:
    """Reader i answers the first half on replica i % R and the rest on replica (i+1) % R."""
    plan: list[list[Any]] = [[] for _ in range(replicas)]
    for i, (code, token) in enumerate(readers):
        if replicas == 1 or not switch:
            plan[i % replicas].append((code, token, "all"))
        else:
            plan[i % replicas].append((code, token, "first"))
            plan[(i + 1) % replicas].append((code, token, "second"))
    return plan


class AckCounter:
    """Counts ``ack`` lines across the logs, reading only what was appended since last time."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.offsets: dict[Path, int] = {}
        self.count = 0

    def poll(self) -> int:
        for path in self.run_dir.glob("acks-*.jsonl"):
            with path.open("rb") as fh:
                fh.seek(self.offsets.get(path, 0))
                data = fh.read()
            complete = data[: data.rfind(b"\n") + 1]
            self.offsets[path] = self.offsets.get(path, 0) + len(complete)
            self.count += complete.count(b'"t": "ack"')
        return self.count


def spawn(spec_path: Path, log_path: Path) -> subprocess.Popen[bytes]:
    with log_path.open("ab") as log:
        return subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--worker", str(spec_path)],
            stdout=log,
            stderr=subprocess.STDOUT,
        )


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--readers", type=int, help="simulated readers (required)")
    p.add_argument("--cases", type=int, help="cases in the synthetic study (required)")
    p.add_argument(
        "--database-url",
        help="SQLAlchemy URL of the target database (default: a throwaway SQLite file); "
        "the run adds a fresh study there and leaves it as evidence",
    )
    p.add_argument("--asset-dir", help="asset folder (default: inside the run folder)")
    p.add_argument("--replicas", type=int, default=1, help="worker processes (default 1)")
    p.add_argument(
        "--no-switch", action="store_true", help="keep each reader on one replica all run"
    )
    p.add_argument("--think-ms", default="20:200", help="per-answer pause range, ms (20:200)")
    p.add_argument("--race-rate", type=float, default=0.02, help="share of answers sent twice")
    p.add_argument("--idk-rate", type=float, default=0.1, help="share of 'I don't know'")
    p.add_argument(
        "--kill-at",
        default="",
        help="comma-separated fractions of all answers; at each, kill -9 a replica and restart it",
    )
    p.add_argument("--restart-delay", type=float, default=0.5, help="seconds before a restart")
    p.add_argument("--retry-window", type=float, default=60, help="seconds a reader retries")
    p.add_argument("--time-limit", type=float, default=900, help="hard stop, seconds (900)")
    p.add_argument("--seed", type=int, default=20260101)
    p.add_argument("--run-dir", help="folder for logs (default: a temporary folder, removed)")
    p.add_argument("--json-out", help="also write the JSON summary to this file")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        return args
    if not args.readers or not args.cases or args.readers < 1 or args.cases < 1:
        p.error("--readers and --cases must be positive whole numbers")
    if args.replicas < 1:
        p.error("--replicas must be at least 1")
    lo, _, hi = args.think_ms.partition(":")
    args.think = (float(lo), float(hi or lo))
    args.kill_fractions = sorted(float(x) for x in args.kill_at.split(",") if x.strip())
    return args


def orchestrate(args: argparse.Namespace) -> dict[str, Any]:
    own_dir = args.run_dir is None
    run_dir = Path(args.run_dir or tempfile.mkdtemp(prefix="readerstudy-load-"))
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "handover").mkdir(exist_ok=True)
    url = normalise_url(args.database_url or f"sqlite:///{run_dir / 'load.db'}")
    asset_dir = Path(args.asset_dir or run_dir / "assets")
    procs: dict[int, subprocess.Popen[bytes]] = {}
    try:
        t_setup = time.monotonic()
        study = loadkit.create_load_study(url, asset_dir, args.readers, args.cases)
        setup_s = time.monotonic() - t_setup
        print(
            f"loadtest: study {study.slug}: {args.cases} cases, {args.readers} readers, "
            f"{args.replicas} replica(s) on {make_url(url).get_backend_name()} "
            f"(setup {setup_s:.1f}s)",
            file=sys.stderr,
            flush=True,
        )
        started = time.time()
        deadline = started + args.time_limit
        plan = assignments(study.readers, args.replicas, not args.no_switch)
        spec_paths = []
        for k, assigned in enumerate(plan):
            spec = {
                "study": study.to_json(),
                "replica": k,
                "assignments": assigned,
                "half": args.cases // 2,
                "think_ms": args.think,
                "race_rate": args.race_rate,
                "idk_rate": args.idk_rate,
                "deadline": deadline,
                "retry_window": args.retry_window,
                "run_dir": str(run_dir),
                "seed": args.seed,
            }
            path = run_dir / f"spec-r{k}.json"
            path.write_text(json.dumps(spec))
            spec_paths.append(path)
            procs[k] = spawn(path, run_dir / f"worker-r{k}.log")

        expected = args.readers * args.cases
        counter = AckCounter(run_dir)
        kills: list[dict[str, Any]] = []
        pending_kills = list(args.kill_fractions)
        timed_out = False
        while any(p.poll() is None for p in procs.values()):
            acked = counter.poll()
            if pending_kills and acked >= pending_kills[0] * expected:
                pending_kills.pop(0)
                # round robin over the replicas still running: one whose readers are all
                # done has exited, and a kill must still hit a live process
                turn = len(kills) % args.replicas
                alive = [k for k in sorted(procs) if procs[k].poll() is None]
                victim = min(alive, key=lambda k: (k - turn) % args.replicas) if alive else turn
                proc = procs[victim]
                if proc.poll() is None:
                    os.kill(proc.pid, signal.SIGKILL)
                    proc.wait()
                    kills.append({"replica": victim, "pid": proc.pid, "acked_before": acked})
                    print(
                        f"loadtest: kill -9 replica {victim} (pid {proc.pid}) after {acked} acks",
                        file=sys.stderr,
                        flush=True,
                    )
                    time.sleep(args.restart_delay)
                    procs[victim] = spawn(spec_paths[victim], run_dir / f"worker-r{victim}.log")
            if time.time() > deadline + 30:
                timed_out = True
                for p in procs.values():
                    if p.poll() is None:
                        p.kill()
                break
            time.sleep(0.02)
        wall_s = time.time() - started
        if time.time() > deadline:
            timed_out = True
        for k, p in procs.items():
            if p.wait() not in (0, -signal.SIGKILL):
                log_tail = (run_dir / f"worker-r{k}.log").read_text(errors="replace")[-2000:]
                print(f"loadtest: replica {k} exited {p.returncode}:\n{log_tail}", file=sys.stderr)

        records = list(loadkit.read_logs(sorted(run_dir.glob("acks-*.jsonl"))))
        check = loadkit.verify(study, records)
        latencies = [r["ms"] for r in records if r["t"] == "ack"]
        stamps = [r["ts"] for r in records if r["t"] in ("try", "ack")]
        active_s = max(stamps) - min(stamps) if stamps else 0.0
        errors = [r["error"] for r in records if r["t"] == "error"]
        summary: dict[str, Any] = {
            "readers": args.readers,
            "cases": args.cases,
            "backend": make_url(url).get_backend_name(),
            "replicas": args.replicas,
            "switch_replica": args.replicas > 1 and not args.no_switch,
            "attempted": sum(1 for r in records if r["t"] == "try"),
            "acknowledged": check.acknowledged,
            "committed": check.committed,
            "expected": expected,
            "complete": check.committed == expected,
            "lost": check.lost,
            "duplicated": check.duplicated,
            **loadkit.latency_summary(latencies),
            "duplicates_refused": check.duplicates_refused,
            "races": sum(1 for r in records if r["t"] == "ack" and r.get("race")) // 2,
            "committed_unacknowledged": check.committed_unacknowledged,
            "retries": sum(1 for r in records if r["t"] == "retry"),
            "errors": len(errors),
            "kills": len(kills),
            "wall_s": round(wall_s, 2),
            "active_s": round(active_s, 2),
            "answers_per_s": round(check.committed / active_s, 1) if active_s else None,
            "think_ms": list(args.think),
            "timed_out": timed_out,
            "study": study.slug,
            "database": make_url(url).render_as_string(hide_password=True),
            "detail": {
                "extra_rows": check.extra_rows,
                "content_mismatch": check.content_mismatch,
                "double_created": check.double_created,
                "wrong_id": check.wrong_id,
                "kill_log": kills,
                "examples": check.examples,
                "error_examples": errors[:5],
            },
        }
        return summary
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.kill()
                p.wait()
        if own_dir:
            shutil.rmtree(run_dir, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.worker:
        return worker_main(args.worker)
    summary = orchestrate(args)
    print(
        f"loadtest: {summary['committed']}/{summary['expected']} answers committed, "
        f"lost {summary['lost']}, duplicated {summary['duplicated']}, "
        f"p95 {summary['p95_ms']} ms, {summary['answers_per_s']} answers/s, "
        f"{summary['retries']} retries, {summary['errors']} errors, {summary['kills']} kills",
        flush=True,
    )
    line = json.dumps(summary, ensure_ascii=False)
    if args.json_out:
        Path(args.json_out).write_text(line + "\n")
    print(line, flush=True)
    ok = summary["complete"] and not (summary["lost"] or summary["duplicated"] or summary["errors"])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
