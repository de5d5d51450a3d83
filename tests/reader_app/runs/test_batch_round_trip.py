"""The batch interface, offline (issue 41): ``run-model --batch-out``, a local script
playing the provider (tests/support/batch_provider.py, in a process of its own),
``import-run --format openai-batch``, then ``score``.

Three cases. The provider answers case 0 with the key (graded correct), case 1
with "I don't know", and fails case 2 (an error line: a technical failure). A
second batch of the failed case fills it in; importing a file twice adds
nothing; a file with a custom_id we never wrote is refused, nothing stored.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from sqlmodel import Session, select

from reader_app.cli import main
from reader_app.core.settings import Settings
from reader_app.grading.memory import record_verdict
from reader_app.grading.normalize import normalize_answer
from reader_app.models import Case, CaseImage, ModelRun, Response
from tests.factories import make_study
from tests.support.batch_provider import first_image_sha
from tests.support.openai_stub import OpenAIStub, Reply, openai_stub

__all__ = ["openai_stub"]

ROOT = Path(__file__).resolve().parents[3]


def provider(batch_in: Path, batch_out: Path, answers: dict[str, str], tmp: Path) -> None:
    answers_file = tmp / "answers.json"
    answers_file.write_text(json.dumps(answers))
    subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.support.batch_provider",
            str(batch_in),
            str(batch_out),
            str(answers_file),
        ],
        cwd=ROOT,
        check=True,
        timeout=60,
    )


def first_images(session: Session) -> dict[str, str]:
    """case source id -> sha256 of its first image."""
    out: dict[str, str] = {}
    for source, sha in session.exec(
        select(Case.source_id, CaseImage.sha256)
        .join(CaseImage, CaseImage.case_id == Case.id)  # type: ignore[arg-type]
        .order_by(CaseImage.id)  # type: ignore[arg-type]
    ).all():
        out.setdefault(source, sha)
    return out


def test_batch_out_provider_import_score(
    session: Session,
    settings: Settings,
    openai_stub: OpenAIStub,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    make_study(session, settings.asset_dir, n_cases=3)
    shas = first_images(session)
    base = ["run-model", "study", "--endpoint", "https://api.example.org/v1", "--model", "vlm"]
    batch_in = tmp_path / "batch-in.jsonl"
    assert main([*base, "--batch-out", str(batch_in), "--quiet"]) == 0
    assert "3 requests written" in capsys.readouterr().out
    lines = [json.loads(x) for x in batch_in.read_text().splitlines()]
    assert len(lines) == 3 and {x["url"] for x in lines} == {"/v1/chat/completions"}

    # the same request a live run sends, byte for byte: a live run of the same
    # settings against the stub, request body by request body (answering IDK, so the
    # live run needs no grading before `score`)
    openai_stub.responder = lambda _request: Reply.idk()
    assert main(["run-model", "study", "--endpoint", openai_stub.base_url, "--model", "vlm",
                 "--name", "live", "--quiet", "--no-autograde"]) == 0  # fmt: skip
    capsys.readouterr()
    live = {hashlib.sha256(r.images[0]).hexdigest(): r.body for r in openai_stub.requests}
    by_sha = {first_image_sha(line["body"]): line["body"] for line in lines}
    assert set(by_sha) == set(shas.values())
    assert by_sha == live  # same prompt, history, images and sampling fields

    answers = {
        shas["case-000"]: json.dumps({"diagnosis": "Diagnosis number 0", "likert_score": 4}),
        shas["case-001"]: "I don't know",
    }
    batch_out = tmp_path / "batch-out.jsonl"
    provider(batch_in, batch_out, answers, tmp_path)
    assert main(["import-run", str(batch_out), "--format", "openai-batch"]) == 0
    out = capsys.readouterr().out
    assert "2 added, 1 failed (error lines), 0 already present" in out
    # idempotent: the same file again stores nothing
    assert main(["import-run", str(batch_out), "--format", "openai-batch"]) == 0
    assert "0 added, 0 failed (error lines), 3 already present" in capsys.readouterr().out
    with Session(session.get_bind()) as fresh:
        run = fresh.exec(select(ModelRun).where(ModelRun.name == "vlm")).one()
        rows = fresh.exec(select(Response).where(Response.model_run_id == run.id)).all()
        by_status = sorted(r.status for r in rows)
        assert by_status == ["answered", "failure", "idk"]
        answered = next(r for r in rows if r.status == "answered")
        meta = json.loads(answered.meta_json)
        assert meta["batch"] is True and meta["cost"] == 0.001 and "latency_s" not in meta
        assert answered.image_sha256 == shas["case-000"]

    # resumable: a second batch holds only the failed case, then fills it in
    again = tmp_path / "batch-in-2.jsonl"
    assert main([*base, "--batch-out", str(again), "--retry-failures", "--quiet"]) == 0
    assert "1 requests written" in capsys.readouterr().out
    answers[shas["case-002"]] = json.dumps({"diagnosis": "Something else", "likert_score": 1})
    with Session(session.get_bind()) as fresh:  # grade memory: "Something else" is wrong here
        case = fresh.exec(select(Case).where(Case.source_id == "case-002")).one()
        assert case.id is not None
        record_verdict(
            session=fresh,
            study_id=case.study_id,
            case_id=case.id,
            normalized_answer=normalize_answer("Something else"),
            correct=0,
            source="adjudicator",
            decided_by="test",
        )
        fresh.commit()
    out2 = tmp_path / "batch-out-2.jsonl"
    provider(again, out2, answers, tmp_path)
    assert main(["import-run", str(out2), "--format", "openai-batch"]) == 0
    assert "1 added, 0 failed" in capsys.readouterr().out

    # score the run over N = 3: case 0 correct at L4 (+5), case 1 IDK (0), case 2 wrong
    # at L1 (-2): RadLE-C = 1000 (1 + 3 / 15) = 1200, RadLE-A = 1/3
    exported = tmp_path / "responses.csv"
    assert main(["export", "study", "--what", "responses", "-o", str(exported)]) == 0
    assert main(["score", str(exported), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    vlm = next(r for r in report["responders"] if r["responder"] == "vlm")
    assert vlm["radle_c"] == pytest.approx(1200.0)
    assert vlm["radle_a"] == pytest.approx(1 / 3)


def test_a_custom_id_we_never_wrote_refuses_the_file(
    session: Session, settings: Settings, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    make_study(session, settings.asset_dir, n_cases=2)
    base = ["run-model", "study", "--endpoint", "https://api.example.org/v1", "--model", "vlm"]
    batch_in = tmp_path / "in.jsonl"
    assert main([*base, "--batch-out", str(batch_in), "--quiet"]) == 0
    capsys.readouterr()
    shas = first_images(session)
    out = tmp_path / "out.jsonl"
    provider(batch_in, out, {s: "I don't know" for s in shas.values()}, tmp_path)
    good = out.read_text().splitlines()
    forged = json.loads(good[1])
    forged["custom_id"] = "rs-999-1"
    out.write_text("\n".join([good[0], json.dumps(forged), good[1]]) + "\n")
    assert main(["import-run", str(out), "--format", "openai-batch"]) == 2
    err = capsys.readouterr().err
    assert "nothing stored" in err and "no run 999" in err
    with Session(session.get_bind()) as fresh:
        assert fresh.exec(select(Response)).all() == []
    out.write_text("\n".join([good[0], good[0]]) + "\n")
    assert main(["import-run", str(out), "--format", "openai-batch"]) == 2
    assert "appears twice" in capsys.readouterr().err


def test_repeats_write_one_batch_file_each(
    session: Session, settings: Settings, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    make_study(session, settings.asset_dir, n_cases=2)
    base = ["run-model", "study", "--endpoint", "https://api.example.org/v1", "--model", "vlm"]
    out = tmp_path / "batch.jsonl"
    assert main([*base, "--repeats", "2", "--batch-out", str(out), "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "run vlm #1: 2 requests written" in printed and "run vlm #2: 2 requests" in printed
    assert not out.exists()
    ids = {
        n: {json.loads(x)["custom_id"] for x in (tmp_path / f"batch-r{n}.jsonl").open()}
        for n in (1, 2)
    }
    with Session(session.get_bind()) as fresh:
        runs = {r.repeat_index: r for r in fresh.exec(select(ModelRun)).all()}
    assert {runs[1].run_group, runs[2].run_group} == {"vlm"}
    # each file's custom_ids name its own repeat's run
    for n in (1, 2):
        assert {i.split("-")[1] for i in ids[n]} == {str(runs[n].id)}
