"""``readerstudy run-model`` against an endpoint on 127.0.0.1 that answers in several
gzip members (issue 39 item 1).

The hostile endpoint: every reply is ~5 KB of 48 gzip members that decode to
4.8 MB of zeros. The unfixed decoder kept each member's leftover twice, so the
run died of MemoryError (3.8 GB resident at a 4 GiB cap in the issue). Here the
real command runs in a process of its own under ``RLIMIT_AS`` and its peak RSS
(``VmHWM``) is read: every case gets a failure row naming the size, and the run
ends normally. The honest endpoint sends each answer as two members: answers.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import zlib
from pathlib import Path

from sqlmodel import Session, col, select

from reader_app.cli import main
from reader_app.core.settings import Settings
from reader_app.models import Response
from tests.factories import make_study
from tests.reader_app.commands.test_run_model_cli import cli_args
from tests.support.openai_stub import ChatRequest, OpenAIStub, Reply, completion, openai_stub

__all__ = ["openai_stub"]

ROOT = Path(__file__).resolve().parents[3]
AS_CAP_MB = 2048  # the address space the command may take: unfixed, it hits this


def member(data: bytes) -> bytes:
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    return c.compress(data) + c.flush()


_RUN = textwrap.dedent(
    """
    import json, resource, sys
    cap = int(sys.argv[1]) << 20
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    from reader_app.cli import main
    try:
        code = main(sys.argv[2:])
    finally:
        hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM:")][0]
        print(json.dumps({"peak_kb": int(hwm.split()[1])}), file=sys.stderr)
    sys.exit(code)
    """
)


def _model_rows(session: Session) -> list[Response]:
    with Session(session.get_bind()) as fresh:
        return list(fresh.exec(select(Response).where(col(Response.model_run_id).is_not(None))))


def test_many_member_replies_are_a_failure_row_per_case_in_bounded_memory(
    session: Session, settings: Settings, openai_stub: OpenAIStub
) -> None:
    n_cases = 3
    make_study(session, settings.asset_dir, n_cases=n_cases)
    bomb = b"".join(member(bytes(100_000)) for _ in range(48))  # 4.8 MB decoded > 4 MiB cap
    assert len(bomb) < 10_000
    openai_stub.responder = lambda _r: Reply(body_bytes=bomb, headers={"Content-Encoding": "gzip"})
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    done = subprocess.run(
        [sys.executable, "-c", _RUN, str(AS_CAP_MB), *cli_args(openai_stub, "--quiet")],
        cwd=ROOT,
        env=env | {"MALLOC_ARENA_MAX": "2"},
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert "MemoryError" not in done.stderr, done.stderr[-2000:]
    assert done.returncode == 0, done.stderr[-2000:]
    peak_mb = json.loads(done.stderr.strip().splitlines()[-1])["peak_kb"] / 1024
    print(f"run-model peak RSS {peak_mb:.0f} MB")
    assert peak_mb < 1024, peak_mb  # the bound
    rows = _model_rows(session)
    assert len(rows) == n_cases  # one failure row per case, none lost
    for row in rows:
        assert row.diagnosis is None
        error = json.loads(row.meta_json)["error"]
        assert "decoded reply body over 4194304 bytes" in error, error


def test_honest_two_member_replies_are_read_as_answers(
    session: Session, settings: Settings, openai_stub: OpenAIStub
) -> None:
    make_study(session, settings.asset_dir, n_cases=2)

    def two_members(request: ChatRequest) -> Reply:
        answer = json.dumps({"diagnosis": "Pneumothorax", "likert_score": 4})
        # about 150 KB of body (an extra field a provider may add) in two members
        body = json.dumps(completion(request.model, answer) | {"x_pad": "-" * 150_000}).encode()
        half = len(body) // 2
        return Reply(
            body_bytes=member(body[:half]) + member(body[half:]),
            headers={"Content-Encoding": "gzip"},
        )

    openai_stub.responder = two_members
    assert main(cli_args(openai_stub, "--quiet")) == 0
    rows = _model_rows(session)
    assert [(r.diagnosis, r.likert) for r in rows] == [("Pneumothorax", 4)] * 2
    assert all("error" not in json.loads(r.meta_json) for r in rows)
