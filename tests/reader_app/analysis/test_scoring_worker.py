"""The shared scoring computed in its worker process (reader_app.analysis.scoring_worker):
the same figures as in the serving process, fresh ones after an answer (never the older
version's), a failure not kept, and a killed worker replaced by computing in-process.
Real worker processes (spawn) reading the test's SQLite file or PostgreSQL database."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator

import pandas as pd
import pytest
from sqlalchemy import update
from sqlmodel import Session, col

from reader_app.analysis.case_matrix import case_matrix
from reader_app.analysis.chart_data import merged_group_split
from reader_app.analysis.leaderboard import build_leaderboard
from reader_app.analysis.model_runs import run_usage
from reader_app.analysis.scored_study import SharedScoring
from reader_app.analysis.scoring_worker import ScoringWorker, WorkerError
from reader_app.analysis.timing import reading_times
from reader_app.core.settings import Settings
from reader_app.models import Response
from reader_app.runs.importers import import_run_file
from scoring import ScoringParams
from scoring.frame import UngradedRowsError
from tests.factories import make_study
from tests.reader_app.analysis.scenario import (
    grade_everything,
    import_model_run,
    plan_for,
    simulate_reader,
)
from tests.reader_app.analysis.test_scored_study import (
    C_R01,
    C_R02,
    C_R03,
    CASES,
    NO_BOOT,
    _answer,
    _pool_c,
    _study,
)

BOOT = ScoringParams(n_boot=40, seed=3)


class _Unpicklable(Exception):
    def __init__(self, rows: list[str], note: str) -> None:  # unpickles with one argument
        super().__init__(f"{note}: {rows}")


def _fails_unpicklably() -> None:
    raise _Unpicklable(["a"], "no figures")


def _timed(session: Session) -> None:
    """20 s of active reading on every reader answer (the exam's client reports it)."""
    session.execute(
        update(Response).where(col(Response.reader_id).is_not(None)).values(active_ms=20_000)
    )
    session.commit()


@pytest.fixture(scope="module")
def worker() -> Iterator[ScoringWorker]:
    """One worker process for the module (spawning one costs seconds)."""
    w = ScoringWorker()
    assert w.wait_ready(120)
    yield w
    w.close()


def test_the_worker_scores_as_the_server_would_and_anew_after_an_answer(
    session: Session, settings: Settings, worker: ScoringWorker
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=6, n_practice=1)
    simulate_reader(session, study, "R01", plan_for(CASES, "CCcWIM"), group="board-certified")
    r03 = simulate_reader(session, study, "R03", plan_for(CASES, "cWwIM."), group="PGY2")
    grade_everything(session, study)
    _timed(session)
    cache = SharedScoring(worker=worker)
    offloaded = worker.offloaded
    data = cache.study_data(session=session, study=study)
    board = cache.leaderboard(data, data.case_ids, BOOT)
    assert worker.offloaded == offloaded + 2  # the frame and the scoring, in the worker
    here = build_leaderboard(data.frame, data.case_ids, BOOT, data.grounded_case_ids)
    pd.testing.assert_frame_equal(board.table, here.table)  # CIs included
    assert _pool_c(board) == pytest.approx(C_R01)  # R03 (5 of 6 cases) out of the pool
    pd.testing.assert_frame_equal(
        cache.group_split(data, data.case_ids, BOOT, merge=True),
        merged_group_split(data, data.case_ids, BOOT),
    )
    matrix = cache.case_matrix(data, data.case_ids, NO_BOOT)
    local = case_matrix(data.frame, data.case_ids, NO_BOOT)
    pd.testing.assert_frame_equal(matrix.cells, local.cells)
    pd.testing.assert_frame_equal(matrix.cases, local.cases)
    times = cache.reading_times(data, session=session)
    pd.testing.assert_frame_equal(
        times, reading_times(session=session, study_id=data.study_id, frame=data.frame)
    )
    assert set(times["responder"]) == {"R01", "R03"}
    assert worker.offloaded == offloaded + 5

    # R03 answers case-006: a new version, loaded and scored again in the worker;
    # the older version's figures are not served for it
    _answer(session, study, r03, "case-006")
    _timed(session)
    fresh = cache.study_data(session=session, study=study)
    assert fresh.version != data.version and len(fresh.frame) == len(data.frame) + 1
    again = cache.leaderboard(fresh, fresh.case_ids, BOOT)
    assert again is not board
    assert _pool_c(again) == pytest.approx((C_R01 + C_R03) / 2)
    # R03's reading time now counts the sixth case: the times are of the new version too
    cases = cache.reading_times(fresh, session=session).set_index("responder")["cases"]
    assert cases["R03"] == times.set_index("responder")["cases"]["R03"] + 1
    assert worker.offloaded == offloaded + 8 and worker.fallbacks == 0


def test_a_failure_in_the_worker_is_not_kept(
    session: Session, settings: Settings, worker: ScoringWorker
) -> None:
    study = _study(session, settings)
    session.commit()
    cache = SharedScoring(worker=worker)
    data = cache.study_data(session=session, study=study)
    twice = (data.case_ids[0], data.case_ids[0])
    with pytest.raises(Exception, match="duplicate case ids") as failed:
        cache.leaderboard(data, twice, NO_BOOT)
    with pytest.raises(type(failed.value)):  # asked again: computed again, failing again
        cache.leaderboard(data, twice, NO_BOOT)
    computed = cache.computations
    assert _pool_c(cache.leaderboard(data, data.case_ids, NO_BOOT)) == pytest.approx(
        (C_R01 + C_R02 + C_R03) / 3
    )
    assert cache.computations == computed + 1 and worker.fallbacks == 0


def test_an_error_crosses_the_pipe_and_the_worker_stays(
    session: Session, settings: Settings, worker: ScoringWorker
) -> None:
    """The scoring's own errors come back as they are (UngradedRowsError, which a page
    shows); one that would not unpickle as a WorkerError: the pool is not broken."""
    study = _study(session, settings)
    novel = json.dumps({"case_id": "case-001", "diagnosis": "Novel finding", "likert": 4})
    import_run_file(
        session=session, study=study, source=novel.encode(), fmt="jsonl", name="vlm-beta",
        model="vlm-beta", group="vendor",
    )  # fmt: skip
    session.commit()
    cache = SharedScoring(worker=worker)
    data = cache.study_data(session=session, study=study)
    assert data.n_pending == 1
    with pytest.raises(UngradedRowsError, match="vlm-beta/case-001"):
        cache.leaderboard(data, data.case_ids, NO_BOOT)
    with pytest.raises(WorkerError, match="_Unpicklable: no figures"):
        worker.run(_fails_unpicklably, fallback=lambda: None)
    offloaded = worker.offloaded
    graded = data.graded_cases()  # case-001 left out: the rest scores, in the worker
    assert len(cache.leaderboard(data, graded, NO_BOOT).table) > 0
    assert worker.offloaded == offloaded + 1 and worker.fallbacks == 0


def test_a_killed_worker_is_replaced_by_computing_here(
    session: Session, settings: Settings
) -> None:
    study = _study(session, settings)
    session.commit()
    worker = ScoringWorker()
    try:
        assert worker.wait_ready(120)
        cache = SharedScoring(worker=worker)
        data = cache.study_data(session=session, study=study)
        pid = worker.pid()
        assert pid is not None and pid != os.getpid()
        os.kill(pid, signal.SIGKILL)
        board = cache.leaderboard(data, data.case_ids, NO_BOOT)  # computed here instead
        assert worker.fallbacks == 1
        here = build_leaderboard(data.frame, data.case_ids, NO_BOOT, data.grounded_case_ids)
        pd.testing.assert_frame_equal(board.table, here.table)
        # the next request starts a new worker, which answers once it is up
        assert worker.wait_ready(120) and worker.pid() not in (None, pid)
        offloaded = worker.offloaded
        merged = cache.group_split(data, data.case_ids, NO_BOOT, merge=True)
        assert worker.offloaded == offloaded + 1
        pd.testing.assert_frame_equal(merged, merged_group_split(data, data.case_ids, NO_BOOT))
    finally:
        worker.close()


SERVER = """
import sys
from reader_app.analysis.scoring_worker import ScoringWorker
worker = ScoringWorker()
assert worker.wait_ready(120)
print(worker.pid(), flush=True)
sys.stdin.read()  # until the test kills this process
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_the_worker_ends_when_its_server_is_killed_outright() -> None:
    """A server killed with SIGKILL runs no shutdown: its worker (re-parented to init,
    holding database connections) must still end. Without reader_app.core.parent_watch
    it lived on."""
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        worker_pid = int(server.stdout.readline())
        assert _alive(worker_pid)
    finally:
        server.kill()
        server.wait()
    deadline = time.monotonic() + 30
    while _alive(worker_pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    if _alive(worker_pid):
        os.kill(worker_pid, signal.SIGKILL)
        pytest.fail(f"the scoring worker {worker_pid} outlived its killed server")


def test_the_first_request_is_computed_here_with_no_worker_started() -> None:
    """Issue 43: the server's first analyst page run (the sign-in) computes in the server
    with no worker importing beside it on the same cores; the second request starts the
    worker (and is computed here while it warms up); once up, it answers."""
    worker = ScoringWorker()
    try:
        assert worker.run(os.getpid, fallback=lambda: "here") == "here"
        assert not worker.started and worker.pid() is None
        assert worker.run(os.getpid, fallback=lambda: "here") == "here"  # still warming up
        assert worker.started
        assert worker.wait_ready(120)
        pid = worker.pid()
        assert pid not in (None, os.getpid())
        assert worker.run(os.getpid, fallback=lambda: "here") == pid
    finally:
        worker.close()


def test_run_usage_in_the_worker_once_per_version_and_per_study(
    session: Session, settings: Settings, worker: ScoringWorker
) -> None:
    """The Model runs page's run usage: the worker's equals the server's, it is computed
    once per data version, anew after an import, and one study's never answers for
    another's."""
    study = _study(session, settings)  # vlm-alpha: correct on 4 of 6 cases (CCCWWC)
    other = _study(session, settings, slug="other")
    import_model_run(session, other, "vlm-other", plan_for(CASES, "CWWWWW"))
    grade_everything(session, other, adjudicator_code="ADJ")
    session.commit()
    cache = SharedScoring(worker=worker)
    offloaded = worker.offloaded
    usage = cache.run_usage(session=session, study=study)
    pd.testing.assert_frame_equal(usage, run_usage(session=session, study_id=study.id or 0))
    assert dict(zip(usage["run"], usage["correct"], strict=True)) == {"vlm-alpha": 4}
    assert cache.run_usage(session=session, study=study) is usage  # the same version
    assert worker.offloaded == offloaded + 1
    theirs = cache.run_usage(session=session, study=other)
    assert dict(zip(theirs["run"], theirs["correct"], strict=True)) == {
        "vlm-alpha": 4,
        "vlm-other": 1,
    }
    # a second run imported into the first study: a new version, its usage computed anew
    import_model_run(session, study, "vlm-beta", plan_for(CASES, "CCWWWW"))
    grade_everything(session, study, adjudicator_code="ADJ")
    session.commit()
    again = cache.run_usage(session=session, study=study)
    assert dict(zip(again["run"], again["correct"], strict=True)) == {
        "vlm-alpha": 4,
        "vlm-beta": 2,
    }
    assert worker.offloaded == offloaded + 3 and worker.fallbacks == 0
