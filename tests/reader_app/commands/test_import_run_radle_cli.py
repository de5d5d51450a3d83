"""``readerstudy import-run --format radle`` on a 200-case master in RadLE's real shape
(tests/support/radle_master.py), then the study scored: the same hand-derived figures
as ``score --input-format radle`` (tests/reader_app/commands/test_radle_real_shape_cli.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlmodel import Session, col, select

from reader_app.cli import main
from reader_app.core.settings import Settings
from reader_app.models import ModelRun, Reader, Response, Verdict
from reader_app.responses import ROW_VERDICT
from reader_app.results import tidy_responses
from scoring import ScoringParams, score_responses, validate_frame
from scoring.io import read_radle_csv
from tests.factories import make_study
from tests.reader_app.commands.test_radle_real_shape_cli import (
    BOARD,
    MODELS,
    check,
    pool_expected,
    reader_expected,
)
from tests.support.radle_master import COLUMNS, N_CASES, SENIORITY, master_csv


def radle_study(session: Session, settings: Settings) -> int:
    study = make_study(
        session,
        settings.asset_dir,
        n_cases=N_CASES,
        source_ids=[str(i) for i in range(1, N_CASES + 1)],
        diagnoses=[f"Dx{i}" for i in range(1, N_CASES + 1)],
    )
    assert study.id is not None
    return study.id


def test_import_run_radle_real_shape_scores_as_radle(
    session: Session, settings: Settings, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study_id = radle_study(session, settings)
    path = tmp_path / "master.csv"
    # the master as generated: alpha_1's five correct L3 answers on cases 121-125 have an
    # empty diagnosis, which RadLE scores by its verdict (1): they keep it themselves
    path.write_text(master_csv(), encoding="utf-8")
    assert main(["import-run", str(path), "--exclude", "alpha_0", "--no-autograde"]) == 0
    out = capsys.readouterr().out
    assert "run alpha_1, run beta_med, run gamma_muse" in out
    assert "5 kept on answers without text" in out
    with Session(session.get_bind()) as fresh:
        readers = fresh.exec(select(Reader).order_by(col(Reader.code))).all()
        assert [r.code for r in readers] == [f"R{k:02d}" for k in range(1, 13)]
        for r in readers:
            trainee = SENIORITY[r.code] in ("PGY2", "PGY3")
            assert r.group_name == ("trainees" if trainee else "board-certified")
            profile = json.loads(r.profile_json)["radle"]
            assert profile == {
                "role": "Trainee" if trainee else "Radiologist",
                "seniority": SENIORITY[r.code],
            }
        runs = {r.name: r for r in fresh.exec(select(ModelRun)).all()}
        assert sorted(runs) == sorted(BOARD)
        for name, expected in MODELS.items():
            assert (runs[name].group_name, runs[name].cohort) == (
                expected["group"],
                expected["cohort"],
            )
        frame = tidy_responses(session=fresh, study_id=study_id)
        blank = fresh.exec(select(Response).where(col(Response.diagnosis).is_(None))).all()
        blank_answers = [r for r in blank if r.status == "answered"]
        assert [(r.likert, json.loads(r.meta_json)[ROW_VERDICT]) for r in blank_answers] == [
            (3, 1)
        ] * 5
        # grade memory keys no verdict by an empty answer
        assert all(v.normalized_answer for v in fresh.exec(select(Verdict)).all())
    assert len(frame) == (12 + 3) * N_CASES
    own = frame[(frame["responder"] == "alpha_1") & (frame["diagnosis"] == "")]
    own = own[own["status"] == "answered"]
    assert list(own["case_id"]) == [str(c) for c in range(121, 126)]
    assert list(own["correct"]) == [1] * 5
    report = score_responses(frame, ScoringParams(n_boot=0))
    rows = {r["responder"]: r for r in report["responders"]}
    for k in range(1, 13):
        check(rows[f"R{k:02d}"], reader_expected(k), f"R{k:02d}")
    for name, expected in MODELS.items():
        check(rows[name], {k: v for k, v in expected.items() if k != "cohort"}, name)
    pool = report["human_pool"]
    assert pool["n_readers"] == 12
    check(pool, pool_expected(6.5), "pool")
    groups = {g["group"]: g for g in pool["by_group"]}
    check(groups["trainees"], pool_expected(3.5), "trainees")
    check(groups["board-certified"], pool_expected(9.5), "board-certified")


def _blank_rows_csv() -> str:
    """Two models on cases 1-2, every answer a valid Likert with an empty diagnosis:
    m_yes's verdicts 1, 1 at L3, L4; m_no's 0, 1 at L2, L0. Case 1 is graded both ways
    (m_yes 1, m_no 0): each row keeps its own verdict, no shared one per answer."""
    cells = {("m_yes", 1): ("3", "1"), ("m_yes", 2): ("4", "1")}
    cells |= {("m_no", 1): ("2", "0"), ("m_no", 2): ("0", "1")}
    lines = [",".join(COLUMNS)]
    for (name, case), (likert, verdict) in cells.items():
        row = dict.fromkeys(COLUMNS, "")
        row.update(Master_Case_ID=str(case), candidate=name, provider="P", access="open")
        row.update(domain="general", likert=likert, final_score_authoritative=verdict)
        lines.append(",".join(row[c] for c in COLUMNS))
    return "\n".join(lines) + "\n"


def test_import_run_radle_answers_without_a_diagnosis_score_by_their_verdict(
    session: Session, settings: Settings, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study_id = radle_study(session, settings)
    path = tmp_path / "blank.csv"
    path.write_text(_blank_rows_csv(), encoding="utf-8")
    # autograde on: it leaves answers without text alone (nothing to match or queue)
    assert main(["import-run", str(path)]) == 0
    out = capsys.readouterr().out
    assert "0 verdicts added to grade memory, 4 kept on answers without text" in out
    with Session(session.get_bind()) as fresh:
        assert fresh.exec(select(Verdict)).first() is None
        frame = tidy_responses(session=fresh, study_id=study_id)
    got = {(r.responder, r.case_id): (r.status, r.likert, r.correct) for r in frame.itertuples()}
    assert got == {
        ("m_yes", "1"): ("answered", 3, 1),
        ("m_yes", "2"): ("answered", 4, 1),
        ("m_no", "1"): ("answered", 2, 0),
        ("m_no", "2"): ("answered", 0, 1),
    }
    # the same figures as `score --input-format radle` reads from the file itself:
    # points L + 1 (correct +, wrong -), C = 1000 (1 + sum(s) / (5 * 2 cases)):
    # m_yes: s = 4 + 5 = 9 -> C = 1900; A = 2 / 2 = 1.
    # m_no: s = -3 (wrong L2) + 1 (correct L0) = -2 -> C = 800; A = 1 / 2 = 0.5.
    params = ScoringParams(n_boot=0)
    from_db = {r["responder"]: r for r in score_responses(frame, params)["responders"]}
    from_file = score_responses(validate_frame(read_radle_csv(path)), params)["responders"]
    assert {r["responder"]: (r["radle_c"], r["radle_a"]) for r in from_file} == {
        "m_yes": (1900.0, 1.0),
        "m_no": (800.0, 0.5),
    }
    figures = ("radle_c", "radle_a", "radle_r", "radle_s", "radle_h", "idk_rate")
    for row in from_file:  # R and H are NaN where the file gives no L3-4 / no wrong answer
        got_db = [from_db[row["responder"]][k] for k in figures]
        assert got_db == pytest.approx([row[k] for k in figures], nan_ok=True), row["responder"]


def test_import_run_radle_refuses_an_unknown_roster_name(
    session: Session, settings: Settings, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    radle_study(session, settings)
    path = tmp_path / "master.csv"
    path.write_text(master_csv(), encoding="utf-8")
    assert main(["import-run", str(path), "--exclude", "nobody", "--no-autograde"]) == 2
    assert "nobody" in capsys.readouterr().err
    with Session(session.get_bind()) as fresh:
        assert fresh.exec(select(Response)).first() is None
        assert fresh.exec(select(Reader)).first() is None
