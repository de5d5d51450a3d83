"""Bench 2 runs: report cases get the bench2 prompt; --images-per-request 4 sends 16 slices
as Entry/Upper/Lower/Exit and joins the replies; the run record says how it was asked."""

from __future__ import annotations

import json

import pytest
from sqlmodel import Session, select

from reader_app.cli import main
from reader_app.core.settings import Settings
from reader_app.models import Case, CaseReport, ModelRun, Response
from reader_app.runs.image_groups import group_images
from tests.factories import make_study
from tests.support.openai_stub import ChatRequest, OpenAIStub, Reply, openai_stub

__all__ = ["openai_stub"]


def _report_study(session: Session, settings: Settings) -> None:
    study = make_study(session, settings.asset_dir, n_cases=2, strip_every=2, strip_slices=16)
    strip = session.exec(select(Case).where(Case.study_id == study.id, Case.kind == "strip")).one()
    session.add(CaseReport(case_id=strip.id or 0, answer="report", reference_impression="PE"))
    session.commit()


def _args(stub: OpenAIStub, *extra: str) -> list[str]:
    return ["run-model", "study", "--endpoint", stub.base_url, "--model", "vlm", "--quiet",
            "--backoff", "0.01", "--no-autograde", *extra]  # fmt: skip


def _reply(request: ChatRequest) -> Reply:
    if "structured radiology report" not in request.text:
        return Reply.answer("Pneumothorax", 3)
    for label in ("Entry", "Upper", "Lower", "Exit"):
        if f"These are the {label} slices" in request.text:
            return Reply(json.dumps({"findings": f"{label} lungs clear", "impression": label}))
    return Reply(json.dumps({"findings": "All slices: emboli", "impression": "Bilateral PE"}))


def test_group_images_labels() -> None:
    groups = group_images(list(range(16)), 4)
    assert [(g.label, g.first, g.items) for g in groups] == [
        ("Entry", 1, (0, 1, 2, 3)),
        ("Upper", 5, (4, 5, 6, 7)),
        ("Lower", 9, (8, 9, 10, 11)),
        ("Exit", 13, (12, 13, 14, 15)),
    ]
    assert [g.label for g in group_images(list(range(10)), 4)] == [
        "Part 1 of 3",
        "Part 2 of 3",
        "Part 3 of 3",
    ]
    with pytest.raises(ValueError):
        group_images([1], 0)


def test_report_cases_all_at_once(
    session: Session, settings: Settings, openai_stub: OpenAIStub
) -> None:
    _report_study(session, settings)
    openai_stub.responder = _reply
    assert main(_args(openai_stub)) == 0
    report_requests = [r for r in openai_stub.requests if "structured" in r.text]
    assert len(report_requests) == 1 and len(report_requests[0].images) == 16
    with Session(session.get_bind()) as fresh:
        rows = {r.findings is not None: r for r in fresh.exec(select(Response)).all()}
        assert (rows[True].findings, rows[True].impression) == (
            "All slices: emboli",
            "Bilateral PE",
        )
        assert rows[False].diagnosis == "Pneumothorax"  # the spot case is a diagnosis case
        params = json.loads(fresh.exec(select(ModelRun)).one().params_json)
    assert params["report_prompt"] == "bench2_v2" and params["images_per_request"] is None


def test_images_per_request_four_groups_joined(
    session: Session, settings: Settings, openai_stub: OpenAIStub
) -> None:
    _report_study(session, settings)
    openai_stub.responder = _reply
    assert main(_args(openai_stub, "--images-per-request", "4")) == 0
    groups = [r for r in openai_stub.requests if "structured" in r.text]
    assert len(groups) == 4 and all(len(r.images) == 4 for r in groups)
    seen = [i for r in groups for i in r.image_sha256]
    with Session(session.get_bind()) as fresh:
        row = fresh.exec(select(Response).where(Response.findings.is_not(None))).one()  # type: ignore[union-attr]
        assert sorted(seen) == sorted(row.image_sha256.split(","))  # every slice, once
        assert row.findings == (
            "Entry: Entry lungs clear\n\nUpper: Upper lungs clear\n\n"
            "Lower: Lower lungs clear\n\nExit: Exit lungs clear"
        )
        assert row.impression == "Entry: Entry\n\nUpper: Upper\n\nLower: Lower\n\nExit: Exit"
        assert [g["label"] for g in json.loads(row.meta_json)["groups"]] == [
            "Entry", "Upper", "Lower", "Exit"]  # fmt: skip
        run = fresh.exec(select(ModelRun)).one()
        assert json.loads(run.params_json)["images_per_request"] == 4
    # resuming under the same name with another grouping is refused
    assert main(_args(openai_stub)) == 2


def test_unparseable_part_fails_the_case(
    session: Session, settings: Settings, openai_stub: OpenAIStub
) -> None:
    _report_study(session, settings)

    def reply(request: ChatRequest) -> Reply:
        if "These are the Lower slices" in request.text:
            return Reply("The lower lobes show something.")
        return _reply(request)

    openai_stub.responder = reply
    assert main(_args(openai_stub, "--images-per-request", "4")) == 0
    with Session(session.get_bind()) as fresh:
        rows = fresh.exec(select(Response).where(Response.status == "failure")).all()
        assert len(rows) == 1 and rows[0].findings is None
        assert "Lower" in json.loads(rows[0].meta_json)["parse_error"]
