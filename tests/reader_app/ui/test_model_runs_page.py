"""The Model runs page and the leaderboard with repeat runs, through AppTest (issue 41):
each run's tokens, cost and cost per correct answer; each group's agreement.

The runs are real: ``run-model --repeats 3`` against the stub of
tests/reader_app/runs/test_repeat_runs.py (its docstring derives the figures by
hand: Fleiss' kappa 7/15, RadLE-C mean 1250 and SD 300).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from sqlmodel import Session, select
from streamlit.testing.v1 import AppTest

from reader_app.cli import main
from reader_app.core.settings import Settings
from reader_app.grading.memory import record_verdict
from reader_app.grading.normalize import normalize_answer
from reader_app.models import Case
from tests.factories import make_reader, make_study
from tests.reader_app.runs.test_repeat_runs import scripted
from tests.reader_app.ui.helpers import texts
from tests.support.openai_stub import OpenAIStub, openai_stub

__all__ = ["openai_stub"]


def test_runs_page_and_leaderboard_show_cost_and_repeat_agreement(
    app_for: Callable[..., AppTest],
    session: Session,
    settings: Settings,
    openai_stub: OpenAIStub,
    capsys: pytest.CaptureFixture[str],
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=4)
    assert study.id is not None
    for case in session.exec(select(Case)).all():
        assert case.id is not None
        record_verdict(
            session=session,
            study_id=study.id,
            case_id=case.id,
            normalized_answer=normalize_answer("Wrong answer"),
            correct=0,
            source="adjudicator",
            decided_by="test",
        )
    session.commit()
    openai_stub.responder = scripted(session)  # type: ignore[assignment]
    args = ["run-model", "study", "--endpoint", openai_stub.base_url, "--model", "stub-vlm"]
    # every reply of the stub: 1000 prompt tokens; price $1 per million in, $0 out ->
    # $0.001 a call, $0.004 a repeat; repeat 1 has 2 correct answers: $0.002 each
    code = main([*args, "--repeats", "3", "--quiet", "--price-in", "1", "--price-out", "0"])
    assert code == 0, capsys.readouterr().err
    token = make_reader(session, study, code="AN1", role="analyst").token

    at = app_for(token)
    at.number_input(key="an_boot").set_value(0)
    at.run()
    assert not at.exception
    assert "Repeat runs" in texts(at)
    (repeats,) = [d.value for d in at.dataframe if "outcome_kappa" in d.value.columns]
    assert repeats.iloc[0]["outcome_kappa"] == pytest.approx(7 / 15)
    assert repeats.iloc[0]["radle_c_mean"] == pytest.approx(1250.0)

    at.switch_page("ui/pages/analyst_runs.py").run()
    assert not at.exception
    runs = next(d.value for d in at.dataframe if "cost_per_correct" in d.value.columns)
    first = runs[runs["run"] == "stub-vlm #1"].iloc[0]
    assert first["cost"] == pytest.approx(0.004) and first["cost_source"] == "price"
    assert first["cost_per_correct"] == pytest.approx(0.002)
    assert first["prompt_tokens"] == 4000 and first["repeat"] == 1
    table = next(d.value for d in at.dataframe if "identical_share" in d.value.columns)
    assert table.iloc[0]["identical_share"] == pytest.approx(0.5)
