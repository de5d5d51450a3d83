"""The scored study warmed at server start (reader_app/analysis/prewarm.py): the latest
studies with answers, loaded and scored with the analyst pages' default parameters into
the shared scoring; a study without answers or not gradeable yet is not scored. On
SQLite and PostgreSQL (the ``session`` fixture), built through the real services."""

from __future__ import annotations

import functools
import os
import threading
from pathlib import Path

import pytest
from sqlmodel import Session

from reader_app.analysis import scoring_worker
from reader_app.analysis.data import check_scorable
from reader_app.analysis.prewarm import Prewarmed, prewarm_scored_studies, studies_to_prewarm
from reader_app.analysis.scored_study import SharedScoring
from reader_app.analysis.scoring_worker import NICE, ScoringWorker
from reader_app.core.settings import Settings
from scoring import ScoringParams
from tests.factories import make_study
from tests.reader_app.analysis.scenario import (
    grade_everything,
    import_model_run,
    plan_for,
    simulate_reader,
)

CASES = ["case-000", "case-001", "case-002", "case-003"]


def test_the_latest_answered_studies_are_scored_with_the_default_parameters(
    session: Session, settings: Settings
) -> None:
    graded = make_study(session, settings.asset_dir, n_cases=4, slug="graded")
    simulate_reader(session, graded, "R01", plan_for(CASES, "CCwI"))
    import_model_run(session, graded, "vlm-a", plan_for(CASES, "CCCW"))
    grade_everything(session, graded)
    make_study(session, settings.asset_dir, n_cases=2, slug="empty")  # no answers: skipped
    ungraded = make_study(session, settings.asset_dir, n_cases=4, slug="ungraded")
    simulate_reader(session, ungraded, "R01", plan_for(CASES, "CCwI"))  # nothing graded

    assert [s.slug for s in studies_to_prewarm(session=session)] == ["ungraded", "graded"]
    assert [s.slug for s in studies_to_prewarm(session=session, limit=1)] == ["ungraded"]

    shared = SharedScoring()
    done = prewarm_scored_studies(session=session, shared=shared)
    assert [(d.slug, d.scored) for d in done] == [("ungraded", False), ("graded", True)]
    assert all(isinstance(d, Prewarmed) and d.seconds > 0 for d in done)
    # two frames and one board computed; the board is what the Leaderboard asks for first
    assert shared.computations == 3
    data = shared.study_data(session=session, study=graded)
    assert shared.has_leaderboard(data, check_scorable(data), ScoringParams())
    assert not shared.has_leaderboard(data, check_scorable(data), ScoringParams(seed=1))
    assert shared.computations == 3  # the frame came from the prewarm too

    # an answer after the prewarm changes the data version: the board is not served stale
    simulate_reader(session, graded, "R02", plan_for(CASES, "CWMC"))
    grade_everything(session, graded)
    fresh = shared.study_data(session=session, study=graded)
    assert fresh.version != data.version
    assert not shared.has_leaderboard(fresh, check_scorable(fresh), ScoringParams())


def test_the_prewarm_starts_the_scoring_worker_where_there_are_answers(
    session: Session, settings: Settings
) -> None:
    """Issue 43: the first analyst's pages after a start found the worker cold and were
    computed in the server among the readers; the prewarm starts it (at nice 10, not
    more, though the prewarm's thread is at nice 10 itself), but not on a server whose
    studies have no answers yet."""
    idle = ScoringWorker()
    try:
        make_study(session, settings.asset_dir, n_cases=2, slug="empty")
        assert prewarm_scored_studies(session=session, shared=SharedScoring(worker=idle)) == []
        assert not idle.started
    finally:
        idle.close()
    study = make_study(session, settings.asset_dir, n_cases=4, slug="graded")
    simulate_reader(session, study, "R01", plan_for(CASES, "CCwI"))
    grade_everything(session, study)
    worker = ScoringWorker()
    try:
        shared = SharedScoring(worker=worker)
        # as reader_app/web/prewarm.py runs it: this thread at nice 10 (Linux: per thread)
        result: list[list[Prewarmed]] = []

        def niced() -> None:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)
            result.append(prewarm_scored_studies(session=session, shared=shared))

        thread = threading.Thread(target=niced)
        thread.start()
        thread.join()
        assert [(d.slug, d.scored) for d in result[0]] == [("graded", True)]
        assert worker.started
        assert worker.wait_ready(120)
        pid = worker.pid()
        assert pid is not None and os.getpriority(os.PRIO_PROCESS, pid) == NICE
        # with the kernel's autogroups, in a session of its own whose group sits 10 steps
        # of niceness under this process's (scoring_worker.own_autogroup): against other
        # sessions (a reader's browser on the same workstation) the process's own
        # niceness would not count
        switch = Path("/proc/sys/kernel/sched_autogroup_enabled")
        # asked in the worker itself, through its own /proc/self (not /proc/<its pid>
        # from here, which a CI runner's namespaces can make another process's)
        in_worker = functools.partial(pytest.fail, "computed here, not in the worker")
        ours = scoring_worker.group_nice()
        group = worker.run(scoring_worker.group_nice, fallback=in_worker)
        if switch.exists() and switch.read_text().strip() == "1" and ours is not None:
            assert worker.run(os.getsid, 0, fallback=in_worker) == pid != os.getsid(0)
            assert group == min(19, ours + NICE)
        else:  # no group to read (autogroups off, or /proc/self/autogroup unreadable, as
            # on the last CI runner): the worker has none to set either, and its nice 10
            # above is what counts
            assert group is None or group == ours
    finally:
        worker.close()
