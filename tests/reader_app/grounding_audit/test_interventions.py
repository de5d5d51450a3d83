"""What each arm sends: occlusion hides the region and only it, the irrelevant region
lies off it and inside the image, swap sends a same-label case's bytes, text only none,
and no derived image ever reaches a reader."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from sqlmodel import Session, select

from reader_app.analysis.exports import export_bytes
from reader_app.cli import main
from reader_app.core.settings import Settings
from reader_app.exam.next_case import case_view
from reader_app.grounding.hits import case_references
from reader_app.grounding_audit.arms import store_dir
from reader_app.grounding_audit.images import (
    NoRoomError,
    decode,
    fill_value,
    irrelevant_area,
    region_plane,
)
from reader_app.models import AnswerKey, AuditImage, Case, CaseImage, Study
from reader_app.study.assets import load_asset
from tests.factories import make_reader
from tests.reader_app.grounding_audit.audit_study import make_audit_study, seeing
from tests.reader_app.grounding_audit.test_audit_grounding_cli import audit_args
from tests.support.openai_stub import OpenAIStub, openai_stub

__all__ = ["openai_stub"]


@pytest.fixture
def audited(
    session: Session,
    settings: Settings,
    openai_stub: OpenAIStub,
    capsys: pytest.CaptureFixture[str],
) -> OpenAIStub:
    make_audit_study(session, settings.asset_dir)
    openai_stub.responder = seeing
    assert main(audit_args(openai_stub, "seer")) == 0
    capsys.readouterr()
    return openai_stub


def _images(session: Session, arm: str) -> list[AuditImage]:
    with Session(session.get_bind()) as fresh:
        return list(fresh.exec(select(AuditImage).where(AuditImage.arm == arm)))


@pytest.mark.parametrize("arm", ["occlude_relevant", "occlude_irrelevant"])
def test_occlusion_sets_the_area_to_the_fill_and_changes_nothing_else(
    session: Session, settings: Settings, audited: OpenAIStub, arm: str
) -> None:
    refs = case_references(session=session, study_id=1)
    kinds = {c.id: c.kind for c in session.exec(select(Case))}
    sources = {c.id: c.source_id for c in session.exec(select(Case))}
    rows = _images(session, arm)
    assert len(rows) == 6  # c1, c2, c3 one image each, c4 three slices
    changed = 0
    for row in rows:
        before = decode(load_asset(settings.asset_dir, row.source_sha256))
        after = decode(load_asset(store_dir(settings.asset_dir), row.sha256))
        slice_no = row.position + 1 if kinds[row.case_id] == "strip" else None
        region = region_plane(refs[row.case_id], slice_no, before.shape, 0.0)
        if not region.any():  # c4's slices 1 and 3: sent as stored
            assert row.sha256 == row.source_sha256 and row.region is None
            continue
        changed += 1
        area = (
            region
            if arm == "occlude_relevant"
            else irrelevant_area(region, 0, slice_no, sources[row.case_id])  # drawn per case
        )
        assert area.sum() == region.sum()
        fill = int(fill_value(before, region, "median")[0])
        assert fill == int(np.median(before[~region]))
        assert (after[area] == fill).all()
        assert (after[~area] == before[~area]).all()
        assert not (area & region).any() if arm == "occlude_irrelevant" else True
        assert (
            row.fill == "median"
            and row.region
            and row.region.startswith(f"{np.nonzero(area)[1].min()},{np.nonzero(area)[0].min()},")
        )
        # the lesion is gone, or still all there
        lesion = before >= 200
        assert (after[lesion] >= 200).sum() == (0 if arm == "occlude_relevant" else lesion.sum())
    assert changed == 4
    # and the model was sent exactly these bytes
    sent = {sha for r in audited.requests for sha in r.image_sha256}
    assert {r.sha256 for r in rows} <= sent


def test_swap_sends_another_same_label_case_s_stored_bytes(
    session: Session, audited: OpenAIStub
) -> None:
    keys = {k.case_id: k.diagnosis for k in session.exec(select(AnswerKey))}
    own: dict[int, set[str]] = {}
    for image in session.exec(select(CaseImage)):
        own.setdefault(image.case_id, set()).add(image.sha256)
    rows = _images(session, "swap")
    assert {r.case_id for r in rows} == {1, 2, 3, 4}
    for row in rows:
        assert row.partner_case_id is not None and row.partner_case_id != row.case_id
        assert keys[row.partner_case_id] == keys[row.case_id]
        assert row.sha256 in own[row.partner_case_id] and row.sha256 not in own[row.case_id]
        assert row.seed == 0
    histories = {c.id: c.history for c in session.exec(select(Case))}
    for case_id in {r.case_id for r in rows}:
        sent = [r.sha256 for r in sorted(rows, key=lambda r: r.position) if r.case_id == case_id]
        on_wire = [
            q
            for q in audited.requests
            if str(histories[case_id]) in q.text and q.image_sha256 == sent
        ]
        assert len(on_wire) == 1  # the case's own text, the partner's bytes, asked once


def test_text_only_sends_no_image_bytes_on_the_wire(session: Session, audited: OpenAIStub) -> None:
    bodies = [json.dumps(r.body) for r in audited.requests]
    text_only = [b for b, r in zip(bodies, audited.requests, strict=True) if not r.images]
    assert len(text_only) == 4
    assert all("image_url" not in b and "base64" not in b for b in text_only)
    # the same text, byte for byte, as the original arm's request of the same case
    texts = {r.text for r in audited.requests if not r.images}
    assert len(texts) == 4 and texts <= {r.text for r in audited.requests if r.images}


def test_a_derived_image_never_reaches_a_reader(
    session: Session, settings: Settings, audited: OpenAIStub
) -> None:
    derived = {
        r.sha256
        for arm in ("occlude_relevant", "occlude_irrelevant")
        for r in _images(session, arm)
        if r.sha256 != r.source_sha256
    }
    assert len(derived) == 8
    cases = session.exec(select(Case)).all()
    for case in cases:  # what the exam serves: its image URLs are made from these sha256s
        view = case_view(session=session, case=case, slot=0, total=len(cases))
        assert not set(view.image_sha256) & derived
    assert not {i.sha256 for i in session.exec(select(CaseImage))} & derived
    for sha in derived:  # the readers' store cannot even load them
        with pytest.raises(FileNotFoundError):
            load_asset(settings.asset_dir, sha)
    study = session.get(Study, cases[0].study_id)
    assert study is not None
    make_reader(session, study, "R01", ready=True)
    exported = export_bytes("responses", "csv", session=session, study=study).decode()
    assert "seer [occlude_relevant]" in exported  # the model rows are there...
    assert not any(sha in exported for sha in derived)  # ...the derived bytes' names are not


@hsettings(max_examples=80, deadline=None)
@given(
    rows=st.integers(8, 40),
    cols=st.integers(8, 40),
    box=st.tuples(st.floats(0, 1), st.floats(0, 1), st.floats(0.05, 0.5), st.floats(0.05, 0.5)),
    blob=st.booleans(),
    seed=st.integers(0, 2**31 - 1),
)
def test_the_irrelevant_region_is_inside_the_image_and_off_the_reference(
    rows: int, cols: int, box: tuple[float, float, float, float], blob: bool, seed: int
) -> None:
    fx, fy, fw, fh = box
    w, h = max(1, int(fw * cols)), max(1, int(fh * rows))
    x, y = int(fx * (cols - w)), int(fy * (rows - h))
    region = np.zeros((rows, cols), dtype=np.bool_)
    region[y : y + h, x : x + w] = True
    if blob:  # an irregular mask: a cross cut from the box
        region[y : y + h, x : x + w] = False
        region[y + h // 2, x : x + w] = True
        region[y : y + h, x + w // 2] = True
    try:
        area = irrelevant_area(region, seed)
    except NoRoomError:
        return
    assert area.shape == region.shape  # inside the image: the same pixel grid, no wrap
    assert not (area & region).any()
    assert area.sum() == region.sum()
    ys, xs = np.nonzero(area)
    ry, rx = np.nonzero(region)
    dy, dx = ys.min() - ry.min(), xs.min() - rx.min()
    moved = np.zeros_like(region)
    moved[ry + dy, rx + dx] = True
    assert (moved == area).all()  # the same shape, translated
    assert (irrelevant_area(region, seed) == area).all()  # the seed decides


def test_no_room_is_refused() -> None:
    region = np.ones((10, 10), dtype=np.bool_)
    region[0, 0] = False
    with pytest.raises(NoRoomError):
        irrelevant_area(region, 0)


def test_the_irrelevant_region_is_drawn_per_case() -> None:
    # The same 8x6 region on same-sized images: the seed and slice alone would put its
    # twin at one place on every case; with the case's id each case draws its own.
    region = np.zeros((48, 64), dtype=np.bool_)
    region[10:16, 10:18] = True
    keys = [f"case-{i:03d}" for i in range(12)]
    places = {tuple(np.argwhere(irrelevant_area(region, 0, None, k))[0]) for k in keys}
    assert len(places) >= 6  # (about 2,000 places: a repeat among 12 is rare, not 6)
    without = {tuple(np.argwhere(irrelevant_area(region, 0))[0]) for _ in keys}
    assert len(without) == 1
    # the same case, seed and slice: the same place (a rerun reuses its images)
    first = irrelevant_area(region, 3, 2, "c1")
    assert (irrelevant_area(region, 3, 2, "c1") == first).all()


def test_a_swap_partner_with_the_same_bytes_is_no_partner(
    session: Session, settings: Settings
) -> None:
    from reader_app.grounding_audit.arms import AuditSettings, plan_arm
    from reader_app.study.casebank import RenderedImage, add_case
    from tests.reader_app.grounding_audit.audit_study import H, W, png

    study = make_audit_study(session, settings.asset_dir)
    # c6 and c7: one diagnosis, byte-identical images; c6 carries a region
    pixels = np.full((H, W), 60, dtype=np.uint8)
    pixels[5:9, 5:9] = 240
    same = png(pixels)
    for i, (source, ref) in enumerate([("c6", "5,5,4,4"), ("c7", None)], start=10):
        add_case(
            session=session,
            asset_dir=settings.asset_dir,
            study=study,
            source_id=source,
            kind="spot",
            images=[RenderedImage(png=same, width=W, height=H)],
            diagnosis="Rib fracture",
            position=i,
            history="Chest wall pain",
            reference_region=ref,
        )
    session.commit()
    plan = plan_arm(
        session=session,
        study=study,
        arm="swap",
        settings=AuditSettings(),
        asset_dir=settings.asset_dir,
    )
    assert "c6" not in {job.source_id for job in plan.jobs}
    assert "same image bytes" in plan.left_out["c6"]
    # the other cases still swap, each to other bytes than its own
    for job in plan.jobs:
        own = {
            i.sha256
            for i in session.exec(select(CaseImage).where(CaseImage.case_id == job.case_id))
        }
        assert not own & {i.sha256 for i in job.images}
