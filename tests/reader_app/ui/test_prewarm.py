"""The server's start-up prewarm (reader_app/web/prewarm.py, issue 43): it really imports
what the first page runs import, and it leaves the analyst's sign-in page run (the
Leaderboard) with nothing to load or score.

Each check runs in a fresh interpreter, as a server's first page run does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from sqlmodel import Session

from reader_app.core.settings import Settings
from reader_app.web.prewarm import SCRIPTS, imported_by
from tests.factories import make_reader, make_study
from tests.reader_app.analysis.scenario import (
    grade_everything,
    import_model_run,
    plan_for,
    simulate_reader,
)

MAIN = Path(__file__).resolve().parents[3] / "reader_app" / "main.py"
CASES = ["case-000", "case-001", "case-002", "case-003"]
# what the first page runs import, whatever the prewarm reads from the scripts
EXPECTED = (
    "pandas",
    "sqlmodel",
    "reader_app.models",
    "reader_app.ui.context",
    "reader_app.ui.components.analysis_cache",
    "reader_app.analysis.leaderboard",
    "PIL.PngImagePlugin",  # the favicon, which st.set_page_config encodes
)

IMPORTS = """
import json, sys
before = sorted(m for m in {expected!r} if m in sys.modules)
from reader_app.web.prewarm import import_app_modules
import_app_modules()
print(json.dumps({{"before": before,
                   "after": sorted(m for m in {expected!r} if m in sys.modules)}}))
"""

SIGN_IN = """
import json
from streamlit.testing.v1 import AppTest
from reader_app.analysis.scored_study import SHARED
{warm}
warmed = SHARED.computations
at = AppTest.from_file({main!r}, default_timeout=120)
at.query_params["token"] = {token!r}
at.run()
assert not at.exception, at.exception
print(json.dumps({{"warmed": warmed, "page": SHARED.computations - warmed,
                   "subheaders": [s.value for s in at.subheader]}}))
"""
PREWARM = "from reader_app.web.prewarm import prewarm; prewarm({url!r})"

NICE = """
import json, os, sys, time
from reader_app.web.prewarm import start_prewarm
assert "numpy" not in sys.modules
thread = start_prewarm({url!r})
thread.join()
deadline = time.monotonic() + 10  # the system thread outlives join() by a moment
while str(thread.native_id) in os.listdir("/proc/self/task") and time.monotonic() < deadline:
    time.sleep(0.05)
def nice(tid):
    with open(f"/proc/self/task/{{tid}}/stat") as fh:
        return int(fh.read().rsplit(")", 1)[1].split()[16])
print(json.dumps({{"numpy": "numpy" in sys.modules,
                   "nice": sorted({{nice(t) for t in os.listdir("/proc/self/task")}})}}))
"""


def _probe(code: str) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "READERSTUDY_SCORING_WORKER": "off"},
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_the_scripts_imports_are_read_from_their_source() -> None:
    main, exam, analyst = (imported_by(p) for p in SCRIPTS)
    assert "streamlit" in main and "reader_app.ui.context" in main
    assert "reader_app.ui.components.analysis_cache" in analyst
    assert "__future__" not in main + exam + analyst


def test_the_prewarm_imports_what_the_first_page_runs_import() -> None:
    res = _probe(IMPORTS.format(expected=EXPECTED))
    assert res["before"] == []  # a fresh interpreter: nothing of it yet
    assert res["after"] == sorted(EXPECTED)


def test_after_the_prewarm_the_sign_in_page_run_loads_and_scores_nothing(
    db: tuple[Settings, Session],
) -> None:
    settings, session = db
    study = make_study(session, settings.asset_dir, n_cases=4)
    simulate_reader(session, study, "R01", plan_for(CASES, "CCwI"), group="board-certified")
    simulate_reader(session, study, "R02", plan_for(CASES, "CWMC"), group="PGY2")
    import_model_run(session, study, "vlm-a", plan_for(CASES, "CCCW"))
    grade_everything(session, study)
    make_study(session, settings.asset_dir, n_cases=2, slug="no-answers")  # skipped
    token = make_reader(session, study, code="AN1", role="analyst").token

    cold = _probe(SIGN_IN.format(warm="", main=str(MAIN), token=token))
    warm = _probe(
        SIGN_IN.format(warm=PREWARM.format(url=settings.database_url), main=str(MAIN), token=token)
    )
    # without it, the sign-in loads the frame and scores it twice (point estimates, then
    # the bootstrap); after it, the prewarm did those (frame, board) and the page none
    assert cold["warmed"] == 0 and cold["page"] >= 3
    assert warm["warmed"] == 2
    assert warm["page"] == 0
    assert "RadLE metrics, 95% bootstrap CIs" in warm["subheaders"]  # the board is drawn
    assert warm["subheaders"] == cold["subheaders"]


def test_the_prewarm_scores_with_the_parameters_the_analyst_pages_start_with() -> None:
    """prewarm_scored_studies scores with ScoringParams(); the sidebar's defaults must
    give the same parameters, or the sign-in would miss the prewarmed board."""
    from reader_app.ui.components.analysis_cache import DEFAULTS
    from scoring import ScoringParams

    sidebar = ScoringParams(
        idk_score=float(DEFAULTS["an_idk"]),
        min_completion=float(DEFAULTS["an_min_completion"]),
        n_boot=int(DEFAULTS["an_boot"]),
        seed=int(DEFAULTS["an_seed"]),
        h_variant=str(DEFAULTS["an_h_variant"]),
    )
    assert sidebar == ScoringParams()


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="Linux only")
def test_no_thread_keeps_the_prewarm_s_low_priority(db: tuple[Settings, Session]) -> None:
    """The imports run at the server's priority: the threads they start (numpy's BLAS
    pool) serve every later page run, and a thread inherits its starter's priority."""
    settings, _ = db
    res = _probe(NICE.format(url=settings.database_url))
    assert res["numpy"] is True  # the prewarm thread imported it
    assert res["nice"] == [os.nice(0)]  # every thread left runs at this process's priority
