#!/usr/bin/env python
"""Load figures for docs/performance.md ("## Load") and docs/reliability.md.

Runs scripts/loadtest.py in the three configurations of issue 9 and prints a
markdown table (optionally rewriting the ``## Load`` section of a file, leaving
every other section alone):

1. 50 readers x 200 cases, SQLite, one app process;
2. 50 readers x 200 cases, PostgreSQL, one app process;
3. 200 readers x 200 cases, PostgreSQL, two replica processes, every reader
   switching replica half-way.

    .venv/bin/python -m benchmarks.load_bench \
        --postgres-url postgresql://postgres@127.0.0.1:5432/postgres \
        [--quick] [--update-doc docs/performance.md]

Each PostgreSQL run gets a fresh database (created through ``--postgres-url``,
dropped afterwards unless ``--keep``). ``--quick`` runs 10 readers x 20 cases
(and 20 readers on two replicas) for a smoke test. Every run is bounded by the
load test's own ``--time-limit`` and talks only to the given database.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from benchmarks.kit.doc import ROOT, shown_command, update_doc
from benchmarks.kit.measure import load_average

LOADTEST = ROOT / "scripts" / "loadtest.py"
SECTION = "## Load"


def _admin(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def _with_db(url: str, name: str) -> str:
    from sqlalchemy.engine import make_url

    return (
        make_url(url)
        .set(drivername="postgresql+psycopg", database=name)
        .render_as_string(hide_password=False)
    )


def run_one(args: list[str], time_limit: int) -> dict[str, Any]:
    cmd = [sys.executable, str(LOADTEST), *args, "--time-limit", str(time_limit)]
    print("load_bench:", " ".join(a if "@" not in a else "<url>" for a in cmd[1:]), flush=True)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=time_limit + 300)
    lines = proc.stdout.strip().splitlines()
    if not lines:
        raise SystemExit(f"loadtest printed nothing:\n{proc.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(lines[-1])
    result["exit"] = proc.returncode
    return result


def configurations(quick: bool) -> list[tuple[str, int, int, int, bool]]:
    """(label, readers, cases, replicas, postgres)"""
    if quick:
        return [
            ("SQLite, 1 process", 10, 20, 1, False),
            ("PostgreSQL, 1 process", 10, 20, 1, True),
            ("PostgreSQL, 2 replicas, readers switch", 20, 20, 2, True),
        ]
    return [
        ("SQLite, 1 process", 50, 200, 1, False),
        ("PostgreSQL, 1 process", 50, 200, 1, True),
        ("PostgreSQL, 2 replicas, readers switch", 200, 200, 2, True),
    ]


def table(rows: list[tuple[str, dict[str, Any]]]) -> str:
    head = (
        "| configuration | readers x cases | answers committed | lost | duplicated "
        "| two-tab races | p50 ms | p95 ms | p99 ms | answers/s | wall s |\n"
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
    )
    body = "".join(
        f"| {label} | {r['readers']} x {r['cases']} | {r['committed']:,} of {r['expected']:,} "
        f"| {r['lost']} | {r['duplicated']} | {r['races']} | {r['p50_ms']} | {r['p95_ms']} "
        f"| {r['p99_ms']} | {r['answers_per_s']} | {r['wall_s']} |\n"
        for label, r in rows
    )
    return head + body


def section(
    rows: list[tuple[str, dict[str, Any]]], argv: list[str], before: float, after: float
) -> str:
    return f"""{SECTION}

Measured with

    {shown_command("load_bench", argv)}

which runs `scripts/loadtest.py` (see [reliability.md](reliability.md)): simulated
readers sign in with their tokens and loop `next_case` -> think 20-200 ms ->
`submit_answer` through the exam service layer, each with its own session, in
worker processes that build their engine exactly as the app does; 2% of answers
are sent twice at the same moment (two tabs) with different text. Latency is one
`submit_answer` call (session, validation, insert, commit) as the reader's
thread sees it, queueing for the GIL and the connection pool included. A run
passes only with every answer committed, 0 lost and 0 duplicated, checked
against the acknowledged log. x86_64, 2 cores shared by the load generator, the
app processes and the database; load average (1 min) {before} at the start,
{after} at the end. Percentiles are nearest rank (see the introduction).

{table(rows)}
Simulated readers answer every 20-200 ms, a few hundred times the pace of real
readers (10-60 s per case), so these are stress figures: 200 real readers
produce about 5-20 answers a second.
"""


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--postgres-url", help="an admin URL of the PostgreSQL server (skip PG if unset)"
    )
    p.add_argument("--quick", action="store_true", help="small runs, for a smoke test")
    p.add_argument("--time-limit", type=int, default=900, help="per run, seconds")
    p.add_argument("--update-doc", help="rewrite the '## Load' section of this markdown file")
    p.add_argument("--json-out", help="write all results here")
    p.add_argument("--keep", action="store_true", help="keep the PostgreSQL databases")
    args = p.parse_args(argv)
    import psycopg

    before = load_average()
    rows: list[tuple[str, dict[str, Any]]] = []
    for label, readers, cases, replicas, postgres in configurations(args.quick):
        run_args = ["--readers", str(readers), "--cases", str(cases), "--replicas", str(replicas)]
        name = None
        if postgres:
            if not args.postgres_url:
                print(f"load_bench: skipping '{label}': no --postgres-url", flush=True)
                continue
            name = f"rs_load_{time.strftime('%Y%m%d%H%M%S')}_{uuid.uuid4().hex[:4]}"
            with psycopg.connect(_admin(args.postgres_url), autocommit=True) as conn:
                conn.execute(f'CREATE DATABASE "{name}"')
            run_args += ["--database-url", _with_db(args.postgres_url, name)]
        try:
            result = run_one(run_args, args.time_limit)
        finally:
            if name and not args.keep:
                with psycopg.connect(_admin(args.postgres_url), autocommit=True) as conn:
                    conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        rows.append((label, result))
        print(table([(label, result)]), flush=True)
    after = load_average()
    shown_argv = list(argv if argv is not None else sys.argv[1:])
    text = section(rows, shown_argv, before, after)
    print(text)
    if args.json_out:
        Path(args.json_out).write_text(json.dumps([r for _, r in rows], indent=1))
    if args.update_doc:
        update_doc(Path(args.update_doc), text, SECTION)
    failed = [label for label, r in rows if r["exit"] != 0 or r["lost"] or r["duplicated"]]
    if failed:
        print(f"load_bench: FAILED: {failed}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
