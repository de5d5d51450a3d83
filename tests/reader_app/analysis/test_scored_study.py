"""The shared scored study (reader_app.analysis.scored_study): computed once per study and
data version, recomputed on an answer, a grade, a parameter change; never one study's
figures for another. On SQLite and PostgreSQL (the ``session`` fixture), with the study
built through the real exam, run importer and adjudication services."""

from __future__ import annotations

import json
import threading
from datetime import timedelta

import pandas as pd
import pytest
from sqlmodel import Session, select

from reader_app.analysis.chart_data import group_split
from reader_app.analysis.data import study_data
from reader_app.analysis.leaderboard import build_leaderboard
from reader_app.analysis.scored_study import SharedScoring, data_version
from reader_app.core.settings import Settings
from reader_app.exam.next_case import case_view
from reader_app.exam.order import stored_order
from reader_app.exam.submit import submit_answer, validate_answer
from reader_app.grading.adjudication import decide
from reader_app.grading.queue import adjudication_queue
from reader_app.models import Case, Reader, Study, utcnow
from reader_app.runs.importers import import_run_file
from scoring import ScoringParams
from tests.factories import make_study
from tests.reader_app.analysis.scenario import (
    grade_everything,
    import_model_run,
    key_by_source,
    plan_for,
    simulate_reader,
)

CASES = [f"case-{i:03d}" for i in range(1, 7)]  # case-000 is the practice case
NO_BOOT = ScoringParams(n_boot=0)

# Hand-derived RadLE-C (SCORING.md: C = 1000 (1 + points / (5 N)), N = 6, so 5N = 30):
# R01 "CCcWIM": +5 +5 +2 -5 0 +3 = 10 -> 1333.3; R02 "CwcCMI": +5 -2 +2 +5 +3 0 = 13 -> 1433.3;
# R03 "cWwIMC": +2 -5 -2 0 +3 +5 = 3 -> 1100.
C_R01, C_R02, C_R03 = 1000 * (1 + 10 / 30), 1000 * (1 + 13 / 30), 1100.0


def _study(session: Session, settings: Settings, slug: str = "study") -> Study:
    """Six cases; three readers (two groups), one model run; everything graded; and an
    adjudicator invited up front (so grading later adds no reader)."""
    study = make_study(session, settings.asset_dir, n_cases=6, n_practice=1, slug=slug)
    simulate_reader(session, study, "R01", plan_for(CASES, "CCcWIM"), group="board-certified")
    simulate_reader(session, study, "R02", plan_for(CASES, "CwcCMI"), group="board-certified")
    simulate_reader(session, study, "R03", plan_for(CASES, "cWwIMC"), group="PGY2")
    import_model_run(session, study, "vlm-alpha", plan_for(CASES, "CCCWWC"))
    grade_everything(session, study, adjudicator_code="ADJ")
    return study


def _reader(session: Session, study: Study, code: str) -> Reader:
    return session.exec(
        select(Reader).where(Reader.study_id == study.id, Reader.code == code)
    ).one()


def _pool_c(board) -> float:  # type: ignore[no-untyped-def]
    return float(board.table.set_index("name").loc["Human pool", "radle_c"])


def _answer(session: Session, study: Study, reader: Reader, source_id: str) -> None:
    """``reader`` answers ``source_id`` with the key's text at L4, through the exam."""
    order = stored_order(session=session, reader=reader)
    for slot, case_id in enumerate(order):
        case = session.get(Case, case_id)
        assert case is not None
        if case.source_id != source_id:
            continue
        view = case_view(session=session, case=case, slot=slot, total=len(order))
        submit_answer(
            session=session,
            reader=reader,
            case_public_id=view.public_id,
            answer=validate_answer(key_by_source(session, study)[source_id], 4, False),
            shown_at=utcnow() - timedelta(seconds=20),
            image_sha256=view.reader_sha256,
        )
        return
    raise AssertionError(f"{source_id} is not in the reader's order")


def test_computed_once_and_recomputed_on_an_answer(session: Session, settings: Settings) -> None:
    study = make_study(session, settings.asset_dir, n_cases=6, n_practice=1)
    simulate_reader(session, study, "R01", plan_for(CASES, "CCcWIM"))
    # R03 leaves case-006 unanswered: +2 -5 -2 0 +3 (0) = -2 -> C = 1000 (1 - 2/30)
    r03 = simulate_reader(session, study, "R03", plan_for(CASES, "cWwIM."))
    grade_everything(session, study)
    cache = SharedScoring()
    data = cache.study_data(session=session, study=study)
    board = cache.leaderboard(data, data.case_ids, NO_BOOT)
    # R03 answered 5 of 6 cases: out of the pool (minimum completion 1.0), R01 alone in it
    assert board.table.set_index("name").loc["R03", "radle_c"] == pytest.approx(1000 * (1 - 2 / 30))
    assert _pool_c(board) == pytest.approx(C_R01)
    assert cache.computations == 2  # the frame, the scoring

    # a second page run (another session) finds both: same objects, nothing computed
    again = cache.study_data(session=session, study=study)
    assert again is data and cache.leaderboard(again, data.case_ids, NO_BOOT) is board
    assert cache.computations == 2

    # R03 answers case-006 right at L4 (the key's text: graded by grade memory), and
    # nothing else changes: +5 -> "cWwIMC" = 3 points, C = 1100; complete, so in the pool
    _answer(session, study, r03, "case-006")
    fresh = cache.study_data(session=session, study=study)
    assert fresh.version != data.version and fresh.n_pending == 0
    assert _pool_c(cache.leaderboard(fresh, fresh.case_ids, NO_BOOT)) == pytest.approx(
        (C_R01 + C_R03) / 2
    )
    assert cache.computations == 4


def test_recomputed_on_a_grade(session: Session, settings: Settings) -> None:
    study = _study(session, settings)
    adjudicator = _reader(session, study, "ADJ")
    # a second run answers case-001 with a text nobody graded yet: pending
    novel = json.dumps({"case_id": "case-001", "diagnosis": "Novel finding", "likert": 4})
    import_run_file(
        session=session, study=study, source=novel.encode(), fmt="jsonl", name="vlm-beta",
        model="vlm-beta", group="vendor",
    )  # fmt: skip
    cache = SharedScoring()
    before = cache.study_data(session=session, study=study)
    assert before.n_pending == 1
    view = adjudication_queue(session=session, adjudicator=adjudicator)
    assert view.item is not None
    decide(session=session, adjudicator=adjudicator, item_id=view.item.item_id, correct=True)
    after = cache.study_data(session=session, study=study)
    assert after.version != before.version and after.n_pending == 0
    # vlm-beta: case-001 correct at L4 (+5), five cases unanswered (0) -> C = 1000 (1 + 5/30)
    board = cache.leaderboard(after, after.case_ids, NO_BOOT)
    assert board.table.set_index("name").loc["vlm-beta", "radle_c"] == pytest.approx(
        1000 * (1 + 5 / 30)
    )


def test_recomputed_on_a_parameter_change(session: Session, settings: Settings) -> None:
    study = _study(session, settings)
    cache = SharedScoring()
    data = cache.study_data(session=session, study=study)
    first = cache.leaderboard(data, data.case_ids, NO_BOOT)
    idk = cache.leaderboard(data, data.case_ids, ScoringParams(n_boot=0, idk_score=1.0))
    assert idk is not first and cache.computations == 3  # the data loaded once
    # one IDK each (R01 case-005, R02 case-006, R03 case-004) is now worth +1 point
    rows = idk.table.set_index("name")
    assert rows.loc["R01", "radle_c"] == pytest.approx(1000 * (1 + 11 / 30))
    assert rows.loc["R03", "radle_c"] == pytest.approx(1000 * (1 + 4 / 30))
    # back to the first parameters: served, not recomputed
    assert cache.leaderboard(data, data.case_ids, NO_BOOT) is first
    assert cache.computations == 3


def test_recomputed_when_settings_or_a_group_change(session: Session, settings: Settings) -> None:
    study = _study(session, settings)
    versions = {data_version(session=session, study_id=study.id or 0)}
    r03 = _reader(session, study, "R03")
    r03.group_name = "board-certified"
    session.add(r03)
    session.commit()
    versions.add(data_version(session=session, study_id=study.id or 0))
    study.config_json = json.dumps({"grounding_tolerance": 3})
    session.add(study)
    session.commit()
    versions.add(data_version(session=session, study_id=study.id or 0))
    assert len(versions) == 3
    # reading it twice with nothing changed gives the same version
    assert data_version(session=session, study_id=study.id or 0) in versions


def test_never_one_studys_figures_for_another(session: Session, settings: Settings) -> None:
    a = _study(session, settings, slug="alpha")
    b = make_study(session, settings.asset_dir, n_cases=6, n_practice=1, slug="beta")
    # the same case ids and readers' codes; beta's R01 answers everything right
    simulate_reader(session, b, "R01", plan_for(CASES, "CCCCCC"))
    grade_everything(session, b, adjudicator_code="ADJ")
    cache = SharedScoring()
    data_a = cache.study_data(session=session, study=a)
    data_b = cache.study_data(session=session, study=b)
    assert data_a.case_ids == data_b.case_ids and data_a.study_id != data_b.study_id
    board_a = cache.leaderboard(data_a, data_a.case_ids, NO_BOOT)
    board_b = cache.leaderboard(data_b, data_b.case_ids, NO_BOOT)
    assert board_a.table.set_index("name").loc["R01", "radle_c"] == pytest.approx(C_R01)
    assert board_b.table.set_index("name").loc["R01", "radle_c"] == pytest.approx(2000.0)
    assert set(board_b.table["name"]) == {"Human pool", "Pool: board-certified", "R01"}
    # a page run of alpha after beta's: still alpha's own
    assert cache.study_data(session=session, study=a) is data_a
    assert cache.leaderboard(data_a, data_a.case_ids, NO_BOOT) is board_a


@pytest.mark.parametrize("merge", [True, False])
def test_group_split_equals_a_full_second_scoring(
    session: Session, settings: Settings, merge: bool
) -> None:
    """The group split read off the shared computation (and, merged, a scoring of the
    readers alone) gives chart_data.group_split's figures, CIs included."""
    study = _study(session, settings)
    simulate_reader(session, study, "R05", plan_for(CASES, "wCCIcM"), group="PGY3")
    grade_everything(session, study, adjudicator_code="ADJ2")  # R05's wrong case-001 text
    cache = SharedScoring()
    data = cache.study_data(session=session, study=study)
    params = ScoringParams(n_boot=300, seed=7)
    shared = cache.group_split(data, data.case_ids, params, merge=merge)
    full = group_split(data.frame, data.case_ids, params, merge_trainees=merge)
    pd.testing.assert_frame_equal(shared.reset_index(drop=True), full.reset_index(drop=True))
    groups = set(shared["group"])
    assert groups == ({"all readers", "board-certified", "trainees"} if merge else
                      {"all readers", "board-certified", "PGY2", "PGY3"})  # fmt: skip


def test_the_group_split_without_merge_scores_nothing_more(
    session: Session, settings: Settings
) -> None:
    study = _study(session, settings)
    cache = SharedScoring()
    data = cache.study_data(session=session, study=study)
    params = ScoringParams(n_boot=200)
    cache.leaderboard(data, data.case_ids, params)
    before = cache.computations
    cache.group_split(data, data.case_ids, params, merge=False)
    assert cache.computations == before + 1  # the split read off the cached board


def test_one_computation_for_sessions_asking_at_once(session: Session, settings: Settings) -> None:
    study = _study(session, settings)
    cache = SharedScoring()
    data = cache.study_data(session=session, study=study)
    started, release = threading.Event(), threading.Event()
    calls: list[int] = []

    def slow() -> str:
        calls.append(1)
        started.set()
        release.wait(10)
        return "figures"

    results: list[str] = []
    first = threading.Thread(target=lambda: results.append(cache.computed(data, "x", 1, slow)))
    first.start()
    assert started.wait(10)
    second = threading.Thread(target=lambda: results.append(cache.computed(data, "x", 1, slow)))
    second.start()
    release.set()
    first.join(10)
    second.join(10)
    assert results == ["figures", "figures"] and calls == [1]


def test_a_failed_computation_is_not_kept(session: Session, settings: Settings) -> None:
    study = _study(session, settings)
    cache = SharedScoring()
    data = cache.study_data(session=session, study=study)

    def broken() -> str:
        raise ValueError("no figures")

    with pytest.raises(ValueError, match="no figures"):
        cache.computed(data, "x", 1, broken)
    assert cache.computed(data, "x", 1, lambda: "figures") == "figures"


def test_needs_data_from_the_shared_loader(session: Session, settings: Settings) -> None:
    study = _study(session, settings)
    plain = study_data(session=session, study=study)
    with pytest.raises(ValueError, match="study_data"):
        SharedScoring().computed(plain, "x", 1, lambda: build_leaderboard(plain.frame, (), NO_BOOT))
