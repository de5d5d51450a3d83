"""The analyst's pages through AppTest: leaderboard, charts, per-case matrix, exports,
report; empty states; the role gate; hostile names shown as text."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlmodel import Session
from streamlit.testing.v1 import AppTest

from reader_app.core.settings import Settings
from reader_app.ui.context import SignedIn
from tests.factories import make_reader, make_study
from tests.reader_app.analysis.scenario import (
    grade_everything,
    import_model_run,
    plan_for,
    simulate_reader,
)
from tests.reader_app.ui.helpers import texts
from tests.support.text import plain

MAIN = Path(__file__).resolve().parents[3] / "reader_app" / "main.py"

CASES = ["case-000", "case-001", "case-002", "case-003"]
HOSTILE = "**bold** <b>x</b> [link](http://evil.example)"
PAGES = {
    "leaderboard": "ui/pages/analyst.py",
    "charts": "ui/pages/analyst_charts.py",
    "cases": "ui/pages/analyst_cases.py",
    "exports": "ui/pages/analyst_exports.py",
    "runs": "ui/pages/analyst_runs.py",
    "report": "ui/pages/report.py",
}


def _boot(at: AppTest, n: int) -> AppTest:
    at.number_input(key="an_boot").set_value(n)
    return at.run()


def _h_cell(at: AppTest, name: str) -> str:
    """The H cell (the row's last) of ``name`` in the leaderboard table: value, then CI."""
    (table,) = [h.proto.body for h in at.get("html") if f'data-name="{name}"' in h.proto.body]
    row = table.split(f'data-name="{name}"', 1)[1].split("</tr>", 1)[0]
    return re.sub(r"<[^>]+>", " ", row.rsplit("<td", 1)[1].split(">", 1)[1]).strip()


def _scored_study(session: Session, settings: Settings) -> str:
    study = make_study(session, settings.asset_dir, n_cases=4)
    simulate_reader(session, study, "R01", plan_for(CASES, "CCwI"), group="board-certified")
    simulate_reader(session, study, "R02", plan_for(CASES, "CWMC"), group="PGY2")
    simulate_reader(session, study, HOSTILE, plan_for(CASES, "cWCI"), group="PGY3")
    import_model_run(session, study, "vlm-a", plan_for(CASES, "CCCW"))
    import_model_run(session, study, "vlm-b", plan_for(CASES, "IwCC"))
    grade_everything(session, study)
    return make_reader(session, study, code="AN1", role="analyst").token


def test_leaderboard_and_every_analyst_page(
    app_for: Callable[..., AppTest], session: Session, settings: Settings
) -> None:
    at = _boot(app_for(_scored_study(session, settings)), 100)
    assert not at.exception
    assert at.title[0].value == "Leaderboard"
    tree = texts(at)
    for name in ("Human pool", "Pool: PGY2", "vlm-a", "vlm-b", "R01"):
        assert name in tree
    assert HOSTILE in tree  # in a dataframe cell: drawn as text, never as markdown
    assert not any(HOSTILE in m.value for m in at.markdown)
    assert "Model minus human pool" in tree and "p (sign-flip, points)" in tree
    assert "Model vs reader panel (readers and cases random)" in tree and "p (A)" in tree
    # issue 40: RadLE-H v2 by default, v1 from the sidebar, named beside the table.
    # vlm-b (I, w1, C4, C4): R = 2/2, Cov = 2/4, D = (1 - 0)/1 (v2) or 1 - 0/(4 - 2) (v1)
    assert "RadLE-H v2, harmonic mean" in texts(at)
    assert _h_cell(at, "vlm-b").startswith("75.0")  # 300 / (1 + 2 + 1)
    at.selectbox(key="an_h_variant").set_value("v1").run()
    assert "RadLE-H v1, geometric mean" in texts(at)
    assert _h_cell(at, "vlm-b").startswith("79.4")  # 100 * (1 * 0.5 * 1) ** (1/3) = 79.37
    at.toggle(key="an_readers").set_value(False).run()
    assert "R01" not in texts(at) and "vlm-a" in texts(at)

    for page in ("charts", "cases", "runs", "exports", "report"):
        at.switch_page(PAGES[page]).run()
        assert not at.exception, page
        if page != "runs":  # the runs page has no scoring controls
            assert at.number_input(key="an_boot").value == 100  # controls keep their values
            assert at.selectbox(key="an_h_variant").value == "v1"
    # every tab of the pages drawn one tab at a time (the first is drawn above)
    tabs = {
        "charts": ("_ch_tab", ["Reliability", "Risk-coverage", "Reader groups", "Reading time"]),
        "cases": ("_pc_tab", ["Case lists", "Where responders looked"]),
    }
    for page, (key, labels) in tabs.items():
        at.switch_page(PAGES[page]).run()
        for label in labels:
            at.session_state[key] = label  # as a click on the tab leaves it (kept)
            at.run()
            assert not at.exception, (page, label)
            assert label in [t.label for t in at.tabs]
            if label == "Case lists":
                assert "Humans get, models miss" in texts(at)
            if label == "Reliability":  # two runs: nobody greyed, and the box says so
                box = at.selectbox(key="ch_highlight")
                assert box.index is not None, "the box shows no choice"
                assert box.options[box.index] == "none: every responder in its own colour"
    at.switch_page(PAGES["exports"]).run()
    assert "Not available yet" not in texts(at)
    # issue 41: the runs' tokens and cost, repeat groups and the aided arm's switches
    # are downloads of the page as well as of `readerstudy export`
    labels = [b.label for b in at.get("download_button")]
    for what in ("responses", "mrmc", "runs", "repeats", "aid"):
        assert any(label.startswith(f"Download {what} (") for label in labels), labels
    at.switch_page(PAGES["runs"]).run()
    assert "vlm-b" in texts(at) and "import" in texts(at)


def test_many_model_runs_show_one_in_colour_the_rest_grey(
    app_for: Callable[..., AppTest], session: Session, settings: Settings
) -> None:
    """Issue 42: 16 model lines in similar warm hues; from seven runs on, the Charts page
    draws one responder in colour (the leaderboard's first model) and the others grey."""
    from reader_app.charts.palette import GREYED

    study = make_study(session, settings.asset_dir, n_cases=4)
    simulate_reader(session, study, "R01", plan_for(CASES, "CCwI"), group="board-certified")
    patterns = ("CCCW", "IwCC", "CWCW", "WWCC", "CCCC", "cWMI", "MMWW")
    for i, pattern in enumerate(patterns):
        import_model_run(session, study, f"vlm-{i}", plan_for(CASES, pattern))
    grade_everything(session, study)
    at = _boot(app_for(make_reader(session, study, code="AN1", role="analyst").token), 0)
    at.switch_page(PAGES["charts"]).run()
    assert not at.exception
    # one tab a figure, only the open one drawn: the response profile first
    assert [c for c in at.get("vega_lite_chart") if "Reliability" in str(c.proto)] == []
    at.session_state["_ch_tab"] = "Reliability"  # as a click on the tab leaves it (kept)
    at.run()
    assert not at.exception
    box = at.selectbox(key="ch_highlight")
    assert box.value is not None and box.value.startswith("vlm-") and box.index == 1

    def reliability_colours() -> dict[str, str]:
        (chart,) = [c for c in at.get("vega_lite_chart") if "Reliability" in str(c.proto)]
        spec = json.loads(chart.proto.spec)
        scale = spec["layer"][1]["encoding"]["color"]["scale"]
        return dict(zip(scale["domain"], scale["range"], strict=True))

    colours = reliability_colours()
    assert colours[box.value] != GREYED and colours["R01"] == GREYED
    assert sum(c == GREYED for c in colours.values()) == len(patterns)  # 6 runs, 1 reader
    box.select_index(0).run()  # none chosen: every responder in its own colour again
    assert GREYED not in reliability_colours().values()


def test_the_run_uploader_states_its_own_16_mb_cap(
    app_for: Callable[..., AppTest], session: Session, settings: Settings
) -> None:
    """Issue 42: the run uploader said Streamlit's "500MB per file"; the gate holds a run
    file to RUN_UPLOAD_MB, and the widget's own limit (what it shows) is that."""
    from reader_app.core.upload_limits import RUN_UPLOAD_MB

    study = make_study(session, settings.asset_dir, n_cases=2)
    at = app_for(make_reader(session, study, code="AN1", role="analyst").token)
    at.switch_page(PAGES["runs"]).run()
    assert not at.exception
    (uploader,) = at.get("file_uploader")
    assert uploader.proto.max_upload_size_mb == RUN_UPLOAD_MB == 16


def test_empty_states_are_messages(
    app_for: Callable[..., AppTest], session: Session, settings: Settings
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=2)
    token = make_reader(session, study, code="AN1", role="analyst").token
    at = app_for(token)
    assert not at.exception
    assert "No answers yet" in plain(at.info[0].value)
    for page in PAGES.values():
        at.switch_page(page).run()
        assert not at.exception, page

    simulate_reader(session, study, "R01", plan_for(["case-000", "case-001"], "Cw"))
    at = app_for(token)
    assert "No verdicts yet" in plain(at.info[0].value)
    at.switch_page(PAGES["exports"]).run()
    assert not at.exception and "Not available yet" in texts(at)  # MRMC needs verdicts
    # issue 42: the MRMC export said "grade them first" without saying who, or where
    (mrmc,) = [w for w in at.warning if "MRMC" in plain(w.value) or "verdict" in plain(w.value)]
    said = plain(mrmc.value)
    assert "adjudicator on the Adjudication page" in said, said
    assert "Invites page with the role adjudicator" in said, said
    assert f"readerstudy grade {study.slug}" in said, said

    from reader_app.grading.autograde import autograde_study

    autograde_study(session=session, study_id=study.id or 0)
    at = app_for(token)
    assert "not graded yet" in plain(at.info[0].value)
    at.toggle(key="an_graded_only").set_value(True).run()
    assert not at.exception
    assert "Scored on the 1 fully graded case(s) of 2" in plain(at.warning[0].value)
    tree = texts(at)
    assert "The pool has one reader" in tree and "No model runs yet" in tree


@pytest.mark.parametrize("role", ["reader", "coordinator", "adjudicator"])
def test_other_roles_never_see_the_analyst_pages(
    app_for: Callable[..., AppTest], session: Session, settings: Settings, role: str
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=2)
    import_model_run(session, study, "secret-run", plan_for(["case-000"], "C"))
    invite = make_reader(session, study, code="X1", role=role, ready=True)
    at = app_for(invite.token)
    assert not at.exception and "secret-run" not in texts(at)
    for page in ("leaderboard", "charts", "cases", "runs", "report"):
        with pytest.raises(ValueError, match="Could not find a navigation page"):
            at.switch_page(PAGES[page])  # the page does not exist for this role
    # and the page itself refuses, should it ever be reached
    for page in PAGES.values():
        if role == "coordinator" and page == PAGES["exports"]:
            continue  # exports are the coordinator's too
        direct = AppTest.from_file(str(MAIN.parent / page), default_timeout=30)
        direct.session_state["_signed_in"] = SignedIn(
            invite.reader.id or 0, study.id or 0, "X1", role, invite.reader.token_hash
        )
        direct.run()
        assert not direct.exception
        assert plain(direct.error[0].value).startswith("This page is for the analyst"), page
        assert "secret-run" not in texts(direct)
