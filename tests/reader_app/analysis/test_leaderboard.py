"""The leaderboard: hand-derived numbers, and the same figures as `readerstudy score`."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from sqlmodel import Session

from reader_app.analysis.data import NotScorable, check_scorable, study_data
from reader_app.analysis.leaderboard import (
    METRICS,
    build_leaderboard,
    display_differences,
    display_mrmc,
    display_table,
)
from reader_app.cli import main
from reader_app.core.settings import Settings
from scoring import ScoringParams
from tests.factories import make_study
from tests.reader_app.analysis.scenario import (
    grade_everything,
    import_model_run,
    plan_for,
    simulate_reader,
)

CASES = [f"case-{i:03d}" for i in range(1, 7)]  # case-000 is the practice case


def _study(session: Session, settings: Settings):  # type: ignore[no-untyped-def]
    """Six cases; three readers (two groups), two model runs; everything graded."""
    study = make_study(session, settings.asset_dir, n_cases=6, n_practice=1)
    simulate_reader(session, study, "R01", plan_for(CASES, "CCcWIM"), group="board-certified")
    simulate_reader(session, study, "R02", plan_for(CASES, "CwcCMI"), group="board-certified")
    simulate_reader(session, study, "R03", plan_for(CASES, "cWwIMC"), group="PGY2")
    import_model_run(session, study, "vlm-alpha", plan_for(CASES, "CCCWWC"))
    import_model_run(session, study, "vlm-beta", plan_for(CASES, "IcIIwM"))
    grade_everything(session, study)
    return study


def test_hand_derived_reader_and_pool(session: Session, settings: Settings) -> None:
    study = _study(session, settings)
    data = study_data(session=session, study=study)
    assert data.n_pending == 0 and data.case_ids == tuple(CASES)
    board = build_leaderboard(data.frame, data.case_ids, ScoringParams(n_boot=0))
    rows = board.table.set_index("name")
    # R01 "CCcWIM": +5 +5 +2 -5 0 +3 = 10 -> C = 1000 (1 + 10/30) = 1333.3
    assert rows.loc["R01", "radle_c"] == pytest.approx(1000 * (1 + 10 / 30))
    # R02 "CwcCMI": +5 -2 +2 +5 +3 0 = 13 -> 1433.3; R03 "cWwIMC": +2 -5 -2 0 +3 +5 = 3 -> 1100
    assert rows.loc["R02", "radle_c"] == pytest.approx(1000 * (1 + 13 / 30))
    assert rows.loc["R03", "radle_c"] == pytest.approx(1100.0)
    # every reader read every case: the pool is the mean of the readers' C
    pool = rows.loc["Human pool"]
    assert pool["radle_c"] == pytest.approx(
        (1000 * (1 + 10 / 30) + 1000 * (1 + 13 / 30) + 1100) / 3
    )
    assert pool["n_readers"] == 3
    assert rows.loc["Pool: PGY2", "radle_c"] == pytest.approx(1100.0)
    # R01: C = 4 correct of 6 -> A = 0.667; at L>=3: C, C correct, W wrong -> R = 2/3
    assert rows.loc["R01", "radle_a"] == pytest.approx(4 / 6)
    assert rows.loc["R01", "radle_r"] == pytest.approx(2 / 3)
    # vlm-alpha "CCCWWC": 5+5+5-5-5+5 = 10 -> 1333.3; S = 100 (1 - 10/30) = 66.7
    assert rows.loc["vlm-alpha", "radle_c"] == pytest.approx(1000 * (1 + 10 / 30))
    assert rows.loc["vlm-alpha", "radle_s"] == pytest.approx(100 * (1 - 10 / 30))
    assert list(board.table["arm"]) == [
        "pool", "group pool", "group pool", "model", "model", "reader", "reader", "reader"
    ]  # fmt: skip
    assert board.notes == ["The bootstrap is off (B = 0): no confidence intervals or p-values."]
    shown = display_table(board, readers=False)
    assert "R01" not in set(shown["name"]) and shown.loc[0, "RadLE-C"] == f"{pool['radle_c']:.1f}"


def _score_cli(path: Path, capsys: pytest.CaptureFixture[str], *argv: str) -> dict:  # type: ignore[type-arg]
    """`readerstudy score FILE --format json ...` through the real command line."""
    capsys.readouterr()
    assert main(["score", str(path), "--format", "json", *argv]) == 0
    out: dict = json.loads(capsys.readouterr().out)  # type: ignore[type-arg]
    return out


def _same(a: float, b: float | None) -> bool:
    if b is None:
        return math.isnan(a)
    return a == pytest.approx(b, rel=1e-12, abs=1e-12)


def test_leaderboard_equals_readerstudy_score_on_the_export(
    session: Session, settings: Settings, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study = _study(session, settings)
    params = ScoringParams(n_boot=300, seed=7, min_completion=0.5)
    data = study_data(session=session, study=study)
    board = build_leaderboard(data.frame, check_scorable(data), params)

    exported = tmp_path / "responses.csv"
    assert main(["export", study.slug, "--what", "responses", "-o", str(exported)]) == 0
    capsys.readouterr()
    cli = _score_cli(
        exported, capsys, "--bootstrap", "300", "--seed", "7", "--min-completion", "0.5"
    )

    assert cli["params"] == params.to_dict()
    by_name = {r["responder"]: r for r in cli["responders"]}
    pools = {None: cli["human_pool"], **{g["group"]: g for g in cli["human_pool"]["by_group"]}}
    checked = 0
    for row in board.table.to_dict(orient="records"):
        ref = pools[row["group"]] if row["responder"] == "human_pool" else by_name[row["name"]]
        for m in METRICS:
            for key in (m, f"{m}_ci_low", f"{m}_ci_high"):
                assert _same(row[key], ref[key]), (row["name"], key)
                checked += 1
    for row in board.differences.to_dict(orient="records"):
        ref = by_name[row["name"]]
        assert _same(row["perm_p"], ref["perm_p_vs_pool"])
        for m in METRICS:
            assert _same(row[f"{m}_diff"], ref[f"{m}_diff_vs_pool"])
            assert _same(row[f"{m}_diff_ci_low"], ref[f"{m}_diff_vs_pool_ci_low"])
            assert _same(row[f"{m}_diff_ci_high"], ref[f"{m}_diff_vs_pool_ci_high"])
    assert checked == 8 * 15  # pool, two group pools, two models, three readers
    assert len(display_differences(board)) == 2
    # model vs reader panel (readers with a missing case each: an incomplete design)
    comparisons = {(c["model"], c["metric"]): c for c in cli["comparisons"]}
    assert len(board.mrmc) == 2 and len(comparisons) == 4
    for row in board.mrmc.to_dict(orient="records"):
        for m in ("radle_c", "radle_a"):
            ref = comparisons[row["name"], m]
            for key in ("diff", "mrmc_ci_low", "mrmc_ci_high", "mrmc_p", "mrmc_se"):
                assert _same(row[f"{m}_{key}"], ref[key]), (row["name"], m, key)
                checked += 1
    assert checked == 8 * 15 + 2 * 2 * 5
    shown = display_mrmc(board).set_index("model run")
    alpha = comparisons["vlm-alpha", "radle_a"]
    assert shown.loc["vlm-alpha", "Δ A"] == (
        f"{alpha['diff']:.3f} [{alpha['mrmc_ci_low']:.3f}, {alpha['mrmc_ci_high']:.3f}]"
    )
    assert list(shown.columns) == ["Δ C", "p (C)", "Δ A", "p (A)"]


def test_empty_and_partial_states(session: Session, settings: Settings) -> None:
    empty = make_study(session, settings.asset_dir, n_cases=0, slug="empty")
    with pytest.raises(NotScorable, match="no scored cases"):
        check_scorable(study_data(session=session, study=empty))

    study = make_study(session, settings.asset_dir, n_cases=3, slug="partial")
    with pytest.raises(NotScorable, match="No answers yet"):
        check_scorable(study_data(session=session, study=study))

    cases = ["case-000", "case-001", "case-002"]
    simulate_reader(session, study, "R01", plan_for(cases, "CWI"))
    data = study_data(session=session, study=study)
    with pytest.raises(NotScorable, match="No verdicts yet"):
        check_scorable(data)  # nothing graded: even the key match waits for autograde

    from reader_app.grading.autograde import autograde_study

    autograde_study(session=session, study_id=study.id)
    data = study_data(session=session, study=study)
    with pytest.raises(NotScorable, match="1 answer\\(s\\) on 1 case\\(s\\) are not graded"):
        check_scorable(data)
    assert data.graded_cases() == ("case-000", "case-002")
    # one reader, no model run, scored on the fully graded cases only
    board = build_leaderboard(data.frame, data.graded_cases(), ScoringParams(n_boot=50))
    assert board.notes[0] == "The pool has one reader: its figures are that reader's."
    assert "No model runs yet" in board.notes[1]
    assert board.differences.empty and len(board.table) == 3  # pool, group pool, reader
    # a reader who stops early is shown but not pooled at the default completion of 100 %
    simulate_reader(session, study, "R02", plan_for(cases, "C.."))
    autograde_study(session=session, study_id=study.id)
    grade_everything(session, study)
    data = study_data(session=session, study=study)
    board = build_leaderboard(data.frame, check_scorable(data), ScoringParams(n_boot=0))
    assert board.table.set_index("name").loc["Human pool", "n_readers"] == 1
    assert any("below the completion threshold" in n and "R02" in n for n in board.notes)


def test_cohorts_on_the_leaderboard_filter_and_pool(session: Session, settings: Settings) -> None:
    from sqlmodel import select

    from reader_app.analysis.leaderboard_view import leaderboard_html
    from reader_app.models import ModelRun

    study = _study(session, settings)
    for run in session.exec(select(ModelRun)).all():
        run.cohort = {"vlm-alpha": "<b>frontier</b>", "vlm-beta": "open-weight"}[run.name]
        session.add(run)
    session.commit()
    data = study_data(session=session, study=study)
    board = build_leaderboard(data.frame, check_scorable(data), ScoringParams(n_boot=50))
    assert board.cohorts == ("<b>frontier</b>", "open-weight")
    # each cohort holds one run here: its pool equals that run, CIs included
    runs = board.table.set_index("name")
    pools = board.cohort_table.set_index("cohort")
    for run, cohort in (("vlm-alpha", "<b>frontier</b>"), ("vlm-beta", "open-weight")):
        for key in ("radle_c", "radle_c_ci_low", "radle_c_ci_high", "radle_a"):
            assert pools.loc[cohort, key] == pytest.approx(runs.loc[run, key]), (run, key)
    shown = board.arms(cohort="open-weight", cohort_pools=True)
    assert "vlm-alpha" not in set(shown["name"])
    assert {"vlm-beta", "Cohort: open-weight", "Human pool", "R01"} <= set(shown["name"])
    assert "cohort pool" not in set(board.arms()["arm"])  # the charts' rows are unchanged
    html = leaderboard_html(board)
    assert "<b>frontier</b>" not in html and "&lt;b&gt;frontier&lt;/b&gt;" in html
    assert "cohort" in display_table(board).columns
