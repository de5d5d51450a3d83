"""The static HTML report: self-contained (no script, no network), escaped, complete."""

from __future__ import annotations

import base64
import re

from sqlmodel import Session

from reader_app.analysis.data import study_data
from reader_app.analysis.html_report import render_report
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
HOSTILE_CODE = "<img src=x onerror=alert(1)>"
HOSTILE_RUN = "run</title><script>fetch('https://evil.example')</script>"


def _self_contained(page: str) -> None:
    lowered = page.lower()
    assert "<script" not in lowered and "<link" not in lowered and "<iframe" not in lowered
    assert not re.search(r"<[a-z][^>]*\son[a-z]+\s*=", lowered)  # no event handler in a tag
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", lowered)
    assert "@import" not in lowered and "url(" not in lowered


def test_report_with_data(session: Session, settings: Settings) -> None:
    study = make_study(session, settings.asset_dir, n_cases=4)
    study.title = "Spot <b>diagnosis</b> & friends"
    session.add(study)
    session.commit()
    simulate_reader(session, study, HOSTILE_CODE, plan_for(CASES, "CCwI"), group="PGY2")
    simulate_reader(session, study, "R02", plan_for(CASES, "CWCC"))
    import_model_run(session, study, HOSTILE_RUN, plan_for(CASES, "WCCc"))
    grade_everything(session, study)

    page = render_report(study_data(session=session, study=study), ScoringParams(n_boot=100))
    _self_contained(page)
    assert "Spot &lt;b&gt;diagnosis&lt;/b&gt; &amp; friends" in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "Leaderboard" in page and "Model minus human pool" in page
    # model vs reader panel: A of the run "WCCc" 3/4 minus the pool's (2/4 + 3/4) / 2
    # ("CCwI", "CWCC") = 0.125, with its MRMC interval and p beside it
    mrmc = page.split("<h2>Model vs reader panel</h2>")[1].split("<h2>")[0]
    assert "readers and the cases random" in mrmc and "0.125 [" in mrmc
    assert "Δ C" in mrmc and "p (A)" in mrmc and "&lt;/title&gt;&lt;script&gt;" in mrmc
    images = re.findall(r'src="data:image/svg\+xml;base64,([^"]+)"', page)
    assert len(images) == 6  # C bars, profile, reliability, risk-coverage, groups, case matrix
    for encoded in images:
        svg = base64.b64decode(encoded).decode("utf-8")
        assert svg.startswith("<svg") and "<script" not in svg
    assert "scoring_spec_version" in page and "n_boot" in page and "Humans get, models miss" in page


def test_report_empty_states(session: Session, settings: Settings) -> None:
    study = make_study(session, settings.asset_dir, n_cases=2)
    page = render_report(study_data(session=session, study=study), ScoringParams(n_boot=0))
    _self_contained(page)
    assert "No answers yet" in page and "<img" not in page
    simulate_reader(session, study, "R01", plan_for(["case-000", "case-001"], "wI"))
    page = render_report(study_data(session=session, study=study), ScoringParams(n_boot=0))
    assert "No verdicts yet" in page
