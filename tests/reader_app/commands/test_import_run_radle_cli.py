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
from reader_app.models import ModelRun, Reader, Response
from reader_app.results import tidy_responses
from scoring import ScoringParams, score_responses
from tests.factories import make_study
from tests.reader_app.commands.test_radle_real_shape_cli import (
    BOARD,
    MODELS,
    check,
    pool_expected,
    reader_expected,
)
from tests.support.radle_master import N_CASES, SENIORITY, master_csv


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
    # an empty diagnosis with a valid Likert cannot enter grade memory: this file gives
    # alpha_1's five correct L3 answers their diagnosis (same points, same figures)
    path.write_text(master_csv(blank_dx=False), encoding="utf-8")
    assert main(["import-run", str(path), "--exclude", "alpha_0", "--no-autograde"]) == 0
    out = capsys.readouterr().out
    assert "run alpha_1, run beta_med, run gamma_muse" in out
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
    assert len(frame) == (12 + 3) * N_CASES
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


def test_import_run_radle_refuses_answers_without_a_diagnosis(
    session: Session, settings: Settings, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    radle_study(session, settings)
    path = tmp_path / "master.csv"
    path.write_text(master_csv(blank_dx=True), encoding="utf-8")
    assert main(["import-run", str(path), "--exclude", "alpha_0", "--no-autograde"]) == 2
    err = capsys.readouterr().err
    assert "alpha_1/121" in err and "--input-format radle" in err
    assert main(["import-run", str(path), "--exclude", "nobody", "--no-autograde"]) == 2
    assert "nobody" in capsys.readouterr().err
    with Session(session.get_bind()) as fresh:
        assert fresh.exec(select(Response)).first() is None
        assert fresh.exec(select(Reader)).first() is None
