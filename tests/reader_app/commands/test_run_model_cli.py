"""``readerstudy run-model``: the CLI in-process, and a real process killed mid-run and resumed."""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sqlalchemy import func
from sqlmodel import Session, col, select

from reader_app.cli import main
from reader_app.core.settings import Settings
from reader_app.models import AuditEvent, Case, CaseImage, ModelRun, Response, RunLease
from tests.factories import make_study
from tests.support.openai_stub import ChatRequest, OpenAIStub, Reply, openai_stub

__all__ = ["openai_stub"]

ROOT = Path(__file__).resolve().parents[3]


def cli_args(stub: OpenAIStub, *extra: str) -> list[str]:
    return [
        "run-model",
        "study",
        "--endpoint",
        stub.base_url,
        "--model",
        "stub-vlm",
        "--backoff",
        "0.01",
        *extra,
    ]


def model_case_ids(session: Session) -> list[str]:
    with Session(session.get_bind()) as fresh:
        return list(
            fresh.exec(
                select(Case.source_id)
                .join(Response, col(Response.case_id) == Case.id)
                .where(col(Response.model_run_id).is_not(None))
            ).all()
        )


def test_run_model_prints_progress_and_summary(
    session: Session,
    settings: Settings,
    openai_stub: OpenAIStub,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    make_study(session, settings.asset_dir, n_cases=3)
    monkeypatch.setenv("STUB_KEY", "sk-do-not-store")
    openai_stub.queue(Reply.idk())
    code = main(cli_args(openai_stub, "--api-key-env", "STUB_KEY", "--group", "Stub Inc"))
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "3/3" in err and "#" in err  # the progress bar, on stderr
    last = out.strip().splitlines()[-1]
    assert last.startswith("run stub-vlm: 3/3 cases (2 answered, 1 idk")
    assert sorted(model_case_ids(session)) == ["case-000", "case-001", "case-002"]
    assert {r.headers["authorization"] for r in openai_stub.requests} == {"Bearer sk-do-not-store"}
    with Session(session.get_bind()) as fresh:
        run = fresh.exec(select(ModelRun)).one()
        stored = json.dumps(run.model_dump(mode="json")) + "".join(
            e.detail_json for e in fresh.exec(select(AuditEvent)).all()
        )
    assert "sk-do-not-store" not in stored  # the key is never recorded
    assert run.endpoint_host == "127.0.0.1:" + openai_stub.base_url.split(":")[2].split("/")[0]
    assert run.group_name == "Stub Inc"


def test_run_model_reports_a_refused_key_and_unknown_study(
    session: Session,
    settings: Settings,
    openai_stub: OpenAIStub,
    capsys: pytest.CaptureFixture[str],
) -> None:
    make_study(session, settings.asset_dir, n_cases=2)
    openai_stub.responder = lambda _r: Reply(status=401)
    assert main(cli_args(openai_stub, "--quiet")) == 2
    assert "401" in capsys.readouterr().err
    assert main([*cli_args(openai_stub)[:1], "nope", *cli_args(openai_stub)[2:]]) == 2
    assert "no study named 'nope'" in capsys.readouterr().err
    assert main(cli_args(openai_stub, "--extra", "[1]")) == 2
    assert "--extra" in capsys.readouterr().err


def test_killed_run_resumes_without_duplicates_or_gaps(
    session: Session, settings: Settings, openai_stub: OpenAIStub
) -> None:
    n_cases = 16
    make_study(session, settings.asset_dir, n_cases=n_cases)
    first_image = {
        sha: source_id
        for sha, source_id in session.exec(
            select(CaseImage.sha256, Case.source_id).join(Case, col(Case.id) == CaseImage.case_id)
        ).all()
    }
    answered_before_kill = 6
    counter = itertools.count()

    def answer_six_then_hang(_r: ChatRequest) -> Reply:
        # the first six cases are answered; later requests hang until the process is killed
        if next(counter) < answered_before_kill:
            return Reply.answer("Early answer", 2)
        return Reply.slow(120)

    openai_stub.responder = answer_six_then_hang
    # --lease 2: the killed process's claims on its two in-flight cases expire in 2 s
    cmd = [
        sys.executable,
        "-m",
        "reader_app.cli",
        *cli_args(openai_stub, "--concurrency", "2", "--lease", "2"),
    ]
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}

    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 90
    # mid-run: six answers committed and two requests in flight
    while len(model_case_ids(session)) < answered_before_kill or openai_stub.served() < 8:
        if proc.poll() is not None:
            pytest.fail(f"run-model ended early: {proc.stderr.read().decode()}")  # type: ignore[union-attr]
        assert time.monotonic() < deadline, "run-model did not get going within 90 s"
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    stored_before = model_case_ids(session)
    assert len(stored_before) == answered_before_kill
    asked_before = len(openai_stub.requests)

    openai_stub.responder = lambda _r: Reply.answer("Fast answer", 3)
    rerun = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert rerun.returncode == 0, rerun.stderr

    stored = model_case_ids(session)
    assert len(stored) == n_cases  # no duplicate rows ...
    assert sorted(set(stored)) == [f"case-{i:03d}" for i in range(n_cases)]  # ... and none missing
    resent = {first_image[r.image_sha256[0]] for r in openai_stub.requests[asked_before:]}
    assert resent == set(stored) - set(stored_before)  # the rerun asked only what was missing
    with Session(session.get_bind()) as fresh:
        dupes = fresh.exec(
            select(Response.case_id, func.count())
            .where(col(Response.model_run_id).is_not(None))
            .group_by(col(Response.case_id))
            .having(func.count() > 1)
        ).all()
        run = fresh.exec(select(ModelRun)).one()
    assert dupes == []
    totals = json.loads(run.totals_json)
    assert run.finished_at is not None and totals["missing"] == 0 and totals["responses"] == 16


def _asked(stdout: str) -> int:
    last = stdout.strip().splitlines()[-1]
    return int(last.split("asked ", 1)[1].split(" ", 1)[0])


def test_two_processes_and_a_kill_never_ask_a_case_twice(
    session: Session, settings: Settings, openai_stub: OpenAIStub
) -> None:
    """Issue 15: two run-model processes on one run both asked every case ("asked 5"
    each) and the run's session count lost an update. Here a first process is killed
    with two requests in flight, then two processes run at once: every case is asked
    exactly once by the live processes, the killed process's two cases only after its
    leases expire, and the session count is 2."""
    n_cases = 12
    make_study(session, settings.asset_dir, n_cases=n_cases)
    first_image = {
        sha: source_id
        for sha, source_id in session.exec(
            select(CaseImage.sha256, Case.source_id).join(Case, col(Case.id) == CaseImage.case_id)
        ).all()
    }
    openai_stub.responder = lambda _r: Reply.slow(120)  # the first process hangs ...
    cmd = [
        sys.executable,
        "-m",
        "reader_app.cli",
        *cli_args(openai_stub, "--concurrency", "2", "--lease", "2", "--quiet"),
    ]
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    doomed = subprocess.Popen(
        cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 90
    while openai_stub.served() < 2:
        assert doomed.poll() is None, doomed.stderr.read().decode()  # type: ignore[union-attr]
        assert time.monotonic() < deadline, "run-model did not get going within 90 s"
        time.sleep(0.02)
    os.kill(doomed.pid, signal.SIGKILL)  # ... and is killed with two cases in flight
    doomed.communicate(timeout=30)
    killed_cases = {first_image[r.image_sha256[0]] for r in openai_stub.requests}
    assert len(killed_cases) == 2
    asked_before = openai_stub.served()

    openai_stub.responder = lambda _r: Reply.slow(0.2, Reply.answer("Shared answer", 3))
    # the live pair hold 30 s leases: on a loaded machine a renewal may come later than
    # 2 s, and an expired live lease would rightly let the other process ask that case
    live = [*cmd[:3], *cli_args(openai_stub, "--concurrency", "2", "--lease", "30", "--quiet")]
    both = [
        subprocess.Popen(
            live, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    outputs = [p.communicate(timeout=180) for p in both]
    for p, (_out, err) in zip(both, outputs, strict=True):
        assert p.returncode == 0, err

    later = [first_image[r.image_sha256[0]] for r in openai_stub.requests[asked_before:]]
    assert sorted(later) == [f"case-{i:03d}" for i in range(n_cases)]  # each case once
    assert sum(_asked(out) for out, _err in outputs) == n_cases  # honest "asked" counts
    stored = model_case_ids(session)
    assert sorted(stored) == [f"case-{i:03d}" for i in range(n_cases)]  # one row per case
    with Session(session.get_bind()) as fresh:
        run = fresh.exec(select(ModelRun)).one()
        leases = fresh.exec(select(func.count()).select_from(RunLease)).one()
    assert run.sessions == 2 and json.loads(run.totals_json)["sessions"] == 2
    assert leases == 0  # every lease released with its answer
