"""The runner against a real chat-completions server, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from typing import Any

import pytest
from sqlmodel import Session, col, select

from reader_app.core.settings import Settings
from reader_app.llm import ChatClient
from reader_app.llm.prompts import load_prompt
from reader_app.models import (
    Case,
    CaseImage,
    ModelRun,
    Response,
    ResponseRevision,
    RunLease,
    Study,
)
from reader_app.runs import lease
from reader_app.runs.record import RunConflict, RunSpec
from reader_app.runs.runner import (
    RunAborted,
    RunProgress,
    RunSummary,
    _take,
    case_jobs,
    run_model,
)
from tests.factories import make_study
from tests.support.openai_stub import ChatRequest, OpenAIStub, Reply


def start_run(
    session: Session,
    settings: Settings,
    stub: OpenAIStub,
    *,
    spec: RunSpec | None = None,
    client_kw: dict[str, Any] | None = None,
    **kw: Any,
) -> RunSummary:
    opts: dict[str, Any] = {"read_timeout_s": 5.0, "max_attempts": 3, "backoff_s": 0.01}
    opts.update(client_kw or {})
    with ChatClient(stub.base_url, **opts) as client:
        return run_model(
            session=session,
            study=session.exec(select(Study)).one(),
            spec=spec or RunSpec(name="m1", model="stub-model", group="StubAI"),
            prompt=load_prompt(),
            client=client,
            asset_dir=settings.asset_dir,
            host="127.0.0.1",
            concurrency=kw.pop("concurrency", 3),
            **kw,
        )


def cases_by_first_image(session: Session) -> dict[str, Case]:
    out = {}
    for case in session.exec(select(Case).order_by(col(Case.position))).all():
        first = session.exec(
            select(CaseImage).where(CaseImage.case_id == case.id).order_by(col(CaseImage.seq))
        ).first()
        assert first is not None
        out[first.sha256] = case
    return out


def run_rows(session: Session, name: str = "m1") -> dict[str, Response]:
    rows = session.exec(
        select(Response, Case.source_id)
        .join(Case, col(Case.id) == Response.case_id)
        .join(ModelRun, col(ModelRun.id) == Response.model_run_id)
        .where(ModelRun.name == name)
    ).all()
    return {source_id: r for r, source_id in rows}


def test_replies_of_every_shape_are_stored_with_raw_text_tokens_and_images(
    session: Session, settings: Settings, openai_stub: OpenAIStub
) -> None:
    make_study(session, settings.asset_dir, n_cases=6, n_practice=1, strip_every=3)
    by_image = cases_by_first_image(session)
    script = {
        "case-001": Reply.answer("Pneumothorax", 4),
        "case-002": Reply.fenced("Pleural effusion", 2),
        "case-003": Reply.idk(),
        "case-004": Reply.garbage(),
        "case-005": Reply.answer("Lung abscess", 7),  # out-of-range Likert: invalid
        "case-006": Reply.answer("Sarcoidosis", 0),
    }
    openai_stub.responder = lambda r: script[by_image[r.image_sha256[0]].source_id]
    seen: list[int] = []
    summary = start_run(session, settings, openai_stub, progress=lambda p: seen.append(p.done))

    assert summary.asked == 6 and not summary.resumed
    assert seen[0] == 0 and seen[-1] == 6 and len(seen) == 7
    rows = run_rows(session)
    assert sorted(rows) == sorted(script)  # practice case-000 is not asked
    got = {k: (r.status, r.diagnosis, r.likert, r.idk) for k, r in rows.items()}
    assert got == {
        "case-001": ("answered", "Pneumothorax", 4, False),
        "case-002": ("answered", "Pleural effusion", 2, False),
        "case-003": ("idk", None, None, True),
        "case-004": ("failure", None, None, False),
        "case-005": ("invalid", "Lung abscess", None, False),
        "case-006": ("answered", "Sarcoidosis", 0, False),
    }
    for source_id, row in rows.items():
        assert row.raw_reply == script[source_id].content  # raw replies kept verbatim
        meta = json.loads(row.meta_json)
        assert meta["prompt_tokens"] == 1000 and meta["completion_tokens"] > 0
        assert meta["latency_s"] >= 0 and meta["attempts"] == 1 and "error" not in meta
        assert row.shown_at is not None and row.submitted_at >= row.shown_at
    assert json.loads(rows["case-005"].meta_json)["likert_reply"] == 7
    # strips (every third case) send their four labelled slices, in order
    strip = next(r for r in openai_stub.requests if len(r.images) == 4)
    assert rows[by_image[strip.image_sha256[0]].source_id].image_sha256 == ",".join(
        strip.image_sha256
    )
    assert "Image 1: 1/4" in strip.text and "Image 4: 4/4" in strip.text
    assert all(r.body["temperature"] == 0.0 and r.body["seed"] == 0 for r in openai_stub.requests)
    assert all("likert_score" in r.text for r in openai_stub.requests)

    run = session.exec(select(ModelRun)).one()
    assert (run.model, run.group_name, run.source, run.prompt_version) == (
        "stub-model",
        "StubAI",
        "runner",
        "radle_v1",
    )
    params = json.loads(run.params_json)
    assert params["max_tokens"] == 4096 and len(params["prompt_sha256"]) == 64
    assert run.finished_at is not None and run.finished_at >= run.started_at
    totals = json.loads(run.totals_json)
    latency_keys = ("latency_s_total", "latency_s_mean", "latency_s_max")
    latency_keys += ("latency_p50_s", "latency_p95_s")
    assert totals | dict.fromkeys(latency_keys, 0) == {
        "cases": 6,
        "responses": 6,
        "missing": 0,
        "answered": 3,
        "idk": 1,
        "invalid": 1,
        "failure": 1,
        "technical_failures": 0,
        "model_mismatch": 0,
        "prompt_tokens": 6000,
        "completion_tokens": totals["completion_tokens"],
        "total_tokens": 6000 + totals["completion_tokens"],
        "latency_s_total": 0,
        "latency_s_mean": 0,
        "latency_s_max": 0,
        "latency_p50_s": 0,
        "latency_p95_s": 0,
        # the stub reports no token details and no cost (issue 41: runs/usage.py)
        "reasoning_tokens": 0,
        "cached_tokens": 0,
        "cost": None,
        "cost_source": "none",
        "sessions": 1,
    }


def test_history_a_reader_sees_is_in_the_prompt(
    session: Session, settings: Settings, openai_stub: OpenAIStub
) -> None:
    make_study(session, settings.asset_dir, n_cases=2)
    start_run(session, settings, openai_stub)
    texts = sorted(r.text for r in openai_stub.requests)
    assert sum("Clinical history: Adult, cough" in t for t in texts) == 1  # case 0 only


def test_rerun_is_idempotent_and_settings_must_match(
    session: Session, settings: Settings, openai_stub: OpenAIStub
) -> None:
    make_study(session, settings.asset_dir, n_cases=4)
    start_run(session, settings, openai_stub)
    again = start_run(session, settings, openai_stub)
    assert again.resumed and again.asked == 0 and openai_stub.served() == 4
    assert json.loads(session.exec(select(ModelRun)).one().totals_json)["sessions"] == 2
    hotter = RunSpec(name="m1", model="stub-model", temperature=0.7)
    with pytest.raises(RunConflict, match="temperature"):
        start_run(session, settings, openai_stub, spec=hotter)
    with pytest.raises(RunConflict, match="model"):
        start_run(session, settings, openai_stub, spec=RunSpec(name="m1", model="other"))
    other = start_run(session, settings, openai_stub, spec=RunSpec(name="m2", model="stub-model"))
    assert other.asked == 4 and len(run_rows(session, "m2")) == 4


def test_resume_asks_only_missing_cases(
    session: Session, settings: Settings, openai_stub: OpenAIStub
) -> None:
    make_study(session, settings.asset_dir, n_cases=5)
    start_run(session, settings, openai_stub)
    rows = run_rows(session)
    for source_id in ("case-001", "case-003"):  # as if the first session died before these
        session.delete(rows[source_id])
    session.commit()
    first_requests = len(openai_stub.requests)
    summary = start_run(session, settings, openai_stub)
    assert summary.asked == 2 and summary.resumed
    by_image = cases_by_first_image(session)
    asked = {by_image[r.image_sha256[0]].source_id for r in openai_stub.requests[first_requests:]}
    assert asked == {"case-001", "case-003"}
    assert len(run_rows(session)) == 5


def test_429_then_success_is_answered(
    session: Session, settings: Settings, openai_stub: OpenAIStub
) -> None:
    make_study(session, settings.asset_dir, n_cases=3)
    openai_stub.queue(Reply(status=429, headers={"Retry-After": "0"}))
    start_run(session, settings, openai_stub, concurrency=1)
    rows = run_rows(session)
    assert {r.status for r in rows.values()} == {"answered"}
    assert sorted(json.loads(r.meta_json)["attempts"] for r in rows.values()) == [1, 1, 2]
    assert openai_stub.served() == 4


def test_timeout_becomes_a_technical_failure_that_can_be_retried(
    session: Session, settings: Settings, openai_stub: OpenAIStub
) -> None:
    make_study(session, settings.asset_dir, n_cases=3)
    by_image = cases_by_first_image(session)

    def slow_case_1(r: ChatRequest) -> Reply:
        if by_image[r.image_sha256[0]].source_id == "case-001":
            return Reply.slow(3.0)
        return Reply.answer("Fine", 3)

    openai_stub.responder = slow_case_1
    fast_fail = {"read_timeout_s": 0.3, "max_attempts": 2}
    start_run(session, settings, openai_stub, client_kw=fast_fail)
    failed = run_rows(session)["case-001"]
    meta = json.loads(failed.meta_json)
    assert failed.status == "failure" and "timed out" in meta["error"]
    totals = json.loads(session.exec(select(ModelRun)).one().totals_json)
    assert totals["technical_failures"] == 1 and totals["missing"] == 0

    assert start_run(session, settings, openai_stub).asked == 0  # a failure row is an answer
    openai_stub.responder = lambda _r: Reply.answer("Recovered", 2)
    assert start_run(session, settings, openai_stub, retry_failures=True).asked == 1
    session.expire_all()
    row = run_rows(session)["case-001"]
    assert (row.status, row.diagnosis, row.revision) == ("answered", "Recovered", 1)
    earlier = session.exec(select(ResponseRevision)).one()
    assert (earlier.response_id, earlier.status) == (row.id, "failure")
    # the replaced failure keeps its error (and raw reply, none for a timeout): issue 15
    assert earlier.meta_json is not None
    assert "timed out" in json.loads(earlier.meta_json)["error"]
    assert earlier.raw_reply is None  # a timeout has no reply; see test_runs_hostile for one
    assert len(run_rows(session)) == 3


def test_bad_key_stops_the_run(
    session: Session, settings: Settings, openai_stub: OpenAIStub
) -> None:
    make_study(session, settings.asset_dir, n_cases=4)
    openai_stub.responder = lambda _r: Reply(status=401)
    with pytest.raises(RunAborted, match="401"):
        start_run(session, settings, openai_stub, concurrency=1)
    assert run_rows(session) == {}
    assert session.exec(select(ModelRun)).one().finished_at is None


def test_progress_counts(session: Session, settings: Settings, openai_stub: OpenAIStub) -> None:
    make_study(session, settings.asset_dir, n_cases=2)
    openai_stub.queue(Reply.idk())
    states: list[RunProgress] = []
    start_run(session, settings, openai_stub, concurrency=1, progress=states.append)
    assert states[-1].done == states[-1].total == 2
    assert states[-1].counts == {"idk": 1, "answered": 1}


def test_a_case_answered_while_it_is_claimed_is_not_asked_again(
    session: Session, settings: Settings, openai_stub: OpenAIStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 15 (CI): a runner that looked for the case's row and then claimed its lease
    asked the case twice when another runner stored the answer and dropped its lease in
    between. Here that other runner commits (its own session) just before this runner's
    claim: ``_take`` must report the case ``answered`` and leave no lease behind."""
    make_study(session, settings.asset_dir, n_cases=3)
    start_run(session, settings, openai_stub)  # every case answered, every lease dropped
    run = session.exec(select(ModelRun)).one()
    jobs = case_jobs(session=session, study=session.exec(select(Study)).one(), strip_mode="slices")
    job = jobs[0]
    answer = run_rows(session)[job.source_id]
    kept = {k: v for k, v in answer.model_dump().items() if k != "id"}
    session.delete(answer)
    session.commit()
    assert session.exec(select(RunLease)).all() == []

    real_claim = lease.claim

    def other_runner_answers_first(**kw: Any) -> bool:
        with Session(session.get_bind()) as other:  # stores the row, holds no lease after
            other.add(Response(**kept))
            other.commit()
        return real_claim(**kw)

    monkeypatch.setattr(lease, "claim", other_runner_answers_first)
    taken = _take(
        session=session, run=run, job=job, holder="late", lease_s=60, retry_failures=False
    )
    assert taken == "answered"
    assert session.exec(select(RunLease)).all() == []
    monkeypatch.setattr(lease, "claim", real_claim)

    # without a race: a free case is the caller's, and then held against everyone else
    session.delete(run_rows(session)[job.source_id])
    session.commit()
    assert (
        _take(session=session, run=run, job=job, holder="a", lease_s=60, retry_failures=False)
        == "mine"
    )
    assert (
        _take(session=session, run=run, job=job, holder="b", lease_s=60, retry_failures=False)
        == "held"
    )
    held = session.exec(select(RunLease)).one()
    assert (held.case_id, held.holder) == (job.case_id, "a")
