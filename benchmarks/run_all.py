#!/usr/bin/env python
"""Every benchmark in benchmarks/, one after the other, each in its own process, then a summary.

    .venv/bin/python -m benchmarks.run_all [--quick] [--no-doc] [--doc docs/performance.md]
        [--only NAME ...] [--skip NAME ...] [--postgres-url URL]

This is what ``make bench`` runs. Each benchmark rewrites its own section of
``docs/performance.md`` (scoring, strip building, load, transitions, memory);
this script then rewrites the page's introduction and its ``## Summary`` table
(headline figures, targets, time and load average of every benchmark) and
leaves every other section alone.

PostgreSQL: ``--postgres-url``, else ``READERSTUDY_TEST_POSTGRES_URL`` (the
Makefile exports a local default); when the server does not answer, the
PostgreSQL rows are left out and the summary says so.

``--quick`` runs each benchmark in its smallest form (a smoke run: minutes, not
figures) and writes no document. A new script in benchmarks/ that is not listed
below is still run (plainly, without arguments), with a warning, so "every
benchmark" stays true.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.kit.doc import DOC, ROOT, shown_command
from benchmarks.kit.measure import load_average, machine

HERE = Path(__file__).resolve().parent
SUMMARY = "## Summary"
HELPERS = {
    "__init__.py": "the package",
    "bare_app.py": "the floor page that transition.py serves",
    "submit_cost.py": "run by transition.py (the server-side submit); also standalone",
    "transition_report.py": "the write-up of transition.py's result",
    "run_all.py": "this script",
}

INTRO = """\
# Performance

Every benchmark of readerstudy on one page. `make bench` runs them all
(`python -m benchmarks.run_all`, one process each, one after the other) and rewrites
each section below from the figures it measured: the summary table first, then
scoring, strip building, load, case-to-case transitions, memory, readers while an
analyst browses, the analyst's pages and CT imports. Each section
gives its command, the machine, the figures and what they are compared with (a
naive implementation, a floor measured in the same run, or the code before the
work). The machine is a shared 2-core VM on which other test suites run too, so
every figure carries the load average it was taken under (the 1-minute average,
so a benchmark's starting figure still includes the tail of the one before it);
compare figures within a section's own run, not across runs.

Percentiles (p50, p95, p99) are nearest rank throughout: the p-th percentile of n
values is the ceil(p/100 x n)-th smallest, a latency that was actually observed
(the p95 of 30 transitions is their second-slowest). One definition,
`benchmarks/kit/measure.py`, used by every benchmark and by `scripts/loadtest.py`.
"""


@dataclass
class Bench:
    name: str
    script: str
    section: str
    full: Callable[[str, str, str], list[str]]  # (doc, postgres_url, json_path) -> argv
    quick: Callable[[str, str], list[str]]  # (postgres_url, json_path) -> argv
    headline: Callable[[dict[str, Any], str], tuple[str, str, bool | None]]
    json_file: bool = True  # the script writes --json-out; else its last stdout line


@dataclass
class Outcome:
    bench: Bench
    argv: list[str]
    code: int
    seconds: float
    load_start: float
    load_end: float
    result: dict[str, Any] = field(default_factory=dict)
    stdout: str = ""


def _pg(url: str) -> list[str]:
    return ["--postgres-url", url] if url else []


# --------------------------------------------------------------------------- headlines


def scoring_headline(_: dict[str, Any], out: str) -> tuple[str, str, bool | None]:
    rows = [line for line in out.splitlines() if line.startswith("| ") and " s |" in line]
    parts = [[c.strip() for c in row.strip("|").split("|")] for row in rows]
    if len(parts) < 2:
        return "(no table printed)", "both under 10 s", None
    (_, t1, _, n1, _, x1), (_, t2, _, n2, _, x2) = parts[0][:6], parts[1][:6]
    text = (
        f"1M rows, five metrics: {t1} (naive {n1}, {x1}); bootstrap B=2000: {t2} (naive {n2}, {x2})"
    )
    ok = all(float(t.split()[0]) < 10 for t in (t1, t2))
    return text, "both under 10 s", ok


def strip_headline(res: dict[str, Any], _: str) -> tuple[str, str, bool | None]:
    warm, gz = res.get("nii warm", {}), res.get("nii.gz warm", {})
    if not warm:
        return "(no result)", "", None
    text = (
        f".nii strip {warm['strip_s']} s, {warm['ratio']}x faster than a full load;"
        f" .nii.gz {gz.get('strip_s')} s ({gz.get('ratio')}x)"
    )
    return text, "uncompressed strip < 1 s and >= 5x", warm["strip_s"] < 1 and warm["ratio"] >= 5


def load_headline(res: dict[str, Any], _: str) -> tuple[str, str, bool | None]:
    runs = res.get("runs", [])
    if not runs:
        return "(no result)", "0 lost, 0 duplicated", None
    text = "; ".join(
        f"{r.get('backend', '?')} {r['readers']}x{r['cases']}"
        f"{' x' + str(r['replicas']) + ' replicas' if r.get('replicas', 1) > 1 else ''}:"
        f" submit p95 {r['p95_ms']} ms, {r['lost']} lost, {r['duplicated']} duplicated"
        for r in runs
    )
    ok = all(r["exit"] == 0 and not r["lost"] and not r["duplicated"] for r in runs)
    return text, "0 lost, 0 duplicated", ok


def transition_headline(res: dict[str, Any], _: str) -> tuple[str, str, bool | None]:
    if "main" not in res:
        return res.get("skipped", "(no result)"), "", None
    m = res["main"]
    sub = res["submit"]["backends"]["SQLite"]["total"]["p95_ms"]
    p50s = [r["app"]["p50_ms"] for r in res["runs"]]
    text = (
        f"p50 {m['app']['p50_ms']:.0f} ms, p95 {m['app']['p95_ms']:.0f} ms; floor"
        f" {m['floor']['p50_ms']:.0f} / {m['floor']['p95_ms']:.0f} ms; ratio p95"
        f" **{m['ratio_p95']}x**; server-side submit p95 {sub} ms (SQLite)"
    )
    if len(p50s) > 1:
        text += f"; scaling p50 {min(p50s):.0f}-{max(p50s):.0f} ms"
    ok = m["ratio_p95"] <= res["target_ratio_p95"] and sub <= res["submit"]["target_p95_ms"]
    return text, f"p95 <= {res['target_ratio_p95']}x floor; submit p95 <= 20 ms", ok


def memory_headline(res: dict[str, Any], _: str) -> tuple[str, str, bool | None]:
    if "peak_mib" not in res:
        return res.get("skipped", "(no result)"), "", None
    text = f"peak {res['peak_mib']} MiB with {res['readers']} sessions (idle {res['idle_mib']})"
    return text, "< 1 GiB", bool(res["met"])


def analyst_memory_headline(res: dict[str, Any], _: str) -> tuple[str, str, bool | None]:
    if "first_session_mib" not in res:
        return res.get("skipped", "(no result)"), "", None
    further = ", ".join(f"{f:+.1f}" for f in res["further_session_mib"]) or "none"
    text = (
        f"first analyst session {res['first_session_mib']:+.1f} MiB over idle "
        f"({res['idle_mib']}), further {further} MiB; {res['cases']} cases x "
        f"{res['readers'] + res['models']} responders"
    )
    return text, "first < 200 MiB; further < 20 MiB", bool(res["met"])


def analyst_pages_headline(res: dict[str, Any], _: str) -> tuple[str, str, bool | None]:
    if "summary" not in res:
        return res.get("skipped", "(no result)"), "", None
    this = res["summary"]["this"]
    first, second = this["first_ratio"], this["second_ratio"]
    text = (
        f"sign-in {this['first_ms']['Leaderboard']:.0f} ms ({first['Leaderboard']}x a bare "
        f"page's {res['floor_first_ms']:.0f} ms); first visits up to {max(first.values())}x, "
        f"second visits up to {max(second.values())}x"
    )
    return text, "first <= 1.3x; second <= 1.2x", bool(res["met"])


def analyst_contention_headline(res: dict[str, Any], _: str) -> tuple[str, str, bool | None]:
    if "summary" not in res:
        return res.get("skipped", "(no result)"), "", None
    w, old = res["summary"]["worker"], res["summary"]["in-process"]
    text = (
        f"reader transition p95 with an analyst cycling pages {w['ratio_p95']}x the analyst "
        f"idle (scoring in-process: {old['ratio_p95']}x); {res['readers']} readers, "
        f"{res['models']} models"
    )
    return text, "<= 1.3x", bool(res["met"])


def ct_import_headline(res: dict[str, Any], _: str) -> tuple[str, str, bool | None]:
    if "speedup" not in res:
        return res.get("skipped", "(no result)"), "", None
    before = f"before {res['before_s']} s, " if res.get("before_s") is not None else "(no before) "
    versus = (
        f"{res['speedup_vs_before']}x the code before, " if res.get("speedup_vs_before") else ""
    )
    text = (
        f"{res['volumes']} CTs ({res['size']}x{res['size']}x{res['slices']}): {before}serial "
        f"{res['serial_s']} s, parallel {res['parallel_s']} s ({versus}{res['speedup']}x "
        f"serial, {res['workers']} processes), peak {res['parallel_peak_mib']} MiB"
    )
    return text, ">= 1.8x; peak < 1 GiB", bool(res["met"])


BENCHES = [
    Bench(
        "scoring",
        "scoring_bench.py",
        "## Scoring",
        lambda doc, pg, js: [
            "--repeat",
            "1",
            "--naive-boot",
            "200",
            *(["--write", doc] * bool(doc)),
        ],
        lambda pg, js: ["--repeat", "1", "--naive-boot", "10"],
        scoring_headline,
        json_file=False,
    ),
    Bench(
        "strip",
        "strip_bench.py",
        "## Strip building",
        lambda doc, pg, js: ["--repeat", "3", *(["--update-doc", doc] * bool(doc))],
        lambda pg, js: ["--slices", "40", "--repeat", "1"],
        strip_headline,
        json_file=False,
    ),
    Bench(
        "load",
        "load_bench.py",
        "## Load",
        lambda doc, pg, js: [*_pg(pg), "--json-out", js, *(["--update-doc", doc] * bool(doc))],
        lambda pg, js: ["--quick", *_pg(pg), "--json-out", js],
        load_headline,
    ),
    Bench(
        "transition",
        "transition.py",
        "## Transitions",
        lambda doc, pg, js: [*_pg(pg), "--json-out", js, *(["--update-doc", doc] * bool(doc))],
        lambda pg, js: ["--quick", "--json-out", js],
        transition_headline,
    ),
    Bench(
        "memory",
        "memory.py",
        "## Memory",
        lambda doc, pg, js: ["--json-out", js, *(["--update-doc", doc] * bool(doc))],
        lambda pg, js: ["--quick", "--json-out", js],
        memory_headline,
    ),
    Bench(
        "analyst_memory",
        "analyst_memory.py",
        "## Analyst memory",
        lambda doc, pg, js: ["--json-out", js, *(["--update-doc", doc] * bool(doc))],
        lambda pg, js: ["--quick", "--json-out", js],
        analyst_memory_headline,
    ),
    Bench(
        "analyst_contention",
        "analyst_contention.py",
        "## Readers while an analyst browses",
        lambda doc, pg, js: ["--json-out", js, *(["--update-doc", doc] * bool(doc))],
        lambda pg, js: ["--quick", "--json-out", js],
        analyst_contention_headline,
    ),
    Bench(
        "analyst_pages",
        "analyst_pages.py",
        "## Analyst pages",
        lambda doc, pg, js: ["--json-out", js, *(["--update-doc", doc] * bool(doc))],
        lambda pg, js: ["--quick", "--json-out", js],
        analyst_pages_headline,
    ),
    Bench(
        "ct_import",
        "ct_import.py",
        "## CT import",
        lambda doc, pg, js: ["--json-out", js, *(["--update-doc", doc] * bool(doc))],
        lambda pg, js: ["--quick", "--json-out", js],
        ct_import_headline,
    ),
]


# --------------------------------------------------------------------------- running


def postgres_url(given: str) -> tuple[str, str]:
    """(usable URL or "", why not)."""
    url = given or os.environ.get("READERSTUDY_TEST_POSTGRES_URL", "")
    if not url:
        return "", "no PostgreSQL URL given"
    try:
        import psycopg
        from sqlalchemy.engine import make_url

        dsn = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
        with psycopg.connect(dsn, connect_timeout=5):
            return url, ""
    except Exception as exc:  # any failure: run without PostgreSQL, and say so
        return "", f"PostgreSQL unreachable ({type(exc).__name__})"


def last_json(text: str) -> dict[str, Any]:
    for line in reversed(text.strip().splitlines()):
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return {}


def run_one(bench: Bench, argv: list[str], json_path: Path | None) -> Outcome:
    cmd = [sys.executable, "-m", f"benchmarks.{bench.script[:-3]}", *argv]
    shown = " ".join(a if "@" not in a else "<url>" for a in cmd[1:])
    print(f"\n=== {bench.name}: {shown}", flush=True)
    load_start, started = load_average(), time.monotonic()
    lines: list[str] = []
    with subprocess.Popen(
        cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    ) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            print(f"[{bench.name}] {line[:300]}", end="" if line.endswith("\n") else "\n")
        code = proc.wait()
    out = "".join(lines)
    result: dict[str, Any] = {}
    if json_path is not None and json_path.exists() and json_path.stat().st_size:
        loaded = json.loads(json_path.read_text())
        result = loaded if isinstance(loaded, dict) else {"runs": loaded}
    elif not bench.json_file:
        result = last_json(out)
    return Outcome(
        bench, argv, code, time.monotonic() - started, load_start, load_average(), result, out
    )


def judge(o: Outcome) -> tuple[str, str, bool | None]:
    """(headline, target, met) of one benchmark's result."""
    if o.bench.headline is None:
        return "(see its output)", "", None
    return o.bench.headline(o.result, o.stdout)


def headline_of(o: Outcome) -> str:
    return judge(o)[0]


def summary_section(
    outcomes: list[Outcome], total_s: float, pg_note: str, quick: bool, started: str
) -> str:
    lines = [
        SUMMARY,
        "",
        f"`make bench` (`.venv/bin/python -m benchmarks.run_all`{' --quick' if quick else ''})"
        f" on {started}: {machine()}; {total_s / 60:.1f} min for everything."
        + (f" {pg_note}: PostgreSQL rows left out." if pg_note else ""),
        "",
        "| benchmark | headline (this run) | target | met | time | load |",
        "|---|---|---|---|---:|---|",
    ]
    for o in outcomes:
        headline, target, ok = judge(o)
        if o.code != 0:
            headline = f"exit code {o.code}; {headline}"
        met = {True: "yes", False: "**no**", None: "-"}[ok]
        anchor = o.bench.section.lstrip("# ").lower().replace(" ", "-")
        name = f"[{o.bench.name}](#{anchor})" if o.bench.section else o.bench.name
        lines.append(
            f"| {name} | {headline} | {target} | {met} | {o.seconds:.0f} s "
            f"| {o.load_start} -> {o.load_end} |"
        )
    lines += ["", "Commands, one per benchmark (PostgreSQL URL shown as `<url>`):", ""]
    for o in outcomes:
        lines.append(f"    {shown_command(o.bench.script[:-3], o.argv)}".rstrip())
    return "\n".join(lines) + "\n"


def write_doc(doc: Path, summary: str) -> None:
    """The introduction (everything before the first '## ') and the summary, first;
    every other section as it is."""
    text = doc.read_text() if doc.exists() else ""
    first = re.search(r"^## ", text, re.M)
    body = text[first.start() :] if first else ""
    pattern = re.compile(rf"^{re.escape(SUMMARY)}\n.*?(?=^## |\Z)", re.S | re.M)
    body = pattern.sub("", body)
    doc.write_text(INTRO + "\n" + summary + "\n" + body.rstrip("\n") + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smallest sizes; writes no doc")
    parser.add_argument("--no-doc", action="store_true", help="write no document")
    parser.add_argument("--doc", type=Path, default=DOC)
    parser.add_argument(
        "--only", nargs="*", default=[], help="names: " + ", ".join(b.name for b in BENCHES)
    )
    parser.add_argument("--skip", nargs="*", default=[])
    parser.add_argument("--postgres-url", default="")
    args = parser.parse_args()

    known = {b.script for b in BENCHES} | set(HELPERS)
    extra = sorted(p.name for p in HERE.glob("*.py") if p.name not in known)
    benches = list(BENCHES)
    for name in extra:
        print(f"run_all: warning: {name} is not listed in run_all.py; running it plainly")
        benches.append(
            Bench(name[:-3], name, "", lambda d, p, j: [], lambda p, j: [], None, False)  # type: ignore[arg-type]
        )
    benches = [b for b in benches if (not args.only or b.name in args.only)]
    benches = [b for b in benches if b.name not in args.skip]

    write = not (args.quick or args.no_doc)
    doc_path = args.doc.resolve()
    doc = str(doc_path.relative_to(ROOT) if doc_path.is_relative_to(ROOT) else doc_path)
    doc = doc if write else ""  # the scripts run in ROOT: a relative path reads better
    pg, pg_note = postgres_url(args.postgres_url)
    if pg_note:
        print(f"run_all: {pg_note}; PostgreSQL rows are left out")
    started_at = time.strftime("%Y-%m-%d %H:%M")
    started = time.monotonic()
    outcomes = []
    with tempfile.TemporaryDirectory(prefix="run-all-") as tmp:
        for bench in benches:
            json_path = Path(tmp) / f"{bench.name}.json" if bench.json_file else None
            js = str(json_path) if json_path else ""
            argv = bench.quick(pg, js) if args.quick else bench.full(doc, pg, js)
            outcomes.append(run_one(bench, argv, json_path))
    total = time.monotonic() - started
    summary = summary_section(outcomes, total, pg_note, args.quick, started_at)
    print("\n" + summary)
    if write and not args.only and not args.skip:
        write_doc(args.doc, summary)
    elif write:
        print("run_all: --only/--skip: the summary was not written to the document")
    failed = [o.bench.name for o in outcomes if o.code != 0]
    print(
        json.dumps(
            {
                "benchmarks": [o.bench.name for o in outcomes],
                "failed": failed,
                "headlines": {o.bench.name: headline_of(o) for o in outcomes},
                "total_s": round(total, 1),
                "quick": args.quick,
                "postgres": bool(pg),
            }
        )
    )
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
