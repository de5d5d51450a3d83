"""A killed audit resumes: the second call asks every (case, arm) it lacks, and no other."""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from sqlmodel import Session, col, select

from reader_app.core.settings import Settings
from reader_app.models import Response
from tests.reader_app.grounding_audit.audit_study import make_audit_study, seeing
from tests.reader_app.grounding_audit.test_audit_grounding_cli import audit_args
from tests.support.openai_stub import ChatRequest, OpenAIStub, Reply, openai_stub

__all__ = ["openai_stub"]

ROOT = Path(__file__).resolve().parents[3]


def _stored(session: Session) -> int:
    with Session(session.get_bind()) as fresh:
        return len(
            fresh.exec(select(Response).where(col(Response.model_run_id).is_not(None))).all()
        )


def _key(request: ChatRequest) -> tuple[str, tuple[str, ...]]:
    """(case and arm) as the stub sees them: the case's own text and the bytes sent."""
    return request.text, tuple(request.image_sha256)


def test_a_killed_audit_resumes_without_asking_any_case_twice(
    session: Session, settings: Settings, openai_stub: OpenAIStub
) -> None:
    make_audit_study(session, settings.asset_dir)
    answered_before_kill = 7  # original's 4 and 3 of occlude_relevant
    counter = itertools.count()

    def answer_then_hang(request: ChatRequest) -> Reply:
        return seeing(request) if next(counter) < answered_before_kill else Reply.slow(120)

    openai_stub.responder = answer_then_hang
    args = audit_args(openai_stub, "seer", "--concurrency", "1", "--lease", "2", "--quiet")
    cmd = [sys.executable, "-m", "reader_app.cli", *args]
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while _stored(session) < answered_before_kill or openai_stub.served() < 8:
        if proc.poll() is not None:
            pytest.fail(f"audit ended early: {proc.stderr.read().decode()}")  # type: ignore[union-attr]
        assert time.monotonic() < deadline, "the audit did not get going within 120 s"
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)  # the eighth request in flight
    proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    assert _stored(session) == answered_before_kill
    in_flight = _key(openai_stub.requests[-1])

    openai_stub.responder = seeing
    rerun = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
    assert rerun.returncode == 0, rerun.stderr
    report = json.loads(rerun.stdout.strip().splitlines()[-1])
    assert report["category"] == "uses the image" and report["occlusion_effect"]["value"] == 1.0
    assert _stored(session) == 20
    asked = Counter(_key(r) for r in openai_stub.requests)
    assert len(asked) == 20  # every (case, arm) asked ...
    # ... once; only the request the kill cut off (no answer ever stored) a second time
    assert {k: n for k, n in asked.items() if n > 1} == {in_flight: 2}
    assert sum(report["asked"].values()) == 20 - answered_before_kill
