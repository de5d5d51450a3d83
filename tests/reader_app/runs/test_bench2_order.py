"""Bench 2 as the paper ran it: models and readers get a strip apex first, on SQLite and
PostgreSQL.

Three files of one disc phantom (the disc's radius is 2 + k px on display slice k,
k = 0 the most inferior; tests/reader_app/ingest/helpers.py) are imported as
report cases: RAS NIfTI, LPS NIfTI, a DICOM series. Each image a 127.0.0.1 stub
model receives is decoded and its disc measured: both protocols (16 slices in one
request; 4 groups Entry/Upper/Lower/Exit) send slice 19 first and slice 0 last,
and the reader's viewer frames run the same way.
"""

from __future__ import annotations

import json
from pathlib import Path

import streamlit as st
from sqlmodel import Session, col, select

from reader_app.cli import main
from reader_app.core.db import make_engine
from reader_app.core.settings import Settings
from reader_app.exam.next_case import case_view
from reader_app.ingest.demo import ensure_demo_study
from reader_app.ingest.importer import import_manifest
from reader_app.models import Case, ModelRun
from reader_app.study.assets import load_asset
from reader_app.ui.components.viewer_frames import window_frames
from tests.reader_app.ingest.helpers import (
    case,
    disc_height,
    disc_phantom,
    write_manifest,
    write_nifti,
    write_series,
)
from tests.support.openai_stub import ChatRequest, OpenAIStub, Reply, openai_stub

__all__ = ["openai_stub"]

# sample_indices(20) = 0 1 3 4 5 6 8 9 10 11 13 14 15 16 18 19, sent top first
APEX_FIRST = [19, 18, 16, 15, 14, 13, 11, 10, 9, 8, 6, 5, 4, 3, 1, 0]
REPORT = Reply(json.dumps({"findings": "A round density.", "impression": "Disc."}))


def _import(settings: Settings, tmp_path: Path, toml: str = "") -> None:
    folder = tmp_path / "phantoms"
    folder.mkdir()
    vol = disc_phantom()
    write_nifti(folder / "ras.nii.gz", vol, ras=True)
    write_nifti(folder / "lps.nii", vol)
    write_series(folder / "series", vol, shuffle_seed=4)
    (folder / "study.toml").write_text('answer = "report"\n' + toml)
    rows = [
        case(name, files, kind="strip", diagnosis="", windows="mediastinum",
             reference_findings="A disc.", reference_impression="Disc.")
        for name, files in (("ras", "ras.nii.gz"), ("lps", "lps.nii"), ("dcm", "series"))
    ]  # fmt: skip
    import_manifest(write_manifest(folder, rows), settings=settings, slug="study")


def _run(stub: OpenAIStub, *extra: str) -> int:
    return main(["run-model", "study", "--endpoint", stub.base_url, "--model", "vlm",
                 "--quiet", "--no-autograde", "--concurrency", "1", *extra])  # fmt: skip


def _heights(requests: list[ChatRequest]) -> list[int]:
    return [disc_height(png) for r in requests for png in r.images]


def test_both_protocols_send_the_apex_first(
    settings: Settings, tmp_path: Path, openai_stub: OpenAIStub
) -> None:
    _import(settings, tmp_path)
    openai_stub.responder = lambda request: REPORT
    assert _run(openai_stub) == 0
    whole = list(openai_stub.requests)
    assert len(whole) == 3 and all(len(r.images) == 16 for r in whole)
    for request in whole:  # every case: RAS, LPS and the series alike
        assert _heights([request]) == APEX_FIRST
        assert "from the most superior slice (image 1" in request.text
        captions = [line for line in request.text.splitlines() if line.startswith("Image ")]
        assert captions[0].startswith("Image 1: 1/16 · slice ")
        assert captions[0].endswith("z = -102.5 mm · mediastinum window")
        assert captions[15].endswith("z = -150.0 mm · mediastinum window")
        assert "chest" not in request.text.lower()  # the default names no region
    openai_stub.requests.clear()
    assert _run(openai_stub, "--name", "vlm-4x4", "--images-per-request", "4") == 0
    grouped = list(openai_stub.requests)
    assert len(grouped) == 12 and all(len(r.images) == 4 for r in grouped)
    for k in range(3):  # the run asks one case at a time: its four groups in order
        parts = grouped[4 * k : 4 * k + 4]
        labels = ["Entry", "Upper", "Lower", "Exit"]
        for label, part in zip(labels, parts, strict=True):
            assert f"These are the {label} slices" in part.text
            assert "from the most superior slice to the most inferior" in part.text
        assert _heights(parts) == APEX_FIRST  # Entry = the top four slices
    engine = make_engine(settings.database_url, pooled=False)
    with Session(engine) as s:
        runs = {r.name: json.loads(r.params_json) for r in s.exec(select(ModelRun)).all()}
    engine.dispose()
    assert runs["vlm"]["report_prompt"] == "bench2_v2"
    assert runs["vlm-4x4"]["images_per_request"] == 4


def test_the_readers_strip_runs_the_same_way(settings: Settings, tmp_path: Path) -> None:
    # the viewer's frames read images through the UI's cached settings: start from this
    # test's, not those an earlier page test in this worker left behind
    st.cache_resource.clear()
    st.cache_data.clear()
    _import(settings, tmp_path)
    engine = make_engine(settings.database_url, pooled=False)
    with Session(engine) as s:
        cases = s.exec(select(Case).order_by(col(Case.position))).all()
        assert len(cases) == 3
        for c in cases:
            frames = window_frames(case_view(session=s, case=c, slot=0, total=3))
            assert [w["name"] for w in frames] == ["mediastinum"]
            shown = [load_asset(settings.asset_dir, f["sha256"]) for f in frames[0]["images"]]
            assert [disc_height(png) for png in shown] == APEX_FIRST, c.source_id
            assert frames[0]["images"][0]["label"].startswith("1/16 · slice ")
            assert frames[0]["images"][0]["label"].endswith("z = -102.5 mm")
    engine.dispose()


def test_a_study_may_name_its_report_prompt(
    settings: Settings, tmp_path: Path, openai_stub: OpenAIStub
) -> None:
    _import(settings, tmp_path, 'report_prompt = "bench2_chest_v2"\n')
    openai_stub.responder = lambda request: REPORT
    assert _run(openai_stub) == 0
    assert len(openai_stub.requests) == 3
    assert all("reporting a chest CT" in r.text for r in openai_stub.requests)
    assert all("from the lung apex to the base" in r.text for r in openai_stub.requests)
    openai_stub.requests.clear()
    # --report-prompt wins over the study's choice
    assert _run(openai_stub, "--name", "neutral", "--report-prompt", "bench2_v2") == 0
    assert len(openai_stub.requests) == 3
    assert all("reporting a CT study" in r.text for r in openai_stub.requests)


def test_the_demo_head_ct_report_is_never_told_it_is_a_chest_ct(
    settings: Settings, openai_stub: OpenAIStub
) -> None:
    slug = ensure_demo_study(settings)
    openai_stub.responder = lambda request: REPORT
    assert main(["run-model", slug, "--endpoint", openai_stub.base_url, "--model", "vlm",
                 "--quiet", "--no-autograde"]) == 0  # fmt: skip
    reports = [r for r in openai_stub.requests if "structured radiology report" in r.text]
    assert len(reports) == 1  # head-ct-report, the demo's one report case
    text = reports[0].text
    assert "chest" not in text.lower() and "lung" not in text.lower()
    assert "reporting a CT study" in text and "Body region: head." in text
    assert len(reports[0].images) == 32  # 16 slices in each of its two windows


def _range(png: bytes) -> tuple[int, int]:
    import io

    import numpy as np
    from PIL import Image

    pixels = np.asarray(Image.open(io.BytesIO(png)).convert("L"))
    return int(pixels.min()), int(pixels.max())


def test_per_slice_scaling_is_a_study_option_for_models_only(
    settings: Settings, tmp_path: Path, openai_stub: OpenAIStub
) -> None:
    """With model_slices = "per-slice" every slice sent spans 0..255 on its own (Bench 2's
    per-slice normalisation); the reader's stored PNGs are unchanged; the run says so."""
    folder = tmp_path / "p"
    folder.mkdir()
    vol = disc_phantom()
    vol[:, 0, 0] = [-1000 + 100 * k for k in range(20)]  # a corner rising to 900 HU at the top
    write_nifti(folder / "v.nii", vol)
    (folder / "study.toml").write_text('answer = "report"\nmodel_slices = "per-slice"\n')
    row = case("v", "v.nii", kind="strip", diagnosis="",  # no window: auto, the full range
               reference_findings="A disc.", reference_impression="Disc.")  # fmt: skip
    import_manifest(write_manifest(folder, [row]), settings=settings, slug="study")
    engine = make_engine(settings.database_url, pooled=False)
    with Session(engine) as s:
        (c,) = s.exec(select(Case)).all()
        stored = [
            load_asset(settings.asset_dir, i.sha256)
            for i in case_view(session=s, case=c, slot=0, total=1).reader_images
        ]
    # auto: one range for the strip (-1000..900 HU): a slice whose brightest voxel is the
    # 400 HU disc tops out at 1400 / 1900 * 255 = 187.9 -> 188
    assert _range(stored[-1]) == (0, 188) and _range(stored[0]) == (0, 255)
    openai_stub.responder = lambda request: REPORT
    assert _run(openai_stub) == 0
    (request,) = openai_stub.requests
    assert [_range(png) for png in request.images] == [(0, 255)] * 16
    assert _heights([request]) == APEX_FIRST  # still apex first, still the same slices
    assert request.images[0] == stored[0]  # already 0..255: the same pixels, the same bytes
    assert request.images[-1] != stored[-1]
    with Session(engine) as s:
        run = s.exec(select(ModelRun)).one()
        assert json.loads(run.params_json)["slice_scaling"] == "per-slice"
    engine.dispose()
