"""The audit for people: the export (defused CSV), the static report, the chart and the
analyst page, with the human readers' G and GA beside the models."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable

import pytest
from sqlmodel import Session, select
from streamlit.testing.v1 import AppTest

from reader_app.analysis.data import study_data
from reader_app.analysis.exports import export_bytes
from reader_app.analysis.html_report import render_report
from reader_app.charts import audit_arms_chart, chart_svg
from reader_app.cli import main
from reader_app.core.settings import Settings
from reader_app.grounding.store import location_json
from reader_app.grounding_audit.view import chart_frame, human_grounding, study_audits
from reader_app.models import Case, Response, Study
from scoring import AuditParams, Location, ScoringParams
from tests.factories import make_reader
from tests.reader_app.analysis.scenario import grade_everything, plan_for, simulate_reader
from tests.reader_app.grounding_audit.audit_study import history_reader, make_audit_study, seeing
from tests.reader_app.grounding_audit.test_audit_grounding_cli import audit_args
from tests.reader_app.ui.conftest import app_for
from tests.reader_app.ui.helpers import texts
from tests.support.openai_stub import OpenAIStub, openai_stub

__all__ = ["app_for", "openai_stub"]

HOSTILE = "=HYPERLINK(1)"


@pytest.fixture
def audited_study(
    session: Session,
    settings: Settings,
    openai_stub: OpenAIStub,
    capsys: pytest.CaptureFixture[str],
) -> Study:
    study = make_audit_study(session, settings.asset_dir)
    openai_stub.responder = seeing
    assert main(audit_args(openai_stub, "seer")) == 0
    openai_stub.responder = history_reader
    assert main(audit_args(openai_stub, "notes", "--name", HOSTILE)) == 0
    capsys.readouterr()
    # one reader: right on c1 and c2, wrong on c3 and c4; points inside c1's and c3's boxes
    simulate_reader(session, study, "R01", plan_for(["c1", "c2", "c3", "c4"], "CCWW"))
    ids = {c.source_id: c.id for c in session.exec(select(Case))}
    for source, point in (("c1", Location(12, 12)), ("c3", Location(22, 32))):
        row = session.exec(
            select(Response).where(Response.case_id == ids[source], Response.reader_id.is_not(None))  # type: ignore[union-attr]
        ).one()
        row.location_json = location_json(point)
        session.add(row)
    session.commit()
    grade_everything(session, study)  # the seeing model's "No acute abnormality" is wrong
    return study


def test_the_export_has_a_row_per_audit_and_arm_and_defuses_names(
    session: Session, audited_study: Study
) -> None:
    text = export_bytes("audit-grounding", "csv", session=session, study=audited_study).decode()
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == 10
    seer = {r["arm"]: r for r in rows if r["audit"] == "seer"}
    assert seer["occlude_relevant"]["correct"] == "0" and seer["original"]["correct"] == "4"
    assert seer["original"]["occlusion_effect"] == "1.0"
    assert seer["original"]["category"] == "uses the image"
    hostile = [r for r in rows if r["audit"] != "seer"]
    assert {r["audit"] for r in hostile} == {"'" + HOSTILE}  # shown as text, never run
    assert {r["category"] for r in hostile} == {"ignores the image"}
    assert {r["run"] for r in hostile} >= {"'" + HOSTILE + " [swap]"}


def test_human_g_and_ga_beside_the_models_in_chart_and_report(
    session: Session, audited_study: Study
) -> None:
    human = human_grounding(session=session, study_id=audited_study.id or 0)
    assert human == {"grounding_rate": 0.5, "grounded_accuracy": 0.25}  # 2/4 hits, 1/4 both
    reports = study_audits(
        session=session, study_id=audited_study.id or 0, params=AuditParams(n_boot=50)
    )
    frame = chart_frame(reports, human)
    assert len(frame) == 12  # 2 models x 5 arms, and G and GA
    assert frame[frame["name"] == "human readers"]["value"].tolist() == [0.5, 0.25]
    svg = chart_svg(audit_arms_chart(frame))
    assert "<svg" in svg and "occlude_relevant" in svg and "human readers" in svg
    data = study_data(session=session, study=audited_study)
    page = render_report(data, ScoringParams(n_boot=50), audits=reports, audit_humans=human)
    assert "<h2>Causal grounding audit</h2>" in page
    assert "uses the image" in page and "ignores the image" in page
    assert "human readers&#x27; G 0.50, GA 0.25" in page
    assert "<b>=HYPERLINK" not in page and "=HYPERLINK(1)" in page  # escaped text


def test_the_analyst_page_shows_the_audit(
    app_for: Callable[..., AppTest], session: Session, audited_study: Study
) -> None:
    token = make_reader(session, audited_study, code="AN1", role="analyst").token
    at = app_for(token)
    at.number_input(key="an_boot").set_value(50)
    at.run()
    assert not at.exception
    tree = texts(at)
    assert "Causal grounding audit" in tree
    assert "uses the image" in tree and "ignores the image" in tree
    assert "1.00 [1.00, 1.00]" in tree  # the seeing model's effect and its CI


def test_no_audit_no_section(session: Session, settings: Settings) -> None:
    study = make_audit_study(session, settings.asset_dir)
    assert study_audits(session=session, study_id=study.id or 0) == []
    assert (
        "grounding audit"
        not in render_report(
            study_data(session=session, study=study), ScoringParams(n_boot=0), audits=[]
        ).lower()
    )


def test_audit_arms_are_never_ranked_among_the_models(
    app_for: Callable[..., AppTest], session: Session, audited_study: Study
) -> None:
    """Issue 42: "seer [occlude_relevant]", "seer (text only)"... were rows of the RadLE-C
    table and bars of its chart; only the audited model's own run is a model."""
    data = study_data(session=session, study=audited_study)
    models = set(data.frame.loc[data.frame["kind"] == "model", "responder"])
    assert models == {"seer", HOSTILE}  # each audit's original arm, nothing else
    assert "seer [occlude_relevant]" in data.audit_runs
    assert "seer (text only)" in data.audit_runs and len(data.audit_runs) == 8
    token = make_reader(session, audited_study, code="AN1", role="analyst").token
    at = app_for(token)
    at.number_input(key="an_boot").set_value(50)
    at.run()
    assert not at.exception
    # the RadLE table (HTML) and the RadLE-C chart: the audited models, no arm
    board = "\n".join(str(h.proto.body) for h in at.get("html"))
    assert "seer" in board and "[occlude" not in board and "(text only)" not in board
    charts = [str(c.proto.spec) for c in at.get("vega_lite_chart")]
    radle_c = [c for c in charts if "RadLE-C" in c]
    assert radle_c and "seer" in radle_c[0]
    assert not any("[occlude" in c or "(text only)" in c for c in radle_c)
    tree = texts(at)  # the audit's own section still shows every arm
    assert "Causal grounding audit" in tree
