"""``readerstudy audit-grounding`` end to end against stub models on 127.0.0.1."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest
from sqlmodel import Session, select

from reader_app.cli import main
from reader_app.core.settings import Settings
from reader_app.models import AuditArm, AuditImage, ModelRun, Response
from tests.reader_app.grounding_audit.audit_study import (
    history_reader,
    make_audit_study,
    seeing,
)
from tests.support.openai_stub import OpenAIStub, openai_stub

__all__ = ["openai_stub"]


def audit_args(stub: OpenAIStub, model: str, *extra: str) -> list[str]:
    return [
        "audit-grounding",
        "study",
        "--endpoint",
        stub.base_url,
        "--model",
        model,
        "--backoff",
        "0.01",
        "--n-boot",
        "200",
        "--format",
        "json",
        *extra,
    ]


def run_json(args: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    code = main(args)
    out, err = capsys.readouterr()
    assert code == 0, err
    report: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return report


def test_a_seeing_model_uses_the_image_and_a_history_reader_ignores_it(
    session: Session,
    settings: Settings,
    openai_stub: OpenAIStub,
    capsys: pytest.CaptureFixture[str],
) -> None:
    make_audit_study(session, settings.asset_dir)
    openai_stub.responder = seeing
    report = run_json(audit_args(openai_stub, "seer"), capsys)
    assert report["name"] == "seer"
    assert report["cases"] == 4  # c5 has no region
    assert {a: (v["n"], v["correct"]) for a, v in report["arms"].items()} == {
        "original": (4, 4),
        "occlude_relevant": (4, 0),
        "occlude_irrelevant": (4, 4),
        "swap": (4, 4),
        "text_only": (4, 0),
    }
    assert report["keep"]["occlude_relevant"]["value"] == 0.0
    assert report["occlusion_effect"]["value"] == 1.0
    assert report["occlusion_effect"]["ci"] == [1.0, 1.0]
    assert report["stability"]["value"] == 1.0
    assert report["text_gap"]["value"] == 1.0
    assert report["category"] == "uses the image"
    assert report["params"]["fill"] == "median" and report["params"]["seed"] == 0
    assert len(openai_stub.requests) == 20  # 5 arms x 4 cases

    asked_before = len(openai_stub.requests)
    openai_stub.responder = history_reader
    report = run_json(audit_args(openai_stub, "reader-of-notes"), capsys)
    assert {a: v["correct"] for a, v in report["arms"].items()} == dict.fromkeys(report["arms"], 4)
    assert report["occlusion_effect"]["value"] == 0.0
    assert report["stability"]["value"] == 1.0
    assert report["text_gap"]["value"] == 0.0
    assert report["category"] == "ignores the image"
    assert len(openai_stub.requests) == asked_before + 20

    # a second call asks nothing again and prints the same audit
    again = run_json(audit_args(openai_stub, "reader-of-notes"), capsys)
    assert len(openai_stub.requests) == asked_before + 20
    assert again["asked"] == dict.fromkeys(again["arms"], 0)
    assert again["category"] == "ignores the image"

    with Session(session.get_bind()) as fresh:
        runs = {r.name for r in fresh.exec(select(ModelRun))}
        arms = fresh.exec(select(AuditArm)).all()
        rows = fresh.exec(select(Response)).all()
    assert runs == {
        "seer",
        "seer (text only)",
        "seer [occlude_relevant]",
        "seer [occlude_irrelevant]",
        "seer [swap]",
        "reader-of-notes",
        "reader-of-notes (text only)",
        "reader-of-notes [occlude_relevant]",
        "reader-of-notes [occlude_irrelevant]",
        "reader-of-notes [swap]",
    }
    assert len(arms) == 10 and len(rows) == 40
    assert all(r.image_sha256 == "" for r in rows if r.model_run_id in _text_only(arms, fresh))


def _text_only(arms: Sequence[AuditArm], session: Session) -> set[int]:
    return {a.model_run_id for a in arms if a.arm == "text_only"}


def test_the_table_and_a_changed_fill_refused(
    session: Session,
    settings: Settings,
    openai_stub: OpenAIStub,
    capsys: pytest.CaptureFixture[str],
) -> None:
    make_audit_study(session, settings.asset_dir)
    openai_stub.responder = seeing
    args = audit_args(openai_stub, "seer")[:-2]  # the table
    assert main([*args, "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "category: uses the image" in out
    assert "occlusion effect 1.00 [1.00, 1.00]" in out
    with Session(session.get_bind()) as fresh:
        before = len(fresh.exec(select(AuditImage)).all()), len(fresh.exec(select(ModelRun)).all())
    asked = len(openai_stub.requests)
    assert main([*args, "--fill", "black"]) == 2
    err = capsys.readouterr().err
    assert "audit 'seer', arm occlude_relevant" in err and "another --name" in err
    with Session(session.get_bind()) as fresh:  # nothing written, nothing asked
        after = len(fresh.exec(select(AuditImage)).all()), len(fresh.exec(select(ModelRun)).all())
        assert not fresh.exec(select(AuditImage).where(AuditImage.fill == "black")).all()
    assert after == before and len(openai_stub.requests) == asked
    # a changed sampling setting is refused the same way, before any arm is asked
    assert main([*args, "--temperature", "0.7"]) == 2
    assert "different temperature" in capsys.readouterr().err
    assert len(openai_stub.requests) == asked
