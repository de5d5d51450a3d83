"""The AI-aided arm's exam services on SQLite and PostgreSQL (reader_app/exam/aid.py):
the model's answer only after the unaided row, the aided row beside it, resume at the
aided step; the crossover split and its washout on a clock the test sets."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, select

from reader_app.core.settings import Settings
from reader_app.exam import aid
from reader_app.exam.next_case import next_case
from reader_app.exam.order import ensure_order
from reader_app.exam.submit import submit_answer, validate_answer
from reader_app.models import AidCrossover, Case, CaseImage, ModelRun, Reader, Response, Study
from reader_app.study.config import StudyConfig, StudyConfigError
from tests.factories import make_reader, make_study

SEQUENTIAL = {"aid": {"run": "gpt-x", "design": "sequential", "show": ["diagnosis", "confidence"]}}


def crossover(washout_days: int = 14) -> dict[str, object]:
    return {
        "aid": {
            "run": "gpt-x",
            "design": "crossover",
            "show": ["diagnosis", "confidence", "marker"],
            "washout_days": washout_days,
            "seed": 7,
        }
    }


def add_run(session: Session, study: Study, *, name: str = "gpt-x", pixels: bool = True) -> None:
    """A model run of the study that answered every scored case, L4 wrong on each."""
    assert study.id is not None
    run = ModelRun(study_id=study.id, name=name, model="stub")
    session.add(run)
    session.commit()
    for case in session.exec(select(Case).where(Case.study_id == study.id)).all():
        shas = session.exec(select(CaseImage.sha256).where(CaseImage.case_id == case.id)).all()
        session.add(
            Response(
                study_id=study.id,
                case_id=case.id,  # type: ignore[arg-type]
                model_run_id=run.id,
                diagnosis=f"Model says {case.source_id}",
                likert=4,
                status="answered",
                image_sha256=",".join(shas) if pixels else "0" * 64,
                location_json='{"slice": null, "x": 5.0, "y": 6.0}',
            )
        )
    session.commit()


def sequential_reader(session: Session, settings: Settings) -> Reader:
    study = make_study(session, settings.asset_dir, n_cases=3, config=SEQUENTIAL)
    add_run(session, study)
    reader = make_reader(session, study, ready=True).reader
    ensure_order(session=session, reader=reader)
    return reader


def answer_unaided(session: Session, reader: Reader) -> str:
    case = next_case(session=session, reader=reader)
    assert case is not None
    submit_answer(
        session=session,
        reader=reader,
        case_public_id=case.public_id,
        answer=validate_answer("Pneumothorax", 3, False),
        shown_at=None,
        image_sha256=case.reader_sha256,
    )
    return case.public_id


def test_the_model_answer_comes_only_after_the_unaided_row(
    session: Session, settings: Settings
) -> None:
    reader = sequential_reader(session, settings)
    case = next_case(session=session, reader=reader)
    assert case is not None
    with pytest.raises(aid.AidError, match="your own answer first"):
        aid.model_answer(session, reader, case.public_id)
    with pytest.raises(aid.AidError, match="your own answer first"):
        aid.submit_aided(
            session=session,
            reader=reader,
            case_public_id=case.public_id,
            answer=validate_answer("Model dx", 4, False),
            shown_at=None,
            image_sha256=case.reader_sha256,
        )
    assert session.exec(select(Response).where(Response.reader_id == reader.id)).all() == []
    assert answer_unaided(session, reader) == case.public_id
    shown = aid.model_answer(session, reader, case.public_id)
    source = session.exec(select(Case.source_id).where(Case.public_id == case.public_id)).one()
    # the run's stored answer, as `show` allows: diagnosis and confidence, not the marker
    assert (shown.diagnosis, shown.likert, shown.location_json) == (
        f"Model says {source}",
        4,
        None,
    )
    assert aid.pending_aided_case(session, reader) == case.public_id
    result = aid.submit_aided(
        session=session,
        reader=reader,
        case_public_id=case.public_id,
        answer=validate_answer(f"Model says {source}", 4, False),
        shown_at=None,
        image_sha256=case.reader_sha256,
    )
    assert not result.duplicate
    rows = session.exec(
        select(Response.arm, Response.aid_run_id, Response.diagnosis, Response.submitted_at)
        .where(Response.reader_id == reader.id)
        .order_by(Response.id)
    ).all()
    run_id = session.exec(select(ModelRun.id)).one()
    assert [(r[0], r[1], r[2]) for r in rows] == [
        ("unaided", None, "Pneumothorax"),
        ("aided", run_id, f"Model says {source}"),
    ]
    assert rows[0][3] <= rows[1][3]
    assert aid.pending_aided_case(session, reader) is None
    # a second aided submit is a duplicate, never a third row
    again = aid.submit_aided(
        session=session,
        reader=reader,
        case_public_id=case.public_id,
        answer=validate_answer("Other", 1, False),
        shown_at=None,
        image_sha256=case.reader_sha256,
    )
    assert again.duplicate and again.response_id == result.response_id


def test_the_database_allows_one_row_per_reader_case_and_arm(
    session: Session, settings: Settings
) -> None:
    reader = sequential_reader(session, settings)
    answer_unaided(session, reader)
    first = session.exec(select(Response).where(Response.reader_id == reader.id)).one()
    session.add(
        Response(
            study_id=first.study_id,
            case_id=first.case_id,
            reader_id=reader.id,
            status="idk",
            idk=True,
            arm="unaided",
        )
    )
    with pytest.raises(IntegrityError):
        session.commit()
    session.rollback()
    # an aided row must name the run shown
    session.add(
        Response(
            study_id=first.study_id,
            case_id=first.case_id,
            reader_id=reader.id,
            status="idk",
            idk=True,
            arm="aided",
        )
    )
    with pytest.raises(IntegrityError):
        session.commit()
    session.rollback()


def test_a_reload_resumes_at_the_aided_step(session: Session, settings: Settings) -> None:
    reader = sequential_reader(session, settings)
    public_id = answer_unaided(session, reader)
    with Session(session.get_bind()) as fresh:  # a new browser session
        again = fresh.get(Reader, reader.id)
        assert again is not None
        assert aid.pending_aided_case(fresh, again) == public_id


def test_a_run_on_other_pixels_or_text_only_is_refused(
    session: Session, settings: Settings
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=2, config=SEQUENTIAL)
    add_run(session, study, pixels=False)
    reader = make_reader(session, study, ready=True).reader
    ensure_order(session=session, reader=reader)
    public_id = answer_unaided(session, reader)
    with pytest.raises(aid.AidError, match="did not see this case's images"):
        aid.model_answer(session, reader, public_id)
    run = session.exec(select(ModelRun)).one()
    run.no_images = True
    session.add(run)
    session.commit()
    with pytest.raises(aid.AidError, match="text-only"):
        aid.model_answer(session, reader, public_id)
    run.study_id = make_study(session, settings.asset_dir, n_cases=1, slug="other").id  # type: ignore[assignment]
    session.add(run)
    session.commit()
    with pytest.raises(aid.AidError, match="not a model run of this study"):
        aid.model_answer(session, reader, public_id)


@pytest.mark.parametrize(
    ("aid_table", "key"),
    [
        ("nope", "aid"),
        ({"design": "sequential"}, "aid.run"),
        ({"run": "m", "design": "parallel"}, "aid.design"),
        ({"run": "m", "show": ["key"]}, "aid.show"),
        ({"run": "m", "show": []}, "aid.show"),
        ({"run": "m", "design": "crossover"}, "aid.washout_days"),
        ({"run": "m", "design": "crossover", "washout_days": -1}, "aid.washout_days"),
        ({"run": "m", "washout_days": 3}, "aid.washout_days"),
        ({"run": "m", "url": "http://x"}, "aid.url"),
    ],
)
def test_bad_aid_tables_are_refused_naming_the_key(aid_table: object, key: str) -> None:
    with pytest.raises(StudyConfigError) as err:
        StudyConfig.parse({"aid": aid_table}, title="t", practice_cases=0)
    assert err.value.key == key


def test_crossover_split_is_seeded_balanced_and_recorded(
    session: Session, settings: Settings
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=4, config=crossover())
    add_run(session, study)
    readers = [make_reader(session, study, f"R{i}", ready=True).reader for i in range(4)]
    groups = [aid.crossover_group(session, r) for r in readers]
    assert sorted(groups) == ["A", "A", "B", "B"]  # blocks of two: one A and one B each
    assert sorted(groups[:2]) == ["A", "B"]
    # recorded: asked again (or in a new session) the answer is the same
    assert [aid.crossover_group(session, r) for r in readers] == groups
    recorded = session.exec(select(AidCrossover).order_by(AidCrossover.reader_id)).all()
    assert [r.group_name for r in recorded] == groups and {r.seed for r in recorded} == {7}
    first, second = aid.crossover_halves(session, study.id)  # type: ignore[arg-type]
    assert len(first) == len(second) == 2 and not set(first) & set(second)
    record = aid.crossover_record(session, readers[0])
    assert set(record["aided_period_1"]) | set(record["aided_period_2"]) == {*first, *second}  # type: ignore[arg-type]


def test_an_aided_case_cannot_be_seen_before_its_washout_ends(
    session: Session, settings: Settings
) -> None:
    """Period 1: half the cases aided, half unaided; then 14 days of washout (a clock the
    test sets), then the swap. Before the washout ends neither the model's answer on a
    period-2 aided case nor an aided answer to it is allowed; after it, both are."""
    study = make_study(session, settings.asset_dir, n_cases=4, config=crossover(14))
    add_run(session, study)
    reader = make_reader(session, study, ready=True).reader
    ensure_order(session=session, reader=reader)
    record = aid.crossover_record(session, reader)
    cases = {c.id: c for c in session.exec(select(Case).where(Case.study_id == study.id))}
    clock = {"now": datetime(2026, 1, 1, 9, 0, tzinfo=UTC)}

    def now() -> datetime:
        return clock["now"]

    shas = {
        cid: list(session.exec(select(CaseImage.sha256).where(CaseImage.case_id == cid)).all())
        for cid in cases
    }
    period_1_aided = list(record["aided_period_1"])  # type: ignore[call-overload]
    period_2_aided = list(record["aided_period_2"])  # type: ignore[call-overload]
    # period 1: a period-2 aided case is read unaided now; its model answer is not shown
    late = cases[period_2_aided[0]]
    with pytest.raises(aid.AidError):
        aid.model_answer(session, reader, late.public_id, now=now)
    for cid in period_2_aided:
        aid.submit_unaided(
            session=session,
            reader=reader,
            case_public_id=cases[cid].public_id,
            answer=validate_answer("Own", 2, False),
            shown_at=None,
            image_sha256=shas[cid],
            now=now,
        )
    for cid in period_1_aided:
        shown = aid.model_answer(session, reader, cases[cid].public_id, now=now)
        assert shown.location_json is not None  # `show` has the marker
        aid.submit_aided(
            session=session,
            reader=reader,
            case_public_id=cases[cid].public_id,
            answer=validate_answer("With model", 3, False),
            shown_at=None,
            image_sha256=shas[cid],
            now=now,
        )
    done = session.exec(select(Response.submitted_at).where(Response.reader_id == reader.id)).all()
    last = max(done)
    ends = aid.washout_ends(session, reader)
    assert ends == last + timedelta(days=14)
    # one second before the washout ends: nothing of period 2 is open
    clock["now"] = ends - timedelta(seconds=1)
    assert aid.crossover_period(session, reader, now=now) == 0
    with pytest.raises(aid.AidError, match="not one you read with the model"):
        aid.model_answer(session, reader, late.public_id, now=now)
    with pytest.raises(aid.AidError):
        aid.submit_aided(
            session=session,
            reader=reader,
            case_public_id=late.public_id,
            answer=validate_answer("With model", 3, False),
            shown_at=None,
            image_sha256=shas[late.id],  # type: ignore[index]
            now=now,
        )
    assert (
        session.exec(
            select(Response).where(Response.reader_id == reader.id, Response.arm == "aided")
        ).all()
        != []
    )
    aided_late = session.exec(
        select(Response).where(
            Response.reader_id == reader.id, Response.case_id == late.id, Response.arm == "aided"
        )
    ).all()
    assert aided_late == []
    # when the washout ends, period 2 opens: the swap
    clock["now"] = ends
    assert aid.crossover_period(session, reader, now=now) == 2
    assert aid.model_answer(session, reader, late.public_id, now=now).diagnosis
    # a period-1 aided case is now read unaided, and its model answer is not shown again
    with pytest.raises(aid.AidError):
        aid.model_answer(session, reader, cases[period_1_aided[0]].public_id, now=now)


def test_crossover_step_hands_out_period_2_only_after_the_washout(
    session: Session, settings: Settings
) -> None:
    """The page's service: practice first (unaided), each scored case once in period 1 in
    its group's arm, nothing during the washout (one second before it ends: period 0,
    when it opens), then the swap, then nothing left. The clock is the test's."""
    study = make_study(session, settings.asset_dir, n_cases=4, n_practice=1, config=crossover(3))
    add_run(session, study)
    reader = make_reader(session, study, ready=True).reader
    ensure_order(session=session, reader=reader)
    record = aid.crossover_record(session, reader)
    clock = {"now": datetime(2026, 3, 1, 8, 0, tzinfo=UTC)}

    def now() -> datetime:
        return clock["now"]

    def read(period: int) -> dict[str, str]:
        """Read every case the service hands out: {public id: arm}."""
        arms: dict[str, str] = {}
        while (step := aid.crossover_step(session, reader, 5, now=now)).case is not None:
            assert step.period == period and step.arm is not None
            store = aid.submit_aided if step.arm == "aided" else aid.submit_unaided
            store(
                session=session,
                reader=reader,
                case_public_id=step.case.public_id,
                answer=validate_answer("Own", 2, False),
                shown_at=None,
                image_sha256=step.case.reader_sha256,
                now=now,
            )
            arms[step.case.public_id] = step.arm
        return arms

    ids = {c.public_id: c.id for c in session.exec(select(Case).where(Case.study_id == study.id))}
    practice = {c.public_id for c in session.exec(select(Case).where(Case.practice))}
    period_1 = read(1)
    assert len(period_1) == 5 and all(period_1[p] == "unaided" for p in practice)
    assert {ids[p] for p, arm in period_1.items() if arm == "aided"} == set(
        record["aided_period_1"]  # type: ignore[call-overload]
    )
    ends = aid.washout_ends(session, reader)
    assert ends is not None
    clock["now"] = ends - timedelta(seconds=1)
    washout = aid.crossover_step(session, reader, 5, now=now)
    assert (washout.period, washout.case, washout.reopens) == (0, None, ends)
    clock["now"] = ends
    period_2 = read(2)
    assert len(period_2) == 4 and not practice & set(period_2)  # practice is read once
    assert {ids[p] for p, arm in period_2.items() if arm == "aided"} == set(
        record["aided_period_2"]  # type: ignore[call-overload]
    )
    assert all(period_2[p] != period_1[p] for p in period_2)  # the swap
    done = aid.crossover_step(session, reader, 5, now=now)
    assert (done.period, done.case) == (2, None)
