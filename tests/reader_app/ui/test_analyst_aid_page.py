"""The analysts' AI aid page through AppTest: the figures of an aided study (values from
tests/reader_app/analysis/test_aid_exports.py) and the empty state of a study without."""

from __future__ import annotations

import math
from collections.abc import Callable

from sqlmodel import Session
from streamlit.testing.v1 import AppTest

from reader_app.core.settings import Settings
from tests.factories import make_reader, make_study
from tests.reader_app.analysis.test_aid_exports import aided_study
from tests.reader_app.ui.helpers import texts

PAGE = "ui/pages/analyst_aid.py"


def test_the_aid_page_shows_the_switches(
    app_for: Callable[..., AppTest], session: Session, settings: Settings
) -> None:
    study = aided_study(session, settings)
    token = make_reader(session, study, code="AN1", role="analyst").token
    at = app_for(token)
    at.switch_page(PAGE).run()
    assert not at.exception
    assert at.title[0].value == "AI aid"
    tree = texts(at)
    for text in ("Harmful switch rate", "Human pool", "R01", "harmful", "kept_correct"):
        assert text in tree, text
    readers = at.dataframe[0].value
    pool = readers[readers["Reader"] == "Human pool"].iloc[0]
    # one reader: at risk on both cases (model wrong, reader right), gave one up -> 1/2
    assert pool["Harmful switch rate"] == 0.5 and pool["Net benefit"] == -0.5
    # the pool's aided minus unaided: RadLE-A 1/2 - 2/2; one reader gives no MRMC SE
    comparison = at.dataframe[1].value.set_index("Metric")
    assert comparison.loc["RadLE-A", "Aided − unaided"] == -0.5
    assert comparison.loc["RadLE-A", "MRMC difference"] == -0.5
    assert comparison.loc["RadLE-A", "Readers"] == 1
    assert math.isnan(comparison.loc["RadLE-A", "MRMC SE"])


def test_a_study_without_aided_answers_says_so(
    app_for: Callable[..., AppTest], session: Session, settings: Settings
) -> None:
    from tests.reader_app.analysis.scenario import grade_everything, plan_for, simulate_reader

    study = make_study(session, settings.asset_dir, n_cases=2)
    simulate_reader(session, study, "R01", plan_for(["case-000", "case-001"], "CW"))
    grade_everything(session, study)
    token = make_reader(session, study, code="AN1", role="analyst").token
    at = app_for(token)
    at.switch_page(PAGE).run()
    assert not at.exception
    assert "no AI-aided answers" in texts(at)
