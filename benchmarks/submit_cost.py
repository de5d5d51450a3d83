#!/usr/bin/env python
"""Server-side cost of one answer: ``submit_answer`` + the next case, on the service layer.

    .venv/bin/python -m benchmarks.submit_cost [--iterations 500] [--cases 200]
        [--postgres-url postgresql://...] [--quick] [--json-out FILE]

Each iteration is what the exam page's server does for one answer, minus
Streamlit: the submit button's callback (a new session, the reader re-checked,
``submit_answer`` committed) and the page run that follows (a new session, the
reader and study re-checked, ``upcoming`` from the slot after the one just
answered: the next case and the one after it, with their images). Readers of
a ``--cases`` study (every second case a strip of 16 slices in 3 windows plus
montages, as ingest stores it) answer one after the other until
``--iterations`` answers are stored (after 50 untimed answers by one more
reader, so the connection pool and the database's caches are warm). SQLite
always (a fresh file, WAL, as the app configures it); PostgreSQL too when
``--postgres-url`` names a server (a throwaway database is created there and
dropped). Target: p95 at most 20 ms on
SQLite. The last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import io
import secrets
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from PIL import Image
from sqlalchemy.engine import make_url
from sqlmodel import Session

from benchmarks.kit.doc import emit
from benchmarks.kit.measure import latency_summary, load_average, machine
from reader_app.core.auth import invite_reader
from reader_app.core.db import make_engine, migrate
from reader_app.exam.next_case import upcoming
from reader_app.exam.order import ensure_order
from reader_app.exam.submit import submit_answer, validate_answer
from reader_app.models import Reader, Study, utcnow
from reader_app.study.casebank import RenderedImage, add_case, create_study

TARGET_P95_MS = 20.0
WARMUP = 50  # untimed answers by an extra reader first: a warm pool and warm caches
WINDOWS = ("lung", "mediastinum", "bone")


def _png(index: int) -> bytes:
    buf = io.BytesIO()
    pixels = bytes((index * 31 + i * 7) & 0xFF for i in range(64))
    Image.frombytes("L", (8, 8), pixels).save(buf, format="PNG")
    return buf.getvalue()


def _images(i: int, strip: bool) -> list[RenderedImage]:
    if not strip:
        return [RenderedImage(_png(i), 8, 8)]
    images = []
    for w, window in enumerate(WINDOWS):
        for j in range(16):
            png = _png(i * 1000 + w * 100 + j)
            images.append(RenderedImage(png, 8, 8, f"{j + 1}/16", window, "slice"))
        images.append(
            RenderedImage(_png(i * 1000 + w), 8, 8, f"montage · {window}", window, "montage")
        )
    return images


def build(url: str, asset_dir: Path, cases: int, readers: int) -> list[int]:
    """A study and ``readers`` consented readers with their orders; returns reader ids."""
    migrate(url)
    engine = make_engine(url, pooled=False)
    try:
        with Session(engine, expire_on_commit=False) as session:
            study = create_study(session=session, slug="submit-cost", title="Submit cost")
            for i in range(cases):
                add_case(
                    session=session,
                    asset_dir=asset_dir,
                    study=study,
                    source_id=f"case-{i:04d}",
                    kind="strip" if i % 2 else "spot",
                    images=_images(i, bool(i % 2)),
                    diagnosis=f"Diagnosis {i}",
                    position=i,
                )
            ids = []
            for r in range(readers):
                reader = invite_reader(session=session, study=study, code=f"S{r:03d}").reader
                reader.consented_at = utcnow()
                reader.group_name = "board-certified"
                session.add(reader)
                session.flush()
                assert reader.id is not None
                ids.append(reader.id)
            session.commit()
            for rid in ids:
                reader = session.get(Reader, rid)
                assert reader is not None
                ensure_order(session=session, reader=reader, seed=rid)
            return ids
    finally:
        engine.dispose()


def run(
    url: str, asset_dir: Path, cases: int, iterations: int, hint: bool = True
) -> dict[str, Any]:
    """``hint=False`` draws every next case from slot 0, as the page did before the
    lookup hint: the walk over the answered slots grows with every answer."""
    readers = -(-iterations // cases)
    warm_id, *reader_ids = build(url, asset_dir, cases, readers + 1)
    engine = make_engine(url)  # pooled, as the app's engine
    _answer(engine, warm_id, cases, min(WARMUP, cases), hint)  # untimed: pool, caches
    totals: list[float] = []
    submits: list[float] = []
    draws: list[float] = []
    early: list[float] = []  # the first 20 answers of each reader
    late: list[float] = []  # the last 20
    load_start = load_average()
    try:
        for rid in reader_ids:
            with Session(engine, expire_on_commit=False) as session:  # the reader's first visit
                reader = session.get(Reader, rid)
                assert reader is not None
                case = upcoming(session=session, reader=reader, total=cases).case
            slot_from = 0
            answered = 0
            while case is not None and len(totals) < iterations:
                answer = validate_answer(f"Answer {case.slot}", case.slot % 5, False)
                t0 = time.perf_counter()
                with Session(engine, expire_on_commit=False) as session:  # the callback
                    reader = session.get(Reader, rid)
                    assert reader is not None
                    submit_answer(
                        session=session,
                        reader=reader,
                        case_public_id=case.public_id,
                        answer=answer,
                        shown_at=utcnow(),
                        image_sha256=case.reader_sha256,
                        meta={"paused_s": 0.0, "windows": [], "enlarged": False},
                    )
                t1 = time.perf_counter()
                slot_from = case.slot + 1 if hint else 0
                with Session(engine, expire_on_commit=False) as session:  # the page run
                    reader = session.get(Reader, rid)
                    assert reader is not None
                    assert session.get(Study, reader.study_id) is not None
                    case = upcoming(
                        session=session, reader=reader, total=cases, from_slot=slot_from
                    ).case
                t2 = time.perf_counter()
                submits.append((t1 - t0) * 1000)
                draws.append((t2 - t1) * 1000)
                totals.append((t2 - t0) * 1000)
                if answered < 20:
                    early.append(totals[-1])
                elif answered >= cases - 20:
                    late.append(totals[-1])
                answered += 1
    finally:
        engine.dispose()
    return {
        "answers": len(totals),
        "readers": readers,
        "cases": cases,
        "total": stats(totals),
        "submit_answer": stats(submits),
        "next_case": stats(draws),
        "first_20_per_reader": stats(early),
        "last_20_per_reader": stats(late),
        "load_start": load_start,
        "load_end": load_average(),
    }


def _answer(engine: Any, rid: int, cases: int, count: int, hint: bool) -> None:
    """``count`` answers by one reader, untimed, the same calls as the timed loop."""
    from_slot = 0
    for _ in range(count):
        with Session(engine, expire_on_commit=False) as session:
            reader = session.get(Reader, rid)
            assert reader is not None
            case = upcoming(session=session, reader=reader, total=cases, from_slot=from_slot).case
            if case is None:
                return
            submit_answer(
                session=session,
                reader=reader,
                case_public_id=case.public_id,
                answer=validate_answer("Warm-up", 1, False),
                shown_at=utcnow(),
                image_sha256=case.reader_sha256,
            )
        from_slot = case.slot + 1 if hint else 0


def stats(values: list[float]) -> dict[str, Any]:
    """Latency figures in ms, two decimals (nearest-rank percentiles, benchmarks.kit)."""
    return latency_summary(values, digits=2)


@contextmanager
def postgres_database(server_url: str) -> Iterator[str]:
    """A throwaway database on the server, dropped afterwards."""
    import psycopg

    admin = make_url(server_url).set(drivername="postgresql").render_as_string(False)
    name = f"rs_bench_{secrets.token_hex(5)}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = make_url(server_url).set(drivername="postgresql+psycopg", database=name)
    try:
        yield url.render_as_string(hide_password=False)
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _or_dash(value: float | None) -> str:
    return "-" if value is None else str(value)


def markdown_rows(res: dict[str, Any]) -> list[str]:
    """Table rows: | backend | answers | p50 | p95 | p99 | submit p95 | next p95 |
    first / last 20 p50 | load |"""
    rows = []
    for backend, r in res["backends"].items():
        t, s, n = r["total"], r["submit_answer"], r["next_case"]
        rows.append(
            f"| {backend} | {r['answers']} | {t['p50_ms']} ms | **{t['p95_ms']} ms** "
            f"| {t['p99_ms']} ms | {s['p95_ms']} ms | {n['p95_ms']} ms "
            f"| {_or_dash(r['first_20_per_reader'].get('p50_ms'))} / "
            f"{_or_dash(r['last_20_per_reader'].get('p50_ms'))} ms "
            f"| {r['load_start']} -> {r['load_end']} |"
        )
    return rows


def measure(iterations: int, cases: int, postgres_url: str = "") -> dict[str, Any]:
    """Both lookups (from the hint, and from slot 0 as before it) on SQLite, and on
    PostgreSQL when a server URL is given."""
    started = time.monotonic()
    backends: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="submit-cost-") as tmp:
        for hint, label in ((True, ""), (False, ", lookup from slot 0 (before)")):
            url = f"sqlite:///{Path(tmp) / f'readerstudy-{hint}.db'}"
            backends[f"SQLite{label}"] = run(url, Path(tmp) / "assets", cases, iterations, hint)
            if postgres_url:
                with postgres_database(postgres_url) as pg_url:
                    backends[f"PostgreSQL{label}"] = run(
                        pg_url, Path(tmp) / "assets", cases, iterations, hint
                    )
    return {
        "benchmark": "submit_cost",
        "machine": machine(),
        "iterations": iterations,
        "cases": cases,
        "target_p95_ms": TARGET_P95_MS,
        "met": backends["SQLite"]["total"]["p95_ms"] <= TARGET_P95_MS,
        "total_s": round(time.monotonic() - started, 1),
        "backends": backends,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=500)
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--postgres-url", default="", help="also measure on this server")
    parser.add_argument("--quick", action="store_true", help="smoke run: 40 answers, 20 cases")
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args()
    iterations, cases = (40, 20) if args.quick else (args.iterations, args.cases)
    res = measure(iterations, cases, args.postgres_url)
    for backend, r in res["backends"].items():
        print(
            f"{backend}: {r['answers']} answers, p50 {r['total']['p50_ms']} ms, "
            f"p95 {r['total']['p95_ms']} ms (submit p95 {r['submit_answer']['p95_ms']} ms, "
            f"next case p95 {r['next_case']['p95_ms']} ms), load {r['load_start']} -> "
            f"{r['load_end']}",
            file=sys.stderr,
        )
    return emit(res, args.json_out)


if __name__ == "__main__":
    raise SystemExit(main())
