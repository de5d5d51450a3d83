"""Script-injection sweep (issue 39): every text one role writes that another sees, in Chromium.

One study carries script payloads (``tests/security/hostile.py``: an ``<img onerror>``,
a ``<script>``, a ``javascript:`` link, markdown link and image, an ``=HYPERLINK``
formula) in each text a reader, coordinator or model can write: the study title,
a case history, the answer key and a synonym, a reference report, a reader's code
and group, a reader's diagnosis and report (findings, impression), a model run's
name, model, reply and reasoning, a judge call's reason, a rubric judgement's
reasons and a rubric grade's note. Then each page that shows them is opened with the
role that sees it (the exam; the adjudication queue for diagnoses and for reports;
every coordinator and analyst page: leaderboard, charts, per-case matrix, model runs,
exports, report) and the static HTML report the Report page builds is downloaded and
opened: ``INJECTION_PROBE`` finds no element carrying a payload in a URL or handler
attribute, no script holding one, and ``window.__pwned`` unset, in every frame.
The negative control puts the same payloads into a page as markup and the probe trips.
CSV formula safety has its own tests (``test_csv_safety.py``); this sweep does not
repeat them.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect
from sqlmodel import Session, col, select

from reader_app.core.auth import sign_in_link
from reader_app.grading.autograde import autograde_study
from reader_app.models import (
    AnswerKey,
    Case,
    CaseImage,
    CaseReport,
    JudgeCall,
    ModelRun,
    Reader,
    Response,
    RubricGrade,
    RubricJudgement,
    Study,
)
from reader_app.ui.navigation import ROLE_PAGES
from tests.e2e.conftest import Server, served_on_database
from tests.e2e.exam_driver import settled, submit_button
from tests.factories import make_reader, make_study
from tests.security.hostile import (
    INJECTION_PROBE,
    PWNED_ALL,
    PWNED_IMG,
    PWNED_LINK,
    PWNED_MARKDOWN,
    PWNED_SCRIPT,
)

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("injection_sweep_browser")]

READER_CODE = PWNED_IMG  # 36 characters: a reader code holds 64
OTHER_CODE = PWNED_SCRIPT
GROUP = "[g](javascript:window.__pwned=1)"


@dataclass
class Hostile:
    server: Server
    tokens: dict[str, str]


def _plant(server: Server) -> dict[str, str]:
    """The hostile study; returns a sign-in token by role."""
    tokens: dict[str, str] = {}
    with Session(server.engine, expire_on_commit=False) as db:
        study = make_study(
            db,
            server.settings.asset_dir,
            slug="inj" + uuid.uuid4().hex[:8],
            n_cases=4,
            history=PWNED_ALL,
            diagnoses=[PWNED_ALL] * 4,
            config={"report_fields": ["findings", "impression"]},
        )
        study.title = f"Study {PWNED_IMG} {PWNED_MARKDOWN}"
        db.add(study)
        sid = study.id
        assert sid is not None
        cases = list(db.exec(select(Case).where(Case.study_id == sid).order_by(col(Case.position))))
        for case in cases:  # the factory gives every other case a history: give all one
            case.history = PWNED_ALL
            db.add(case)
        for key in db.exec(
            select(AnswerKey).where(col(AnswerKey.case_id).in_([c.id for c in cases]))
        ):
            key.synonyms = f"{PWNED_LINK}|{PWNED_MARKDOWN}"
            db.add(key)
        report_case = cases[3]
        assert report_case.id is not None
        db.add(
            CaseReport(
                case_id=report_case.id, answer="report",
                reference_findings=PWNED_ALL, reference_impression=PWNED_ALL,
            )
        )  # fmt: skip
        db.commit()

        def shas(case: Case) -> str:
            return ",".join(
                db.exec(
                    select(CaseImage.sha256)
                    .where(CaseImage.case_id == case.id)
                    .order_by(col(CaseImage.seq))
                )
            )

        other = make_reader(db, study, code=OTHER_CODE, group=GROUP, ready=True).reader
        adjudicator = make_reader(db, study, code="ADJ1", role="adjudicator")
        tokens["adjudicator"] = adjudicator.token
        run = ModelRun(
            study_id=sid, name=f"{PWNED_IMG} {PWNED_MARKDOWN}", model=PWNED_SCRIPT,
            group_name=GROUP, source="import",
        )  # fmt: skip
        db.add(run)
        db.flush()
        # cases 0 and 1: the key and a synonym (graded by the key, so the analyst pages
        # have cases to score); case 2: waits for the adjudicator; case 3: a report
        other_answers = {0: PWNED_ALL, 1: PWNED_LINK, 2: PWNED_IMG}
        rows = []
        for case in cases:
            assert case.id is not None
            report = case.id == report_case.id
            rows.append(
                Response(
                    study_id=sid, case_id=case.id, reader_id=other.id,
                    diagnosis=None if report else other_answers[case.position],
                    findings=PWNED_ALL if report else None,
                    impression=PWNED_ALL if report else None,
                    likert=2, status="answered", image_sha256=shas(case),
                )
            )  # fmt: skip
            rows.append(
                Response(
                    study_id=sid, case_id=case.id, model_run_id=run.id,
                    diagnosis=None if report else PWNED_ALL,
                    findings=PWNED_ALL if report else None,
                    impression=PWNED_ALL if report else None,
                    raw_reply=PWNED_ALL, reasoning_text=PWNED_ALL, likert=3,
                    status="answered", image_sha256=shas(case),
                )
            )  # fmt: skip
        db.add_all(rows)
        db.flush()
        human_report = next(r for r in rows if r.reader_id and r.findings)
        assert human_report.id is not None and adjudicator.reader.id is not None
        db.commit()
        autograde_study(session=db, study_id=sid)  # case 0's answers match the key
        db.add(
            RubricJudgement(
                response_id=human_report.id, prompt_version="v1", judges="a@h+b@h",
                scores_json="[30, 12]", status="disagree", gap=18,
                reasons_json=json.dumps([PWNED_ALL, PWNED_MARKDOWN]),
            )
        )  # fmt: skip
        db.add(
            JudgeCall(
                cache_key=uuid.uuid4().hex, endpoint_host="127.0.0.1", model=PWNED_SCRIPT,
                prompt_version="v1", normalized_answer=PWNED_ALL.lower(), correct=0,
                reason=PWNED_ALL, reply=json.dumps({"correct": False, "reason": PWNED_ALL}),
            )
        )  # fmt: skip
        second = make_reader(db, study, code="ADJ2", role="adjudicator").reader
        assert second.id is not None
        db.add(
            RubricGrade(
                response_id=human_report.id, adjudicator_id=second.id, score=20, note=PWNED_ALL
            )
        )
        db.commit()
        tokens["reader"] = make_reader(db, study, code=READER_CODE, group=GROUP, ready=True).token
        for role in ("coordinator", "analyst"):
            tokens[role] = make_reader(db, study, code=f"{role[:2].upper()}1", role=role).token
        assert db.get(Study, sid) is not None
        assert db.exec(select(Reader).where(Reader.code == READER_CODE)).one().group_name == GROUP
    return tokens


@pytest.fixture(scope="module", params=["sqlite"])
def hostile(
    request: pytest.FixtureRequest, sqlite_template: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Hostile]:
    with served_on_database(request, sqlite_template, tmp_path_factory, "injection") as server:
        yield Hostile(server, _plant(server))


@pytest.fixture
def tab(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    page = context.new_page()
    page.set_default_timeout(30_000)
    yield page
    context.close()


def injections(page: Page) -> list[str]:
    """The probe's findings in every frame of the page (charts and components included)."""
    page.wait_for_timeout(300)  # let an injected image's onerror fire, if there were one
    found: list[str] = []
    for frame in page.frames:
        found += [f"{frame.url}: {f}" for f in frame.evaluate(INJECTION_PROBE)]
    return found


def _text(page: Page, selector: str) -> str:
    """What a locator shows, without the word joiners safe_text puts into link-like text."""
    return page.locator(selector).first.inner_text().replace("\u2060", "")


def _open(page: Page, url: str) -> None:
    page.goto(url)
    page.locator("[data-testid='stMain']").wait_for()
    settled(page)
    page.wait_for_timeout(1_000)  # charts and components render after the script run
    settled(page)


def test_the_probe_trips_on_an_injection(hostile: Hostile, tab: Page) -> None:
    """Negative control: the payloads put into a real page as markup (as an unsafe
    ``unsafe_allow_html`` would), in the document and in a shadow root, are found."""
    _open(tab, sign_in_link(hostile.server.app.url, hostile.tokens["analyst"]))
    assert injections(tab) == []
    tab.evaluate(
        """(html) => {
            const div = document.createElement('div');
            div.innerHTML = html;
            document.querySelector('[data-testid="stMain"]').appendChild(div);
            const host = document.createElement('div');
            host.attachShadow({mode: 'open'}).innerHTML = '<a href="javascript:void 0">s</a>';
            document.body.appendChild(host);
        }""",
        f"{PWNED_IMG} {PWNED_LINK} {PWNED_SCRIPT}",
    )
    tab.wait_for_function("() => window.__pwned !== undefined")  # the image's onerror ran
    found = injections(tab)
    assert "window.__pwned is set" in [f.split(": ", 1)[1] for f in found]  # onerror ran
    assert any('<img src="x">' in f or "onerror" in f for f in found), found
    assert any("javascript:window.__pwned" in f for f in found), found
    assert any("<script> holding" in f for f in found), found
    assert any("javascript:void 0" in f for f in found), found  # inside the shadow root


def test_the_reader_sees_title_history_and_own_code_inert(hostile: Hostile, tab: Page) -> None:
    tab.goto(sign_in_link(hostile.server.app.url, hostile.tokens["reader"]))
    expect(submit_button(tab)).to_be_visible()
    settled(tab)
    assert injections(tab) == []
    # the payload is shown as text: the title, and the history inside the case panel
    assert PWNED_IMG in _text(tab, "[data-testid='stMain']")
    panel = tab.locator("[data-case]").first
    expect(panel).to_contain_text("HYPERLINK")  # the history, once the panel has drawn it
    shown = _text(tab, "[data-testid='stMain']") + _text(tab, "[data-case]")
    assert "=HYPERLINK(" in shown and "window.__pwned=1</script>" in shown  # the history


def test_the_adjudicator_sees_answers_reports_and_reasons_inert(
    hostile: Hostile, tab: Page
) -> None:
    _open(tab, sign_in_link(hostile.server.app.url, hostile.tokens["adjudicator"]))
    expect(tab.locator(".st-key-adj_candidate")).to_be_visible()
    settled(tab)
    assert injections(tab) == [], "diagnosis queue"
    shown = _text(tab, ".st-key-adj_candidate")
    assert "onerror=window.__pwned=1" in shown  # a candidate's payload, as text
    tab.get_by_text("Reports", exact=True).click()
    settled(tab)
    expect(tab.get_by_text("Findings").first).to_be_visible()
    settled(tab)
    assert injections(tab) == [], "report queue"
    assert "HYPERLINK" in _text(tab, "[data-testid='stMain']")


@pytest.mark.parametrize("role", ["coordinator", "analyst"])
def test_every_staff_page_shows_the_payloads_inert(hostile: Hostile, tab: Page, role: str) -> None:
    token = hostile.tokens[role]
    specs = ROLE_PAGES.get(role, ())
    assert specs
    _open(tab, f"{hostile.server.app.url}/?token={token}")
    if role == "analyst":  # one answer waits for the adjudicator: score the graded cases
        tab.get_by_text("Score fully graded cases only").click()
        settled(tab)
    for i, spec in enumerate(specs):
        path = "" if i == 0 else spec.url_path
        if i:  # by the sidebar's link: one session, so the toggle above holds
            tab.locator(f"[data-testid='stSidebarNavLink'][href$='/{path}']").click()
            tab.wait_for_url(f"**/{path}*")
            tab.locator("[data-testid='stMain']").wait_for()
            settled(tab)
            tab.wait_for_timeout(1_000)  # charts and components render after the script run
            settled(tab)
        assert tab.get_by_text("Page not found").count() == 0, f"/{path} is not a page"
        assert tab.locator("[data-testid='stException']").count() == 0, f"/{path}: exception"
        assert injections(tab) == [], f"{role} /{path}"
        if spec.file == "analyst.py":  # the Reports tab is drawn only when open
            tab.get_by_role("tab", name="Reports").click()
            expect(tab.get_by_role("heading", name="Grader agreement")).to_be_visible()
            settled(tab)
            assert injections(tab) == [], "leaderboard, Reports tab"
            tab.get_by_role("tab", name="Diagnosis").click()
            settled(tab)
        # the Charts and Per-case matrix pages draw one tab at a time: every one opened
        labels = tab.get_by_role("tab").all_inner_texts() if spec.file != "analyst.py" else []
        for label in labels[1:]:
            opened = tab.get_by_role("tab", name=label, exact=True)
            opened.click()
            expect(opened).to_have_attribute("aria-selected", "true")
            settled(tab)
            tab.wait_for_timeout(1_000)  # charts and components render after the script run
            settled(tab)
            assert tab.locator("[data-testid='stException']").count() == 0, (path, label)
            assert injections(tab) == [], f"{role} /{path}, {label} tab"
        if labels:
            tab.get_by_role("tab", name=labels[0], exact=True).click()
            settled(tab)
        if spec.file == "analyst_cases.py":
            # a case opened: its key, synonyms (a markdown caption), history, answers
            tab.locator(".st-key-pc_open input").click()
            tab.keyboard.type("case-000")
            tab.keyboard.press("Enter")
            expect(tab.locator(".st-key-pc_case")).to_be_visible()
            settled(tab)
            assert injections(tab) == [], "per-case matrix, case opened"
            opened = _text(tab, ".st-key-pc_case")
            assert "javascript:window.__pwned=1" in opened  # the synonyms, as text
            assert "window.__pwned=1</script>" in opened  # the key and the history
        if spec.file == "report.py":
            with tab.expect_download(timeout=120_000) as info:
                tab.get_by_role("button", name="Build and download the report (HTML)").click()
            html = Path(info.value.path()).read_text(encoding="utf-8")
            assert "__pwned" in html  # the payloads are in it, escaped
            tab.set_content(html)
            assert injections(tab) == [], "static HTML report"
