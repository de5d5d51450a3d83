"""kill -9 of an app replica in the middle of a load run: restart, resume, nothing lost or doubled.

scripts/loadtest.py runs two replica processes (each with the app's own engine
and pool, each serving half the readers; readers switch replica mid-exam). At
given fractions of all answers it SIGKILLs a replica and starts it again; the
restarted replica signs its readers in again and resumes them through
``next_case``. The load test then checks every acknowledged answer against the
database.
"""

from __future__ import annotations

import pytest

from tests.reliability.conftest import run_loadtest

pytestmark = pytest.mark.slow


def test_kill9_of_replicas_mid_run_loses_and_doubles_nothing(db_url: str) -> None:
    summary, output = run_loadtest(
        "--readers", "8", "--cases", "24", "--replicas", "2", "--think-ms", "2:30",
        "--race-rate", "0.05", "--kill-at", "0.2,0.45,0.7", "--restart-delay", "0.3",
        "--time-limit", "150", "--database-url", db_url,
    )  # fmt: skip
    assert summary["kills"] == 3, output[-3000:]
    # the exam resumed after every kill and finished
    assert summary["complete"] and summary["committed"] == 8 * 24, output[-3000:]
    assert summary["lost"] == 0
    assert summary["duplicated"] == 0
    assert summary["errors"] == 0 and summary["_exit"] == 0, output[-3000:]
    # each kill happened while answers were still being acknowledged
    acked = [k["acked_before"] for k in summary["detail"]["kill_log"]]
    assert acked == sorted(acked) and acked[-1] < 8 * 24
