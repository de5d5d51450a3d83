"""Shared pieces of the load tests: a fresh synthetic study, answer texts, the ack log, checks.

Both ``loadtest.py`` (service layer, threads in one or more worker processes) and
``loadtest_browser.py`` (real Chromium against served replicas) use these, so
"lost" and "duplicated" mean the same thing in both reports:

- an answer is *acknowledged* when ``submit_answer`` returned (or, in the
  browser, when the page moved on to the next case);
- *lost*: acknowledged, but no row for that (reader, case) at the end;
- *duplicated*: more than one row for a (reader, case), or a stored row whose
  content differs from what was acknowledged, or two submits that both
  believed they created the row.
"""

from __future__ import annotations

import io
import json
import os
import secrets
import threading
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from PIL import Image
from sqlalchemy import func
from sqlmodel import Session, col, select

from benchmarks.kit.measure import latency_summary as kit_latency_summary
from benchmarks.kit.measure import percentile as percentile
from reader_app.core.auth import invite_reader
from reader_app.core.db import make_engine, migrate
from reader_app.models import Case, Reader, Response
from reader_app.study.casebank import RenderedImage, add_case, create_study

# Hostile but valid answers (<= 300 characters, no outer whitespace): every load run is
# also a round-trip test of markup, SQL fragments, emoji and right-to-left text.
ANSWER_TEXTS = (
    "Pneumothorax",
    "Osteoid osteoma of the left femur",
    "<script>window.__xss=1</script>",
    '<img src=x onerror="window.__xss=1">',
    "**bold** _italic_ [link](https://example.invalid) ![px](https://example.invalid/p.png)",
    "'); DROP TABLE responses; --",
    "Fracture 🦴🩻 👩🏽‍⚕️ ✔︎",
    "ورم عظمي عظماني في عظم الفخذ",
    "\u202eevil\u202c mirrored and \u05e9\u05dc\u05d5\u05dd",
    'Tumour "quoted" & <b>bold</b> \\ backslash %s {0}',
    "Multi\nline\tanswer",
    '=HYPERLINK("https://example.invalid","click")',
)


def answer_text(reader_code: str, slot: int, variant: str = "") -> str:
    """A deterministic answer for (reader, slot), unique per pair, <= 300 characters."""
    base = ANSWER_TEXTS[(slot + sum(map(ord, reader_code))) % len(ANSWER_TEXTS)]
    tag = f" #{reader_code}/{slot}{variant}"
    return base[: 300 - len(tag)] + tag


def tiny_png(index: int) -> bytes:
    """An 8x8 grey PNG whose pixels encode ``index``: distinct bytes for every case."""
    pixels = bytes(((index >> (8 * (i % 4))) & 0xFF) ^ (i * 37 & 0xFF) for i in range(64))
    buf = io.BytesIO()
    Image.frombytes("L", (8, 8), pixels).save(buf, format="PNG")
    return buf.getvalue()


@dataclass(frozen=True)
class LoadStudy:
    database_url: str
    asset_dir: str
    slug: str
    study_id: int
    cases: int
    readers: list[tuple[str, str]]  # (code, token)

    def to_json(self) -> dict[str, Any]:
        return {
            "database_url": self.database_url,
            "asset_dir": self.asset_dir,
            "slug": self.slug,
            "study_id": self.study_id,
            "cases": self.cases,
            "readers": self.readers,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LoadStudy:
        data = dict(data)
        data["readers"] = [tuple(r) for r in data["readers"]]
        return cls(**data)


def create_load_study(
    database_url: str, asset_dir: Path, n_readers: int, n_cases: int, slug: str | None = None
) -> LoadStudy:
    """Migrate the database and add a fresh study with synthetic cases and invited readers."""
    migrate(database_url)
    slug = slug or f"load-{datetime.now(UTC):%Y%m%d%H%M%S}-{secrets.token_hex(3)}"
    engine = make_engine(database_url, pooled=False)
    try:
        with Session(engine, expire_on_commit=False) as session:
            study = create_study(session=session, slug=slug, title=f"Load test {slug}")
            for i in range(n_cases):
                add_case(
                    session=session,
                    asset_dir=asset_dir,
                    study=study,
                    source_id=f"load-{i:05d}",
                    kind="spot",
                    images=[RenderedImage(png=tiny_png(i), width=8, height=8)],
                    diagnosis=f"Synthetic diagnosis {i}",
                    position=i,
                )
            readers = []
            for r in range(n_readers):
                code = f"L{r:04d}"
                invite = invite_reader(session=session, study=study, code=code, actor="loadtest")
                readers.append((code, invite.token))
            session.commit()
            assert study.id is not None
            return LoadStudy(
                database_url=database_url,
                asset_dir=str(asset_dir),
                slug=slug,
                study_id=study.id,
                cases=n_cases,
                readers=readers,
            )
    finally:
        engine.dispose()


class AckLog:
    """Append-only JSON lines, one ``os.write`` per line on an O_APPEND descriptor.

    A line handed to the kernel survives a SIGKILL of the writer, so the log
    holds every acknowledgement made before a kill -9.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._lock = threading.Lock()

    def write(self, **record: Any) -> None:
        line = (json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")
        with self._lock:
            os.write(self._fd, line)

    def close(self) -> None:
        os.close(self._fd)


def read_logs(paths: Iterable[Path]) -> Iterator[dict[str, Any]]:
    """Every complete record of the given logs (a line cut short by a kill is skipped)."""
    for path in paths:
        with path.open("rb") as fh:
            for raw in fh:
                if not raw.endswith(b"\n"):
                    continue
                yield json.loads(raw.decode("utf-8"))


@dataclass
class Verification:
    committed: int = 0
    acknowledged: int = 0
    lost: int = 0
    duplicated: int = 0
    extra_rows: int = 0
    content_mismatch: int = 0
    double_created: int = 0
    wrong_id: int = 0
    committed_unacknowledged: int = 0
    duplicates_refused: int = 0
    examples: list[str] = field(default_factory=list)

    def note(self, text: str) -> None:
        if len(self.examples) < 10:
            self.examples.append(text)


def _content(diagnosis: str | None, likert: int | None, idk: bool) -> tuple[Any, ...]:
    return (diagnosis, likert, bool(idk))


def verify(study: LoadStudy, records: Iterable[dict[str, Any]]) -> Verification:
    """Compare the ``try``/``ack`` records against the database rows of the study."""
    tried: dict[tuple[str, str], set[tuple[Any, ...]]] = defaultdict(set)
    acks: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for rec in records:
        if rec["t"] not in ("try", "ack"):
            continue
        key = (rec["reader"], rec["case"])
        content = _content(rec.get("diagnosis"), rec.get("likert"), rec.get("idk", False))
        if rec["t"] == "try":
            tried[key].add(content)
        elif rec["t"] == "ack":
            tried[key].add(content)
            acks[key].append(rec)

    engine = make_engine(study.database_url, pooled=False)
    try:
        with Session(engine) as session:
            rows = session.exec(
                select(Reader.code, Case.public_id, Response)
                .join(Reader, col(Reader.id) == Response.reader_id)
                .join(Case, col(Case.id) == Response.case_id)
                .where(Response.study_id == study.study_id)
            ).all()
            count = session.exec(
                select(func.count())
                .select_from(Response)
                .where(Response.study_id == study.study_id)
            ).one()
    finally:
        engine.dispose()

    result = Verification(committed=int(count))
    stored: dict[tuple[str, str], list[Response]] = defaultdict(list)
    for code, public_id, resp in rows:
        stored[(code, public_id)].append(resp)
    for key, resps in stored.items():
        if len(resps) > 1:
            result.extra_rows += len(resps) - 1
            result.note(f"{key}: {len(resps)} rows")
        if key not in acks:
            result.committed_unacknowledged += 1

    for key, key_acks in acks.items():
        result.acknowledged += len(key_acks)
        result.duplicates_refused += sum(1 for a in key_acks if a["duplicate"])
        resps = stored.get(key, [])
        if not resps:
            result.lost += 1
            result.note(f"{key}: acknowledged but missing")
            continue
        row = resps[0]
        row_content = _content(row.diagnosis, row.likert, row.idk)
        created = [a for a in key_acks if not a["duplicate"]]
        if len(created) > 1:
            result.double_created += 1
            result.note(f"{key}: {len(created)} submits each created a row")
        if created:
            want = _content(created[0]["diagnosis"], created[0]["likert"], created[0]["idk"])
            if row_content != want:
                result.content_mismatch += 1
                result.note(f"{key}: stored {row_content!r} != acknowledged {want!r}")
        elif row_content not in tried[key]:
            # only "already saved" acks (a retry after an ambiguous commit, or a lost
            # race): the stored answer must still be one this reader actually sent
            result.content_mismatch += 1
            result.note(f"{key}: stored {row_content!r} was never sent")
        if any(a.get("response_id") not in (None, row.id) for a in key_acks):
            result.wrong_id += 1
            result.note(f"{key}: an ack names another response id")
    result.duplicated = (
        result.extra_rows + result.content_mismatch + result.double_created + result.wrong_id
    )
    return result


def latency_summary(latencies_ms: list[float]) -> dict[str, float | None]:
    """p50/p95/p99/max in ms, two decimals; percentiles by nearest rank (benchmarks.kit)."""
    summary = kit_latency_summary(latencies_ms, digits=2)
    return {k: summary[k] for k in ("p50_ms", "p95_ms", "p99_ms", "max_ms")}
