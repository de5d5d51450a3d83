"""scripts/loadtest.py: its JSON contract, a small concurrent run on both backends, and
proof that its verification would notice a lost or altered answer."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from sqlmodel import Session, select

from reader_app.core.db import make_engine
from reader_app.exam.next_case import next_case
from reader_app.exam.order import ensure_order
from reader_app.exam.submit import submit_answer, validate_answer
from reader_app.models import Reader, Response
from tests.reliability.conftest import run_loadtest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import loadkit

CONTRACT_KEYS = {
    "readers", "cases", "attempted", "committed", "lost", "duplicated",
    "p50_ms", "p95_ms", "p99_ms",
}  # fmt: skip


@pytest.mark.slow
def test_concurrent_readers_on_two_replicas_lose_and_double_nothing(db_url: str) -> None:
    summary, output = run_loadtest(
        "--readers", "8", "--cases", "20", "--replicas", "2", "--think-ms", "5:40",
        "--race-rate", "0.05", "--time-limit", "120", "--database-url", db_url,
    )  # fmt: skip
    assert summary.keys() >= CONTRACT_KEYS
    assert summary["_exit"] == 0, output[-3000:]
    assert (summary["readers"], summary["cases"]) == (8, 20)
    assert summary["complete"] and summary["committed"] == 160
    assert summary["lost"] == 0 and summary["duplicated"] == 0
    assert summary["switch_replica"] is True
    # every race of two tabs ended with one row and one "already saved"
    assert summary["duplicates_refused"] >= summary["races"]
    assert summary["attempted"] >= summary["committed"]
    assert 0 < summary["p50_ms"] <= summary["p95_ms"] <= summary["p99_ms"]


def test_bad_arguments_are_refused_cleanly() -> None:
    import subprocess

    proc = subprocess.run(
        [sys.executable, "scripts/loadtest.py", "--readers", "0", "--cases", "5"],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
        timeout=60,
    )
    assert proc.returncode == 2 and "must be positive" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_percentiles_are_nearest_rank() -> None:
    # 1..100: the p-th percentile by nearest rank is the value ceil(p/100 * 100) = p
    values = [float(v) for v in range(100, 0, -1)]
    assert loadkit.latency_summary(values) == {
        "p50_ms": 50.0, "p95_ms": 95.0, "p99_ms": 99.0, "max_ms": 100.0,
    }  # fmt: skip
    # a single value is every percentile; no values give None, not a crash
    assert loadkit.percentile([7.0], 99) == 7.0
    assert loadkit.latency_summary([])["p95_ms"] is None


def test_answer_texts_are_valid_unique_and_hostile() -> None:
    texts = {loadkit.answer_text(f"L{r:04d}", slot) for r in range(5) for slot in range(40)}
    assert len(texts) == 200
    for text in texts:
        assert validate_answer(text, 2, False).diagnosis == text  # stored exactly as sent
    joined = "".join(texts)
    assert "<script>" in joined and "\u202e" in joined and "DROP TABLE" in joined


def test_verification_catches_lost_altered_and_double_created(
    sqlite_url: str, tmp_path: Path
) -> None:
    study = loadkit.create_load_study(sqlite_url, tmp_path / "assets", 2, 4, slug="verify")
    engine = make_engine(sqlite_url)
    records: list[dict[str, object]] = []
    with Session(engine, expire_on_commit=False) as session:
        for code, _ in study.readers:
            reader = session.exec(select(Reader).where(Reader.code == code)).one()
            ensure_order(session=session, reader=reader)
            for slot in range(4):
                case = next_case(session=session, reader=reader)
                assert case is not None
                answer = validate_answer(loadkit.answer_text(code, slot), 3, False)
                res = submit_answer(
                    session=session, reader=reader, case_public_id=case.public_id,
                    answer=answer, shown_at=None, image_sha256=case.image_sha256,
                )  # fmt: skip
                records.append(
                    dict(t="ack", reader=code, case=case.public_id, diagnosis=answer.diagnosis,
                         likert=3, idk=False, response_id=res.response_id, duplicate=False)
                )  # fmt: skip
    clean = loadkit.verify(study, records)
    assert (clean.lost, clean.duplicated, clean.committed, clean.acknowledged) == (0, 0, 8, 8)

    # 1. an acknowledged answer disappears -> lost
    with Session(engine) as session:
        gone = session.get(Response, records[0]["response_id"])
        session.delete(gone)
        session.commit()
    # 2. a stored answer differs from what was acknowledged -> duplicated
    records[1] = {**records[1], "diagnosis": "something else"}
    # 3. two submits of one (reader, case) both claim to have created the row -> duplicated
    records.append({**records[2], "diagnosis": records[2]["diagnosis"]})
    check = loadkit.verify(study, records)
    assert check.lost == 1
    assert check.content_mismatch == 1 and check.double_created == 1
    assert check.duplicated == 2
    engine.dispose()
