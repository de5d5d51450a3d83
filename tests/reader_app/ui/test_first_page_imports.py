"""The analyst's first page run (the Leaderboard through the sign-in link) imports only
what it draws (issue 43): the repeat-run and audit sections decide with one indexed
query whether they have anything to show, and only then import their modules. Before,
every first run loaded the run recorder (with the LLM request code), scoring.io and the
exports module (pyarrow) after the board was drawn, so a sign-in measured to an idle
page gained nothing from the board's lazy imports.

The page runs in a fresh interpreter, as on a server's first visit
(tests/reader_app/ui/test_page_imports.py checks the scripts' own imports the same way).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from sqlmodel import Session, select

from reader_app.core.settings import Settings
from reader_app.models import ModelRun
from tests.factories import make_reader, make_study
from tests.reader_app.analysis.scenario import (
    grade_everything,
    import_model_run,
    plan_for,
    simulate_reader,
)

MAIN = Path(__file__).resolve().parents[3] / "reader_app" / "main.py"
CASES = ["case-000", "case-001", "case-002", "case-003"]
# what only the repeat-run and audit sections need, and only when they have content
SECTION_ONLY = (
    "reader_app.analysis.model_runs",
    "reader_app.runs.record",
    "scoring.io",
    "reader_app.analysis.exports",
    "pyarrow.parquet",
)

PROBE = """
import json, sys
from streamlit.testing.v1 import AppTest
at = AppTest.from_file({main!r}, default_timeout=120)
at.query_params["token"] = {token!r}
at.run()
assert not at.exception, at.exception
print(json.dumps({{
    "subheaders": [s.value for s in at.subheader],
    "loaded": sorted(m for m in {heavy!r} if m in sys.modules),
}}))
"""


def first_run(token: str) -> dict[str, list[str]]:
    """The Leaderboard's first run in a fresh interpreter: its subheaders, and which of
    ``SECTION_ONLY`` it loaded. The scoring stays in the process, as on a first visit
    before the scoring worker is up."""
    probe = PROBE.format(main=str(MAIN), token=token, heavy=SECTION_ONLY)
    out = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "READERSTUDY_SCORING_WORKER": "off"},
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_first_leaderboard_run_imports_no_section_it_does_not_draw(
    db: tuple[Settings, Session],
) -> None:
    settings, session = db
    study = make_study(session, settings.asset_dir, n_cases=4)
    simulate_reader(session, study, "R01", plan_for(CASES, "CCwI"), group="board-certified")
    simulate_reader(session, study, "R02", plan_for(CASES, "CWMC"), group="PGY2")
    import_model_run(session, study, "vlm-a", plan_for(CASES, "CCCW"))
    import_model_run(session, study, "vlm-b", plan_for(CASES, "IwCC"))
    grade_everything(session, study)
    token = make_reader(session, study, code="AN1", role="analyst").token

    plain = first_run(token)
    assert "RadLE metrics, 95% bootstrap CIs" in plain["subheaders"]  # the board is drawn
    assert "Model minus human pool" in plain["subheaders"]
    assert "Repeat runs" not in plain["subheaders"]
    assert plain["loaded"] == []

    # the same runs as a group of repeats: now the section has content and imports
    # what it needs, so the check above can see those modules
    for i, run in enumerate(session.exec(select(ModelRun)).all(), start=1):
        run.run_group, run.repeat_index = "vlm", i
        session.add(run)
    session.commit()
    repeats = first_run(token)
    assert "Repeat runs" in repeats["subheaders"]
    assert {"reader_app.analysis.model_runs", "reader_app.runs.record", "scoring.io"} <= set(
        repeats["loaded"]
    )
