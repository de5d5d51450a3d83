"""Leak sweep (issue 39): nothing a reader must not see reaches the reader's browser.

One study holds every secret the app keeps, each carrying a unique planted marker:
an answer key and its synonym, a grounding reference region, a reference report
(findings and impression), a second reader's stored answer, a judge's reasoning
(a diagnosis judge call, a rubric grade's note, a rubric judgement's reasons), a
model run's reply and reasoning_text, and a derived grounding-audit image (its
PNG's sha256 and a run of its bytes). A reader signs in and takes the whole exam
(a grounded diagnosis case, a report case, a plain case) in Chromium while every
websocket frame received, every HTTP response body and every download is kept.

``test_no_planted_secret_reaches_the_reader`` asserts none holds a secret marker.
``test_the_sweep_sees_what_the_reader_is_meant_to_see`` is the negative control,
on the same recording: a marker planted where readers ARE meant to see it (the
case history) and a run of a case image's own bytes are flagged by the same
detector; so a secret sent the same way would be caught.
"""

from __future__ import annotations

import io
import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from playwright.sync_api import Browser, Download, Page, WebSocket, expect
from playwright.sync_api import Response as HttpResponse
from sqlmodel import Session, col, select

from reader_app.core.auth import sign_in_link
from reader_app.grounding_audit.arms import store_dir
from reader_app.models import (
    AnswerKey,
    AuditArm,
    AuditImage,
    Case,
    CaseImage,
    CaseReport,
    JudgeCall,
    ModelRun,
    Response,
    RubricGrade,
    RubricJudgement,
)
from reader_app.study.assets import load_asset, store_asset
from tests.e2e.conftest import Server, served_on_database
from tests.e2e.exam_driver import (
    choose_likert,
    click_to_mark,
    diagnosis_box,
    expect_case,
    fill_answer,
    progress,
    settled,
    submit_button,
    text_box,
    viewer_ready,
    wait_next_screen,
)
from tests.factories import make_reader, make_study

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("leak_sweep_browser")]

TAG = "7f3a"
# what a reader must never receive, by what it is
SECRETS: dict[str, str] = {
    "answer key": f"PLANTED-KEY-{TAG}",
    "synonym": f"PLANTED-SYN-{TAG}",
    "reference findings": f"PLANTED-REFFIND-{TAG}",
    "reference impression": f"PLANTED-REFIMP-{TAG}",
    "other reader's answer": f"PLANTED-OTHER-{TAG}",
    "other reader's report": f"PLANTED-OTHREP-{TAG}",
    "judge reasoning": f"PLANTED-JUDGE-{TAG}",
    "rubric grade note": f"PLANTED-NOTE-{TAG}",
    "rubric judgement reasons": f"PLANTED-RUBREASON-{TAG}",
    "model reply": f"PLANTED-MODEL-{TAG}",
    "model reasoning_text": f"PLANTED-REASONING-{TAG}",
    "model run name": f"PLANTED-RUNNAME-{TAG}",
}
# a box no other number on the page would spell (phantom images are 256 x 256 px)
REGION = "123,77,41,29"
# readers ARE meant to see the history: the negative control's marker
VISIBLE = f"PLANTED-VISIBLE-{TAG}"


@dataclass
class Recording:
    """Everything the reader's browser received, raw."""

    frames: list[bytes] = field(default_factory=list)
    bodies: list[tuple[str, bytes]] = field(default_factory=list)
    unread: list[str] = field(default_factory=list)  # responses whose body could not be read
    downloads: list[tuple[str, bytes]] = field(default_factory=list)

    def attach(self, page: Page) -> None:
        page.on("websocket", self._websocket)
        page.on("response", self._response)
        page.on("download", self._download)

    def _websocket(self, ws: WebSocket) -> None:
        def keep(payload: str | bytes) -> None:
            self.frames.append(payload if isinstance(payload, bytes) else payload.encode())

        ws.on("framereceived", keep)

    def _response(self, resp: HttpResponse) -> None:
        if 300 <= resp.status < 400:  # a redirect has no body to read
            return
        try:
            self.bodies.append((resp.url, resp.body()))
        except Exception as exc:  # noted: a body we could not read is not a body swept
            self.unread.append(f"{resp.url}: {exc}")

    def _download(self, download: Download) -> None:
        path = download.path()
        self.downloads.append((download.url, Path(path).read_bytes() if path else b""))

    def blobs(self) -> list[tuple[str, bytes]]:
        return (
            [(f"ws frame {i}", f) for i, f in enumerate(self.frames)]
            + [(f"HTTP {u}", b) for u, b in self.bodies]
            + [(f"download {u}", b) for u, b in self.downloads]
        )


def find(recording: Recording, needles: dict[str, bytes]) -> dict[str, list[str]]:
    """The detector: for each named needle, where in the recording it occurs (raw bytes;
    text needles also as their JSON- and URL-escaped forms never differ for these ASCII
    markers, so one raw search is enough)."""
    hits: dict[str, list[str]] = {}
    for where, blob in recording.blobs():
        for name, needle in needles.items():
            if needle in blob:
                hits.setdefault(name, []).append(where)
    return hits


@dataclass
class Planted:
    token: str
    image_needles: dict[str, bytes]  # the derived audit PNG: its sha256 (hex) and a byte run
    own_image_run: bytes  # a run of one of the reader's own case images (control)
    n_cases: int


def _png_with_noise(seed: int) -> bytes:
    pixels = np.random.default_rng(seed).integers(0, 256, size=(64, 64), dtype=np.uint8)
    out = io.BytesIO()
    Image.fromarray(pixels, mode="L").save(out, format="PNG")
    return out.getvalue()


def _plant(server: Server) -> Planted:
    asset_dir = server.settings.asset_dir
    with Session(server.engine, expire_on_commit=False) as db:
        study = make_study(
            db,
            asset_dir,
            slug="leak" + uuid.uuid4().hex[:8],
            n_cases=3,
            phantom=True,
            history=f"Adult, cough. {VISIBLE}",
            diagnoses=[f"{SECRETS['answer key']} case {i}" for i in range(3)],
            reference_regions=[REGION, None, None],
            config={"grounding": True},
        )
        sid = study.id
        assert sid is not None
        cases = list(
            db.exec(select(Case).where(Case.study_id == study.id).order_by(col(Case.position)))
        )
        for key in db.exec(
            select(AnswerKey).where(col(AnswerKey.case_id).in_([c.id for c in cases]))
        ):
            key.synonyms = f"{SECRETS['synonym']}|another {SECRETS['synonym']}"
            db.add(key)
        report_case = cases[1]
        assert report_case.id is not None
        db.add(
            CaseReport(
                case_id=report_case.id,
                answer="report",
                reference_findings=SECRETS["reference findings"],
                reference_impression=SECRETS["reference impression"],
            )
        )
        db.commit()

        def shas(case: Case) -> str:
            rows = db.exec(
                select(CaseImage.sha256)
                .where(CaseImage.case_id == case.id)
                .order_by(col(CaseImage.seq))
            )
            return ",".join(rows)

        other = make_reader(db, study, code="R02", ready=True).reader
        adjudicator = make_reader(db, study, code="ADJ1", role="adjudicator")
        run = ModelRun(study_id=sid, name=SECRETS["model run name"], model="m", source="import")
        db.add(run)
        db.flush()
        other_rows = []
        for case in cases:
            assert case.id is not None
            report = case.id == report_case.id
            other_rows.append(
                Response(
                    study_id=sid, case_id=case.id, reader_id=other.id,
                    diagnosis=None if report else SECRETS["other reader's answer"],
                    findings=SECRETS["other reader's report"] if report else None,
                    impression=SECRETS["other reader's report"] if report else None,
                    likert=3, status="answered", image_sha256=shas(case),
                )
            )  # fmt: skip
            db.add(
                Response(
                    study_id=sid, case_id=case.id, model_run_id=run.id,
                    diagnosis=SECRETS["model reply"], raw_reply=SECRETS["model reply"],
                    reasoning_text=SECRETS["model reasoning_text"], status="answered",
                    image_sha256=shas(case),
                )
            )  # fmt: skip
        db.add_all(other_rows)
        db.flush()
        report_row = other_rows[1]
        assert report_row.id is not None and adjudicator.reader.id is not None
        db.add(
            RubricGrade(
                response_id=report_row.id, adjudicator_id=adjudicator.reader.id, score=31,
                note=SECRETS["rubric grade note"],
            )
        )  # fmt: skip
        db.add(
            RubricJudgement(
                response_id=report_row.id, prompt_version="v1", judges="j@127.0.0.1",
                scores_json="[30]", status="agree", score=30, gap=0,
                reasons_json=json.dumps([SECRETS["rubric judgement reasons"]]),
            )
        )  # fmt: skip
        db.add(
            JudgeCall(
                cache_key=uuid.uuid4().hex, endpoint_host="127.0.0.1", model="judge",
                prompt_version="v1", normalized_answer=SECRETS["other reader's answer"].lower(),
                correct=1, reason=SECRETS["judge reasoning"],
                reply=json.dumps({"correct": True, "reason": SECRETS["judge reasoning"]}),
            )
        )  # fmt: skip

        # a derived audit image (occlude_relevant arm) in the audit store
        grounded = cases[0]
        source_sha = shas(grounded).split(",")[0]
        derived = _png_with_noise(int(TAG, 16))
        derived_sha = store_asset(store_dir(asset_dir), derived)
        arm_run = ModelRun(study_id=sid, name="audit-occlude", model="m", source="runner")
        db.add(arm_run)
        db.flush()
        assert arm_run.id is not None and grounded.id is not None
        db.add(
            AuditArm(study_id=sid, name="audit", arm="occlude_relevant", model_run_id=arm_run.id)
        )
        db.add(
            AuditImage(
                study_id=sid, case_id=grounded.id, arm="occlude_relevant", position=0,
                source_sha256=source_sha, sha256=derived_sha, region=REGION, seed=1, fill="mean",
            )
        )  # fmt: skip
        db.commit()
        invite = make_reader(db, study, code="R01", ready=True)
        own = load_asset(asset_dir, source_sha)
    mid = len(derived) // 2
    return Planted(
        token=invite.token,
        image_needles={
            "derived audit image sha256": derived_sha.encode(),
            "derived audit image bytes": derived[mid : mid + 48],
        },
        own_image_run=own[len(own) // 2 : len(own) // 2 + 48],
        n_cases=len(cases),
    )


def _take_exam(page: Page, url: str, n_cases: int) -> None:
    """Answer every case as a reader does: a diagnosis or (the report case) Findings and
    Impression, a confidence, and a marker on the image."""
    page.goto(url)
    expect(submit_button(page)).to_be_visible(timeout=30_000)
    settled(page)
    for number in range(1, n_cases + 1):
        expect_case(page, number, n_cases, timeout=30_000)
        settled(page)
        if diagnosis_box(page).count():
            fill_answer(page, f"my reading {number}", 3)
        else:
            text_box(page, "Findings").click()
            page.keyboard.type("Nodule in the right upper lobe.")
            text_box(page, "Impression").click()
            page.keyboard.type("Probably benign.")
            choose_likert(page, 2)
        # grounding is on: mark the finding at the image's centre (a grounding answer)
        viewer_ready(page)
        box = page.locator(".rv-stage").bounding_box()
        assert box is not None
        click_to_mark(page, box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.wait_for_function("() => window.readerstudyViewer.marker() !== null")
        before = progress(page)
        submit_button(page).click()
        wait_next_screen(page, before)
    expect(page.get_by_text("You have finished this exam")).to_be_visible(timeout=30_000)
    settled(page)
    page.reload()  # a returning reader: the finished screen again, fetched afresh
    expect(page.get_by_text("You have finished this exam")).to_be_visible(timeout=30_000)
    settled(page)
    page.wait_for_timeout(500)  # let late frames arrive


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def swept(
    request: pytest.FixtureRequest,
    sqlite_template: Path,
    tmp_path_factory: pytest.TempPathFactory,
    browser: Browser,
) -> Iterator[tuple[Recording, Planted]]:
    with served_on_database(request, sqlite_template, tmp_path_factory, "leak_sweep") as server:
        planted = _plant(server)
        context = browser.new_context(
            viewport={"width": 1400, "height": 1000}, accept_downloads=True
        )
        try:
            page = context.new_page()
            page.set_default_timeout(20_000)
            recording = Recording()
            recording.attach(page)
            _take_exam(page, sign_in_link(server.app.url, planted.token), planted.n_cases)
        finally:
            context.close()
        yield recording, planted


def test_no_planted_secret_reaches_the_reader(swept: tuple[Recording, Planted]) -> None:
    recording, planted = swept
    assert recording.frames and recording.bodies, "nothing was recorded"
    # only the frontend's own static files (fonts caught by the reload) may go unread
    assert [u for u in recording.unread if "/static/" not in u] == [], recording.unread
    needles = {name: marker.encode() for name, marker in SECRETS.items()}
    needles["reference region"] = REGION.encode()
    needles.update(planted.image_needles)
    assert find(recording, needles) == {}


def test_the_sweep_sees_what_the_reader_is_meant_to_see(swept: tuple[Recording, Planted]) -> None:
    """Negative control: a marker in the case history (shown to readers) and a run of a
    served case image's bytes are found by the same detector, so the recording holds the
    traffic a leak would travel in and the detector trips on it."""
    recording, planted = swept
    hits = find(recording, {"history": VISIBLE.encode(), "own image": planted.own_image_run})
    assert set(hits) == {"history", "own image"}, hits
