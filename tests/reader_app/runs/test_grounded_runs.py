"""Grounding audits, the model side (issue 19), against a real chat-completions server.

A model's location, normalized to the images it was sent, lands in stored-image
pixels (pixel-edge convention: x = u * width, y = v * height); on a strip the
image number becomes the slice number within its window. A text-only run sends
the same text with no image and is marked wherever its name is shown.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from sqlmodel import Session, col, select

from reader_app.analysis.leaderboard import build_leaderboard
from reader_app.analysis.leaderboard_view import leaderboard_html
from reader_app.cli import main
from reader_app.core.settings import Settings
from reader_app.grounding.store import parse_location_json
from reader_app.llm import ChatClient
from reader_app.llm.prompts import load_prompt
from reader_app.models import Case, CaseImage, ModelRun, Response, Study
from reader_app.results import tidy_responses
from reader_app.runs.autograde_hook import autograde_after_run
from reader_app.runs.importers import import_run_file
from reader_app.runs.prompt import GROUNDED_PROMPT
from reader_app.runs.record import RunConflict, RunSpec, text_only_name
from reader_app.runs.runner import RunSummary, run_model
from scoring import ScoringParams
from scoring.regions import Location
from tests.factories import make_study
from tests.support.openai_stub import ChatRequest, OpenAIStub, Reply

# factory images are 64 x 48 (width x height); non-square, so a swapped x/y shows
WIDTH, HEIGHT = 64, 48


def grounded(dx: str, location: Any, likert: int = 3) -> Reply:
    return Reply(json.dumps({"diagnosis": dx, "likert_score": likert, "location": location}))


def case_of_image(session: Session) -> dict[str, str]:
    return dict(
        session.exec(
            select(CaseImage.sha256, Case.source_id).join(Case, col(Case.id) == CaseImage.case_id)
        ).all()
    )


def rows_of(session: Session, run_name: str) -> dict[str, Response]:
    with Session(session.get_bind()) as fresh:
        rows = fresh.exec(
            select(Response, Case.source_id)
            .join(Case, col(Case.id) == Response.case_id)
            .join(ModelRun, col(ModelRun.id) == Response.model_run_id)
            .where(ModelRun.name == run_name)
        ).all()
        return {source_id: r for r, source_id in rows}


def start(
    session: Session, settings: Settings, stub: OpenAIStub, spec: RunSpec, prompt: str
) -> RunSummary:
    with ChatClient(stub.base_url, read_timeout_s=5.0, backoff_s=0.01) as client:
        return run_model(
            session=session,
            study=session.exec(select(Study)).one(),
            spec=spec,
            prompt=load_prompt(prompt),
            client=client,
            asset_dir=settings.asset_dir,
            host="127.0.0.1",
            concurrency=2,
        )


def test_normalized_locations_map_to_stored_pixels_on_a_spot_and_a_strip_slice(
    session: Session,
    settings: Settings,
    openai_stub: OpenAIStub,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The CLI on a grounding study picks the grounded prompt by itself."""
    make_study(
        session,
        settings.asset_dir,
        n_cases=4,
        strip_every=2,  # case-001 and case-003 are strips
        windows=("lung", "mediastinum"),  # a strip sends lung 1-4, then mediastinum 1-4
        config={"grounding": True},
    )
    image_case = case_of_image(session)
    replies = {
        # spot (two windows, one size): no slice -> image 1; 0.3 * 64 = 19.2, 0.9 * 48 = 43.2
        "case-000": grounded("Pneumothorax", {"slice": None, "x": 0.3, "y": 0.9}),
        # strip image 7 = mediastinum 3/4 -> slice 3; u = 1 is the right edge: 1 * 64 = 64,
        # 0.125 * 48 = 6
        "case-001": grounded("Lung abscess", {"slice": 7, "x": 1.0, "y": 0.125}),
        "case-002": grounded("Sarcoidosis", None),  # no focal finding
        # pixels instead of fractions: never rescaled, no location, the reason kept
        "case-003": grounded("Empyema", {"slice": 2, "x": 40, "y": 30}),
    }
    openai_stub.responder = lambda r: replies[image_case[r.image_sha256[0]]]
    code = main(
        [
            "run-model",
            "study",
            "--endpoint",
            openai_stub.base_url,
            "--model",
            "stub-vlm",
            "--backoff",
            "0.01",
            "--quiet",
            "--no-autograde",
        ]
    )
    assert code == 0, capsys.readouterr().err

    strip_request = next(r for r in openai_stub.requests if len(r.images) == 8)
    assert "Image 7: 3/4 · mediastinum window" in strip_request.text  # what the model was told
    assert all('"location"' in r.text for r in openai_stub.requests)  # the grounded prompt
    rows = rows_of(session, "stub-vlm")
    got = {case: parse_location_json(r.location_json) for case, r in rows.items()}
    assert got == {
        "case-000": (Location(x=19.2, y=43.2, slice=None), False),
        "case-001": (Location(x=64.0, y=6.0, slice=3), False),
        "case-002": (None, True),
        "case-003": (None, False),
    }
    assert json.loads(rows["case-001"].location_json or "") == {"x": 64.0, "y": 6.0, "slice": 3}
    meta = {case: json.loads(r.meta_json) for case, r in rows.items()}
    assert meta["case-001"]["location_normalized"] == {"slice": 7, "x": 1.0, "y": 0.125}
    assert meta["case-003"]["location_error"] == "location x = 40 is outside [0, 1]"
    assert "location_error" not in meta["case-000"]
    assert {r.status for r in rows.values()} == {"answered"}  # the diagnosis is read as before
    with Session(session.get_bind()) as fresh:
        run = fresh.exec(select(ModelRun)).one()
    assert (run.prompt_version, run.no_images) == (GROUNDED_PROMPT, False)


def test_clamped_and_slice_less_strip_locations(
    session: Session, settings: Settings, openai_stub: OpenAIStub
) -> None:
    make_study(session, settings.asset_dir, n_cases=2, strip_every=2)  # case-001: 4 slices
    image_case = case_of_image(session)
    replies = {
        # 1.004 is within the overshoot: clamped to the bottom edge, 1 * 48 = 48
        "case-000": grounded("Pneumothorax", {"x": 0.5, "y": 1.004}),
        "case-001": grounded("Lung abscess", {"x": 0.5, "y": 0.5}),  # which slice? none stored
    }
    openai_stub.responder = lambda r: replies[image_case[r.image_sha256[0]]]
    start(session, settings, openai_stub, RunSpec(name="m", model="stub"), GROUNDED_PROMPT)
    rows = rows_of(session, "m")
    assert json.loads(rows["case-000"].location_json or "") == {"x": 32.0, "y": 48.0, "slice": None}
    assert json.loads(rows["case-000"].meta_json)["location_clamped"] is True
    assert rows["case-001"].location_json is None
    assert json.loads(rows["case-001"].meta_json)["location_error"] == "no slice given for 4 images"


def _without_images(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {**m, "content": [p for p in m["content"] if p.get("type") != "image_url"]}
        for m in messages
    ]


def test_a_text_only_run_sends_the_same_text_and_no_image_bytes(
    session: Session, settings: Settings, openai_stub: OpenAIStub
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=3, strip_every=3)
    assert study.id is not None
    image_case = case_of_image(session)
    keys = {f"case-{i:03d}": f"Diagnosis number {i}" for i in range(3)}

    def answer(request: ChatRequest) -> Reply:
        if not request.images:
            return Reply.idk()  # without pixels this model gives up
        return Reply.answer(keys[image_case[request.image_sha256[0]]], 4)

    openai_stub.responder = answer
    start(session, settings, openai_stub, RunSpec(name="vlm", model="stub"), "radle_v1")
    with_images = list(openai_stub.requests)
    spec = RunSpec(name=text_only_name("vlm"), model="stub", no_images=True)
    summary = start(session, settings, openai_stub, spec, "radle_v1")
    text_only = openai_stub.requests[len(with_images) :]

    assert summary.no_images and summary.asked == 3 and len(text_only) == 3
    assert all(r.images for r in with_images)  # the control: the image run did send images
    for request in text_only:
        raw = json.dumps(request.body)
        assert request.images == [] and "image_url" not in raw
        assert "base64" not in raw and "data:image" not in raw
    # the same text parts, in the same order, and the same request fields
    assert sorted(json.dumps(_without_images(r.body["messages"])) for r in with_images) == sorted(
        json.dumps(r.body["messages"]) for r in text_only
    )
    fields = {"model": "stub", "temperature": 0.0, "seed": 0, "max_tokens": 4096}
    for request in [*with_images, *text_only]:
        assert {k: v for k, v in request.body.items() if k != "messages"} == fields

    with Session(session.get_bind()) as fresh:
        runs = {r.name: r for r in fresh.exec(select(ModelRun)).all()}
    assert runs["vlm"].no_images is False and runs["vlm (text only)"].no_images is True
    assert json.loads(runs["vlm (text only)"].params_json)["no_images"] is True
    assert "no_images" not in json.loads(runs["vlm"].params_json)  # older records still match
    assert {r.image_sha256 for r in rows_of(session, "vlm (text only)").values()} == {""}
    assert all(r.image_sha256 for r in rows_of(session, "vlm").values())

    # the leaderboard shows the text-only run beside the image run, marked by its name
    autograde_after_run(session=session, study_id=study.id, actor="test")
    frame = tidy_responses(session=session, study_id=study.id)
    cases = tuple(sorted(keys))
    board = build_leaderboard(frame, cases, ScoringParams(n_boot=0))
    models = board.table[board.table["arm"] == "model"]
    # vlm: three L4 right answers, 1000 * (1 + 15/15) = 2000; text only: three IDKs = 1000
    assert dict(zip(models["name"], models["radle_c"], strict=True)) == {
        "vlm": pytest.approx(2000.0),
        "vlm (text only)": pytest.approx(1000.0),
    }
    assert 'data-name="vlm (text only)"' in leaderboard_html(board, by="name")


def test_text_only_is_part_of_a_run_s_identity(
    session: Session, settings: Settings, openai_stub: OpenAIStub
) -> None:
    with pytest.raises(ValueError, match="text only"):
        RunSpec(name="vlm", model="stub", no_images=True)
    with pytest.raises(ValueError, match="text only"):
        RunSpec(name="vlm (text only)", model="stub")  # an image run cannot pass for one
    assert text_only_name("vlm (text only)") == "vlm (text only)"
    make_study(session, settings.asset_dir, n_cases=1)
    start(session, settings, openai_stub, RunSpec(name="vlm", model="stub"), "radle_v1")
    with pytest.raises(RunConflict, match="prompt"):
        start(session, settings, openai_stub, RunSpec(name="vlm", model="stub"), GROUNDED_PROMPT)


def test_cli_no_images_names_the_run_and_sends_no_image(
    session: Session,
    settings: Settings,
    openai_stub: OpenAIStub,
    capsys: pytest.CaptureFixture[str],
) -> None:
    make_study(session, settings.asset_dir, n_cases=2, strip_every=2)
    args = ["run-model", "study", "--endpoint", openai_stub.base_url, "--model", "stub-vlm"]
    code = main([*args, "--name", "gpt", "--no-images", "--quiet", "--no-autograde"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out.strip().splitlines()[-1].startswith("run gpt (text only): 2/2 cases")
    assert "text only: no image was sent" in out
    assert openai_stub.served() == 2 and all(r.images == [] for r in openai_stub.requests)
    with Session(session.get_bind()) as fresh:
        run = fresh.exec(select(ModelRun)).one()
    assert (run.name, run.no_images, run.prompt_version) == ("gpt (text only)", True, "radle_v1")


def test_import_run_reads_locations_from_raw_outputs_and_location_fields(
    session: Session, settings: Settings
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=3, strip_every=2)  # case-001: strip
    slices = session.exec(
        select(CaseImage.sha256)
        .join(Case, col(Case.id) == CaseImage.case_id)
        .where(Case.source_id == "case-001")
        .order_by(col(CaseImage.seq))
    ).all()
    shown = ",".join(reversed(slices))  # the file says it sent the slices last to first
    records = [
        {
            "case_id": "case-000",
            "model": "ext",
            "output": json.dumps(
                {"diagnosis": "A", "likert": 3, "location": {"x": 0.75, "y": 0.25}}
            ),
        },
        {  # image 1 as sent is stored slice 4; 0.5 * 64 = 32, 0.5 * 48 = 24
            "case_id": "case-001",
            "model": "ext",
            "image_sha256": shown,
            "output": "```json\n"
            + json.dumps(
                {"diagnosis": "B", "likert": 2, "location": {"slice": 1, "x": 0.5, "y": 0.5}}
            )
            + "\n```",
        },
        {  # a structured row: its own location field, normalized the same way
            "case_id": "case-002",
            "model": "ext",
            "diagnosis": "C",
            "likert": 1,
            "location": {"x": 0.0, "y": 1.0},
        },
    ]
    data = "\n".join(json.dumps(r) for r in records).encode()
    import_run_file(session=session, study=study, source=data, filename="ext.jsonl")
    rows = rows_of(session, "ext")
    assert {case: json.loads(r.location_json or "null") for case, r in rows.items()} == {
        "case-000": {"x": 48.0, "y": 12.0, "slice": None},  # 0.75 * 64, 0.25 * 48
        "case-001": {"x": 32.0, "y": 24.0, "slice": 4},
        "case-002": {"x": 0.0, "y": 48.0, "slice": None},
    }
