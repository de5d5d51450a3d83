"""A benchmark study in a real database: cases, consented readers, stored orders, answers.

Readers' orders and seeded answers are bulk-inserted (a 2,000-case study with
200 other readers' complete answers takes seconds, not minutes); cases go
through ``add_case``, as an import stores them.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import insert
from sqlmodel import Session, select

from benchmarks.kit.images import STRIP_SLICES, ImagePool
from reader_app.core.auth import invite_reader
from reader_app.core.db import make_engine
from reader_app.models import Case, Reader, ReaderOrder, Response, Study, utcnow
from reader_app.study.casebank import add_case, create_study


def shown_images(kind: str) -> int:
    """How many <img> the viewer shows for a case: one, or a strip's slice + 16 thumbnails."""
    return 1 + STRIP_SLICES if kind == "strip" else 1


@dataclass
class BenchStudy:
    database_url: str
    study_id: int
    kinds: list[str]  # by slot (every measured reader's order is the manifest order)
    case_ids: list[int]

    @property
    def total(self) -> int:
        return len(self.kinds)


def _ready_reader(session: Session, study: Study, code: str) -> tuple[Reader, str]:
    invite = invite_reader(session=session, study=study, code=code, actor="bench")
    reader = invite.reader
    reader.consented_at = utcnow()
    reader.group_name = "board-certified"
    reader.profile_json = json.dumps({"role": "board-certified", "years_experience": 10})
    session.add(reader)
    session.flush()
    return reader, invite.token


def build_study(
    database_url: str,
    asset_dir: Path,
    pool: ImagePool,
    *,
    slug: str,
    cases: int,
    strip_every: int,
    distinct: Sequence[range],
) -> BenchStudy:
    """A study of ``cases`` cases; those in ``distinct`` get images no other case has."""
    engine = make_engine(database_url, pooled=False)
    kinds, ids = [], []
    try:
        with Session(engine, expire_on_commit=False) as session:
            study = create_study(session=session, slug=slug, title=f"Benchmark {slug}")
            for i in range(cases):
                strip = strip_every > 0 and i % strip_every == strip_every - 1
                case = add_case(
                    session=session,
                    asset_dir=asset_dir,
                    study=study,
                    source_id=f"bench-{i:05d}",
                    kind="strip" if strip else "spot",
                    images=pool.case_images(i, strip, any(i in r for r in distinct)),
                    diagnosis=f"Benchmark diagnosis {i}",
                    position=i,
                    history="Adult, cough for three weeks" if i % 2 == 0 else None,
                )
                kinds.append(case.kind)
                assert case.id is not None
                ids.append(case.id)
                if i % 200 == 199:
                    session.commit()
            session.commit()
            assert study.id is not None
            return BenchStudy(database_url, study.id, kinds, ids)
    finally:
        engine.dispose()


def _response_row(study_id: int, case_id: int, reader_id: int, n: int) -> dict[str, Any]:
    now = utcnow()
    return {
        "study_id": study_id,
        "case_id": case_id,
        "reader_id": reader_id,
        "diagnosis": f"Seeded answer {n}",
        "likert": n % 5,
        "idk": False,
        "status": "answered",
        "shown_at": now,
        "submitted_at": now,
        "image_sha256": "",
        "practice": False,
        "meta_json": "{}",
        "revision": 0,
    }


def add_reader(study: BenchStudy, code: str, *, answered: int, shuffle: int | None = None) -> str:
    """A consented reader with a stored order (manifest order, or shuffled with a seed)
    and the first ``answered`` slots answered; returns the sign-in token."""
    engine = make_engine(study.database_url, pooled=False)
    try:
        with Session(engine, expire_on_commit=False) as session:
            s = session.get(Study, study.study_id)
            assert s is not None
            reader, token = _ready_reader(session, s, code)
            assert reader.id is not None
            order = list(study.case_ids)
            if shuffle is not None:
                random.Random(shuffle).shuffle(order)
            seed = shuffle or 0
            session.execute(
                insert(ReaderOrder),
                [
                    {"reader_id": reader.id, "slot": slot, "case_id": cid, "seed": seed}
                    for slot, cid in enumerate(order)
                ],
            )
            if answered:
                session.execute(
                    insert(Response),
                    [
                        _response_row(study.study_id, cid, reader.id, n)
                        for n, cid in enumerate(order[:answered])
                    ],
                )
            session.commit()
            return token
    finally:
        engine.dispose()


def add_other_readers(study: BenchStudy, first: int, count: int) -> None:
    """Readers who answered every case, each in their own shuffled order."""
    for r in range(first, first + count):
        add_reader(study, f"OTHER{r:04d}", answered=study.total, shuffle=r + 1)


def count_responses(database_url: str) -> int:
    engine = make_engine(database_url, pooled=False)
    try:
        with Session(engine) as session:
            return len(session.exec(select(Response.id)).all())
    finally:
        engine.dispose()


def study_case_count(database_url: str, study_id: int) -> int:
    engine = make_engine(database_url, pooled=False)
    try:
        with Session(engine) as session:
            return len(session.exec(select(Case.id).where(Case.study_id == study_id)).all())
    finally:
        engine.dispose()
