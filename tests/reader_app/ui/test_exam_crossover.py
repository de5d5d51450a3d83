"""The exam page of a crossover AI-aided study through AppTest, on SQLite and PostgreSQL
(docs/aided.md, SCORING.md section 10): period 1 reads the reader's aided half with the
model's answer shown with the case (no unaided answer first) and the other half on their
own; during the washout no case is shown and the page says when period 2 opens (UTC);
once it has passed (the stored answers moved back in time, which is the clock moving on),
period 2 swaps the arms. Every row is checked against the arm the page drew."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from sqlmodel import Session, select
from streamlit.testing.v1 import AppTest

from reader_app.core.settings import Settings
from reader_app.exam import aid
from reader_app.models import Case, Response
from tests.factories import make_reader, make_study
from tests.reader_app.exam.test_aid import add_run, crossover
from tests.reader_app.ui.helpers import panel_submit, responses, texts

App = Callable[..., AppTest]


def _mine(session: Session) -> list[Response]:
    """The reader's rows (the model run's own rows are in the table too)."""
    return [r for r in responses(session) if r.reader_id is not None]


def _shown(at: AppTest) -> str:
    """The page's text: markdown, captions, infos."""
    said = "\n".join(str(e.value) for e in [*at.markdown, *at.caption, *at.info, *at.success])
    return said.replace("\\", "")  # markdown escapes (case\-002)


def _read_one(at: AppTest, diagnosis: str) -> None:
    at.text_input[0].input(diagnosis)  # the crossover fields are keyed by the case
    radio = at.radio[0]
    radio.set_value(radio.options[2])
    at.button(key="aid_submit").click().run()
    assert not at.exception


def _period(at: AppTest, session: Session, sources: dict[str, str]) -> dict[str, bool]:
    """Read the 4 cases of one period on the page: {source id: model's answer shown}."""
    seen: dict[str, bool] = {}
    for _ in range(4):
        said = _shown(at)
        box = "AI model's answer" in said  # the box's title
        shown = [s for s in sources.values() if f"Model says {s}" in said]
        assert len(shown) == (1 if box else 0), said  # the model's answer of this case only
        before = {r.id for r in _mine(session)}
        _read_one(at, f"Answer {len(seen)}")
        new = [r for r in _mine(session) if r.id not in before]
        assert len(new) == 1, "one row per submit"
        source = sources[str(new[0].case_id)]
        assert new[0].arm == ("aided" if box else "unaided")  # the arm the page drew
        if box:
            assert shown == [source] and new[0].aid_run_id is not None
        else:
            assert new[0].aid_run_id is None
        seen[source] = box
    return seen


def test_crossover_periods_and_washout_on_the_exam_page(
    app_for: App, session: Session, settings: Settings
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=4, config=crossover(14))
    add_run(session, study)
    invite = make_reader(session, study, ready=True)
    at = app_for(invite.token)
    assert not at.exception
    cases = list(session.exec(select(Case).where(Case.study_id == study.id)))
    sources = {str(c.id): c.source_id for c in cases}
    record = aid.crossover_record(session, invite.reader)
    aided_1 = {sources[str(i)] for i in record["aided_period_1"]}  # type: ignore[attr-defined]
    aided_2 = {sources[str(i)] for i in record["aided_period_2"]}  # type: ignore[attr-defined]
    assert len(aided_1) == len(aided_2) == 2 and not aided_1 & aided_2

    # period 1: the reader's aided half with the model's answer, the rest on their own
    period_1 = _period(at, session, sources)
    assert {s for s, box in period_1.items() if box} == aided_1

    # the washout: no case, no model answer, the date period 2 opens (last answer + 14 d)
    last = max(r.submitted_at for r in _mine(session))
    opens = last + timedelta(days=14)
    said = _shown(at)
    assert f"on {opens:%Y-%m-%d at %H:%M} UTC" in said, said
    assert "Model says" not in texts(at) and not at.text_input and not at.button
    at.run()  # a reload does not open it either
    assert "Model says" not in texts(at) and not at.text_input
    assert len(_mine(session)) == 4

    # the clock moves on 14 days and a second: the stored times moved back as far
    for row in session.exec(select(Response).where(Response.reader_id == invite.reader.id)):
        row.submitted_at -= timedelta(days=14, seconds=1)
        if row.shown_at is not None:
            row.shown_at -= timedelta(days=14, seconds=1)
        session.add(row)
    session.commit()
    at.run()
    assert "Period 2 of 2." in _shown(at)

    # period 2: the arms swapped
    period_2 = _period(at, session, sources)
    assert {s for s, box in period_2.items() if box} == aided_2
    assert "finished" in _shown(at)
    rows = _mine(session)
    assert sorted((sources[str(r.case_id)], r.arm) for r in rows) == sorted(
        [(s, "aided") for s in sources.values()] + [(s, "unaided") for s in sources.values()]
    )


def test_crossover_practice_feedback_pause_and_revision_on_the_exam_page(
    app_for: App, session: Session, settings: Settings
) -> None:
    """A practice case first, on one's own, then its reference answer as in any study;
    Pause hides the case and Resume brings it back; an earlier answer of the period is
    changed in its own arm (the model's answer beside an aided one), nothing else."""
    config = {**crossover(14), "allow_revisions": True}
    study = make_study(session, settings.asset_dir, n_cases=2, n_practice=1, config=config)
    add_run(session, study)
    invite = make_reader(session, study, ready=True)
    at = app_for(invite.token)
    assert not at.exception
    cases = list(session.exec(select(Case).where(Case.study_id == study.id)))
    sources = {str(c.id): c.source_id for c in cases}
    practice = next(c for c in cases if c.practice)

    # practice: no model's answer, then the reference answer, then the scored cases
    assert "AI model's answer" not in _shown(at) and not any(b.key == "back" for b in at.button)
    _read_one(at, "My practice answer")
    assert "Here is the reference answer" in _shown(at)
    assert "My practice answer" in _shown(at)
    (row,) = _mine(session)
    assert (row.case_id, row.arm, row.practice) == (practice.id, "unaided", True)
    at.button(key="continue").click().run()
    assert "Period 1 of 2." in _shown(at)

    # pause: the case is hidden, and comes back
    at.button(key="pause").click().run()
    assert "Paused" in at.info[0].value and not at.text_input
    at.button(key="resume").click().run()
    assert "Period 1 of 2." in _shown(at) and at.text_input

    # the first scored case, then back to it from the second
    box = "AI model's answer" in _shown(at)
    _read_one(at, "First reading")
    first = next(r for r in _mine(session) if not r.practice)
    assert first.arm == ("aided" if box else "unaided")
    at.button(key="back").click().run()
    assert not at.exception
    said = _shown(at)
    assert "changing your" in at.warning[0].value
    # an aided answer is changed with the model's answer beside it, an unaided one without
    assert ("AI model's answer" in said) == box
    assert (f"Model says {sources[str(first.case_id)]}" in said) == box
    panel_submit(at, diagnosis="Second thought", likert=1)
    assert not at.exception
    session.expire_all()
    mine = {(r.case_id, r.arm): r for r in _mine(session)}
    changed = mine[(first.case_id, first.arm)]
    assert (changed.diagnosis, changed.likert, changed.revision) == ("Second thought", 1, 1)
    assert len(mine) == 2  # no other row, no row in the other arm
    assert "Period 1 of 2." in _shown(at)  # back at the second case
    _read_one(at, "Second case")

    # period 2 (the clock moved on: the stored times moved back): the first case again in
    # the other arm; from the second, back to it: its period-2 row changes, not period 1's
    for moved in session.exec(select(Response).where(Response.reader_id == invite.reader.id)):
        moved.submitted_at -= timedelta(days=14, seconds=1)
        session.add(moved)
    session.commit()
    at.run()
    assert "Period 2 of 2." in _shown(at)
    assert ("AI model's answer" in _shown(at)) == (not box)
    _read_one(at, "Period 2 reading")
    at.button(key="back").click().run()
    said = _shown(at)
    assert ("AI model's answer" in said) == (not box)
    panel_submit(at, diagnosis="Period 2 thought", likert=3)
    assert not at.exception
    session.expire_all()
    mine = {(r.case_id, r.arm): r for r in _mine(session)}
    other = "unaided" if box else "aided"
    again = mine[(first.case_id, other)]
    assert (again.diagnosis, again.likert, again.revision) == ("Period 2 thought", 3, 1)
    kept = mine[(first.case_id, first.arm)]
    assert (kept.diagnosis, kept.revision) == ("Second thought", 1)  # period 1's: final
