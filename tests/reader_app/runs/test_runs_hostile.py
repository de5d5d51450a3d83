"""Issue 15: no reply can stop a model run, on SQLite and PostgreSQL.

A real 127.0.0.1 server sends each hostile reply found on main; every case
ends with exactly one row, a hostile reply costs at most its deadline, the
raw reply survives (escaped where PostgreSQL would refuse it), and changed
image bytes are refused, never sent.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import streamlit as st
from sqlmodel import Session, col, func, select

from reader_app.core.settings import Settings
from reader_app.core.text_rules.answers import recover_raw
from reader_app.llm import ChatClient
from reader_app.llm.prompts import load_prompt
from reader_app.models import Case, CaseImage, ModelRun, Response, ResponseRevision, Study
from reader_app.runs.importers import import_run_file
from reader_app.runs.record import RunSpec
from reader_app.runs.runner import RunSummary, run_model
from reader_app.study.assets import AssetIntegrityError, asset_path, load_asset
from reader_app.ui.context import asset_bytes
from tests.factories import make_study
from tests.support.openai_stub import OpenAIStub, Reply

DEADLINE_S = 1.5
NUL_REPLY = Reply.nul("Pneumo\x00thorax")
HOSTILE = {
    "case-000": Reply.braces(500),  # main: 15.7 s of parsing
    "case-001": Reply("{{}}"),  # main: TypeError, run-model exits 1
    "case-002": Reply.deep_json(50_000),  # main: RecursionError (here: over the 64 KiB cap)
    "case-003": Reply.huge_likert(5000),  # main: ValueError
    "case-004": NUL_REPLY,  # main: psycopg.DataError on PostgreSQL
    "case-005": Reply.drip(0.2),  # main: a --timeout 5 request alive for 69 s
    "case-006": Reply.other_model("someone-else"),  # main: accepted without trace
    "case-007": Reply.huge_body(6 * 1024 * 1024),
    "case-008": Reply.deep_body(50_000),
    "case-009": Reply("{ x } " * 1000),  # main: 16 s
    "case-010": Reply(status=400, raw_body='{"error": "bad \x00 request"}'),
    "case-011": Reply.answer("Plain answer", 3),
}


def first_images(session: Session) -> dict[str, str]:
    return {
        sha: source_id
        for sha, source_id in session.exec(
            select(CaseImage.sha256, Case.source_id)
            .join(Case, col(Case.id) == CaseImage.case_id)
            .where(CaseImage.seq == 0)
        ).all()
    }


def run_rows(session: Session) -> dict[str, Response]:
    rows = session.exec(
        select(Response, Case.source_id).join(Case, col(Case.id) == Response.case_id)
    ).all()
    return {sid: r for r, sid in rows}


def start(
    session: Session, settings: Settings, stub: OpenAIStub, **kw: object
) -> tuple[RunSummary, float]:
    client = ChatClient(
        stub.base_url, read_timeout_s=5.0, deadline_s=DEADLINE_S, max_attempts=1, backoff_s=0.01
    )
    started = time.monotonic()
    summary = run_model(
        session=session,
        study=session.exec(select(Study)).one(),
        spec=RunSpec(name="hostile", model="stub-model"),
        prompt=load_prompt(),
        client=client,
        asset_dir=settings.asset_dir,
        host="127.0.0.1",
        **{"concurrency": 3, **kw},  # type: ignore[arg-type]
    )
    return summary, time.monotonic() - started


def test_every_hostile_reply_ends_as_exactly_one_row_within_its_deadline(
    session: Session, settings: Settings, openai_stub: OpenAIStub
) -> None:
    make_study(session, settings.asset_dir, n_cases=len(HOSTILE))
    by_image = first_images(session)
    openai_stub.responder = lambda r: HOSTILE[by_image[r.image_sha256[0]]]
    summary, elapsed = start(session, settings, openai_stub)
    # 12 cases, 3 at a time: only the drip waits, and only until its deadline
    assert elapsed < DEADLINE_S + 6.0, elapsed
    assert summary.asked == len(HOSTILE)
    session.expire_all()
    rows = run_rows(session)
    assert sorted(rows) == sorted(HOSTILE)  # every case, once (unique (run, case))
    meta = {k: json.loads(r.meta_json) for k, r in rows.items()}
    status = {k: r.status for k, r in rows.items()}

    for parse_failure in ("case-000", "case-001", "case-002", "case-009"):
        assert status[parse_failure] == "failure" and "error" not in meta[parse_failure]
    assert "over 65536 characters" in meta["case-002"]["parse_note"]
    assert rows["case-000"].raw_reply == "{" * 500 + "}" * 500  # the raw text is kept
    assert (status["case-003"], rows["case-003"].diagnosis) == ("invalid", "Pneumothorax")

    # NUL: removed from the diagnosis, kept (escaped) in the raw reply, recoverable
    nul = rows["case-004"]
    assert (nul.status, nul.diagnosis, nul.likert) == ("answered", "Pneumothorax", 3)
    assert meta["case-004"]["control_chars_removed"] == 1
    assert "\x00" not in (nul.raw_reply or "")
    assert recover_raw(nul.raw_reply, meta["case-004"]) == NUL_REPLY.content

    assert status["case-005"] == "failure"
    assert f"deadline of {DEADLINE_S:g} s" in meta["case-005"]["error"]
    assert meta["case-006"]["reply_model"] == "someone-else" and "warning" in meta["case-006"]
    assert status["case-006"] == "answered"
    assert "over 4194304 bytes" in meta["case-007"]["error"]
    assert "not a chat-completions reply" in meta["case-008"]["error"]
    assert meta["case-010"]["http_status"] == 400
    assert rows["case-011"].diagnosis == "Plain answer"

    totals = json.loads(session.exec(select(ModelRun)).one().totals_json)
    assert totals["responses"] == len(HOSTILE) and totals["missing"] == 0
    assert totals["model_mismatch"] == 1


def test_retry_failures_keeps_the_replaced_error_and_raw_reply(
    session: Session, settings: Settings, openai_stub: OpenAIStub
) -> None:
    make_study(session, settings.asset_dir, n_cases=2)
    openai_stub.queue(
        Reply(status=400, raw_body='{"error": "context \x00 too long"}'),
        Reply.answer("First", 2),
    )
    start(session, settings, openai_stub, concurrency=1)
    session.expire_all()
    failed = next(r for r in run_rows(session).values() if r.status == "failure")
    failed_id, failed_raw, failed_meta = failed.id, failed.raw_reply, json.loads(failed.meta_json)
    assert "HTTP 400" in failed_meta["error"]
    assert recover_raw(failed_raw, failed_meta) == '{"error": "context \x00 too long"}'

    openai_stub.responder = lambda _r: Reply.answer("Second try", 1)
    summary, _ = start(session, settings, openai_stub, retry_failures=True)
    assert summary.asked == 1
    session.expire_all()
    revision = session.exec(select(ResponseRevision)).one()
    assert revision.response_id == failed_id
    assert revision.raw_reply == failed_raw
    assert revision.meta_json is not None
    assert json.loads(revision.meta_json)["error"] == failed_meta["error"]
    row = session.get(Response, failed_id)
    assert row is not None and (row.diagnosis, row.revision) == ("Second try", 1)


def test_changed_asset_bytes_are_refused_and_never_sent(
    session: Session, settings: Settings, openai_stub: OpenAIStub
) -> None:
    make_study(session, settings.asset_dir, n_cases=3)
    by_image = first_images(session)
    tampered_sha = next(sha for sha, sid in by_image.items() if sid == "case-001")
    path: Path = asset_path(settings.asset_dir, tampered_sha)
    path.write_bytes(path.read_bytes() + b"tampered")
    # the one loader refuses it for readers (the exam page's ui.context.asset_bytes) ...
    with pytest.raises(AssetIntegrityError, match=tampered_sha[:12]):
        load_asset(settings.asset_dir, tampered_sha)
    st.cache_resource.clear()
    with pytest.raises(AssetIntegrityError, match="integrity check"):
        asset_bytes(tampered_sha)
    # ... and for models: the case is a technical failure, its bytes never leave
    start(session, settings, openai_stub)
    session.expire_all()
    rows = run_rows(session)
    assert len(rows) == 3
    meta = json.loads(rows["case-001"].meta_json)
    assert rows["case-001"].status == "failure" and "integrity check" in meta["error"]
    sent = {sha for r in openai_stub.requests for sha in r.image_sha256}
    assert tampered_sha not in sent and len(openai_stub.requests) == 2
    assert all(not any(b"tampered" in img for img in r.images) for r in openai_stub.requests)


def test_import_run_of_hostile_outputs_gives_rows_not_tracebacks(
    session: Session, settings: Settings
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=6)
    outputs = [
        "{{}}",
        '{"a":' * 50_000 + "1" + "}" * 50_000,
        '{"diagnosis": "Pneumothorax", "likert": ' + "9" * 5000 + "}",
        '{"diagnosis": "Pneumo\x00thorax", "likert": 3}',
        "{" * 500 + "}" * 500,
        '{"diagnosis": "Abscess", "likert": 2}',
    ]
    data = "\n".join(
        json.dumps({"case_id": f"case-{i:03d}", "model": "hostile-x", "output": text})
        for i, text in enumerate(outputs)
    ).encode()
    started = time.monotonic()
    summary = import_run_file(session=session, study=study, source=data)
    assert time.monotonic() - started < 10.0
    assert summary.added == len(outputs)
    rows = run_rows(session)
    got = {k: (r.status, r.diagnosis) for k, r in rows.items()}
    assert got == {
        "case-000": ("failure", None),
        "case-001": ("failure", None),
        "case-002": ("invalid", "Pneumothorax"),
        "case-003": ("answered", "Pneumothorax"),
        "case-004": ("failure", None),
        "case-005": ("answered", "Abscess"),
    }
    nul = rows["case-003"]
    meta = json.loads(nul.meta_json)
    assert meta["control_chars_removed"] == 1 and "\x00" not in (nul.raw_reply or "")
    assert recover_raw(nul.raw_reply, meta) == outputs[3]
    n = session.exec(select(func.count()).select_from(Response)).one()
    assert n == len(outputs)


def test_same_text_policy_as_a_person() -> None:
    from reader_app.exam.submit import AnswerError, validate_answer

    with pytest.raises(AnswerError, match="control characters"):
        validate_answer("Pneumo\x00thorax", 3, False)
    with pytest.raises(AnswerError, match="control characters"):
        validate_answer("Pneumo\ud800thorax", 3, False)
