"""The model is sent byte for byte the PNGs a reader is served, and both record their sha256."""

from __future__ import annotations

import hashlib

import pytest
import streamlit as st
from sqlmodel import Session, col, select

from reader_app.core.settings import Settings
from reader_app.exam.next_case import CaseView, next_case
from reader_app.exam.order import ensure_order
from reader_app.exam.submit import submit_answer, validate_answer
from reader_app.llm import ChatClient
from reader_app.llm.prompts import load_prompt
from reader_app.models import Case, ModelRun, Response, Study, utcnow
from reader_app.runs.record import RunSpec
from reader_app.runs.runner import run_model
from reader_app.study.casebank import RenderedImage, add_case
from reader_app.ui.context import asset_bytes
from tests.factories import make_reader, make_study, png_bytes
from tests.support.openai_stub import OpenAIStub


def reader_shown(view: CaseView) -> list[bytes]:
    """The bytes the exam page hands to st.image for this case (ui.context.asset_bytes)."""
    shown = [img for img in view.images if img.role != "montage"] or list(view.images)
    return [asset_bytes(img.sha256) for img in shown]


def add_strip_with_montage(session: Session, settings: Settings, study: Study) -> None:
    slices = [
        RenderedImage(png_bytes(shade=200 + j), 64, 48, label=f"{j + 1}/3", role="slice")
        for j in range(3)
    ]
    montage = RenderedImage(png_bytes(96, 96, shade=250), 96, 96, label="montage", role="montage")
    add_case(
        session=session,
        asset_dir=settings.asset_dir,
        study=study,
        source_id="strip-montage",
        kind="strip",
        images=[*slices, montage],
        diagnosis="Montage case",
        position=99,
    )
    session.commit()


def test_model_gets_the_bytes_a_reader_is_served(
    session: Session, settings: Settings, openai_stub: OpenAIStub
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=4, strip_every=2)
    add_strip_with_montage(session, settings, study)
    st.cache_resource.clear()
    st.cache_data.clear()  # asset_bytes reads this test's asset folder

    # a reader takes the exam: record what each case showed them
    reader = make_reader(session, study).reader
    ensure_order(session=session, reader=reader)
    served: dict[str, list[bytes]] = {}
    while (view := next_case(session=session, reader=reader)) is not None:
        case = session.exec(select(Case).where(Case.public_id == view.public_id)).one()
        served[case.source_id] = reader_shown(view)
        submit_answer(
            session=session,
            reader=reader,
            case_public_id=view.public_id,
            answer=validate_answer("Something", 2, False),
            shown_at=utcnow(),
            image_sha256=view.image_sha256,
        )
    assert len(served) == 5 and len(served["strip-montage"]) == 3  # slices, not the montage

    with ChatClient(openai_stub.base_url, backoff_s=0.01) as client:
        run_model(
            session=session,
            study=study,
            spec=RunSpec(name="m", model="stub"),
            prompt=load_prompt(),
            client=client,
            asset_dir=settings.asset_dir,
            host="127.0.0.1",
        )
    received = {
        tuple(hashlib.sha256(b).hexdigest() for b in r.images): r for r in openai_stub.requests
    }
    rows = session.exec(
        select(Response, Case.source_id)
        .join(Case, col(Case.id) == Response.case_id)
        .where(col(Response.model_run_id).is_not(None))
    ).all()
    assert len(rows) == 5 == len(received)
    for row, source_id in rows:
        reader_bytes = served[source_id]
        shas = [hashlib.sha256(b).hexdigest() for b in reader_bytes]
        assert row.image_sha256 == ",".join(shas)  # the sha256 stored with the model's answer
        assert received[tuple(shas)].images == reader_bytes  # the very bytes, in order
    run = session.exec(select(ModelRun)).one()
    assert run.endpoint_host == "127.0.0.1"


def test_montage_mode_sends_the_montage(
    session: Session, settings: Settings, openai_stub: OpenAIStub
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=1)
    add_strip_with_montage(session, settings, study)
    with ChatClient(openai_stub.base_url, backoff_s=0.01) as client:
        run_model(
            session=session,
            study=study,
            spec=RunSpec(name="m", model="stub", strip_mode="montage"),
            prompt=load_prompt(),
            client=client,
            asset_dir=settings.asset_dir,
            host="127.0.0.1",
        )
    counts = sorted(len(r.images) for r in openai_stub.requests)
    assert counts == [1, 1]  # the spot image, and the strip's single montage
    montage = next(r for r in openai_stub.requests if "Image 1: montage" in r.text)
    assert montage.images[0] == png_bytes(96, 96, shade=250)


def test_montage_mode_refuses_a_strip_without_montage(
    session: Session, settings: Settings, openai_stub: OpenAIStub
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=2, strip_every=2)
    client = ChatClient(openai_stub.base_url)
    with client, pytest.raises(ValueError, match=r"montage.*case-001"):
        run_model(
            session=session,
            study=study,
            spec=RunSpec(name="m", model="stub", strip_mode="montage"),
            prompt=load_prompt(),
            client=client,
            asset_dir=settings.asset_dir,
            host="127.0.0.1",
        )
    assert openai_stub.served() == 0
    assert session.exec(select(ModelRun)).first() is None


def test_a_strip_in_two_windows_sends_every_window_with_its_name(
    session: Session, settings: Settings, openai_stub: OpenAIStub
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=0)
    images = []
    for w, window in enumerate(("lung", "mediastinum")):
        images += [
            RenderedImage(png_bytes(shade=40 * w + j), 64, 48, f"{j + 1}/2", window, "slice")
            for j in range(2)
        ]
        images.append(RenderedImage(png_bytes(80, 80, 9 + w), 80, 80, "montage", window, "montage"))
    add_case(
        session=session,
        asset_dir=settings.asset_dir,
        study=study,
        source_id="two-windows",
        kind="strip",
        images=images,
        diagnosis="Two windows",
    )
    session.commit()
    for mode, expected in (("slices", 4), ("montage", 2)):
        with ChatClient(openai_stub.base_url, backoff_s=0.01) as client:
            run_model(
                session=session,
                study=study,
                spec=RunSpec(name=mode, model="stub", strip_mode=mode),
                prompt=load_prompt(),
                client=client,
                asset_dir=settings.asset_dir,
                host="127.0.0.1",
            )
        assert len(openai_stub.requests[-1].images) == expected
    slices, montages = openai_stub.requests
    assert "Image 1: 1/2 · lung window" in slices.text
    assert "Image 3: 1/2 · mediastinum window" in slices.text
    assert slices.images[2] == png_bytes(shade=40)
    assert "Image 2: montage · mediastinum window" in montages.text
