"""Issue 30: from a model run to a trustworthy leaderboard without leaving readerstudy.

The demo study, ``run-model`` against a stub model on 127.0.0.1, ``grade demo
--judge`` against a stub judge pair, then ``export``, ``score`` and the
leaderboard service the analyst page calls: no hand-made file on the way,
on SQLite and PostgreSQL, through the real CLI (``reader_app.cli.main``).
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import pandas as pd
import pytest
from sqlmodel import Session, col, select

from reader_app.analysis.data import check_scorable, study_data
from reader_app.analysis.leaderboard import build_leaderboard
from reader_app.analysis.leaderboard_view import leaderboard_html
from reader_app.cli import main
from reader_app.core.settings import Settings
from reader_app.grading.key import parse_key_csv
from reader_app.models import AuditEvent, ModelRun, Verdict
from reader_app.study.casebank import get_study
from scoring import ScoringParams
from tests.support.openai_stub import ChatRequest, OpenAIStub, Reply

# What the stub model answers, by the clinical history in its prompt (the demo's are distinct)
MODEL_REPLIES = {
    "Adult with cough and weight loss.": Reply.answer("Multiple pulmonary metastases", 4),  # key
    "Shoulder pain.": Reply.answer("Rotator cuff tear", 3),  # judges: incorrect
    "Ankle pain after a fall.": Reply.answer("Fibroxanthoma of the distal tibia", 2),  # judges
    "Write a report.": Reply(
        json.dumps({"findings": "Subdural collections.", "impression": "SDH"})
    ),
}
JUDGED = {"rotator cuff tear": "incorrect", "fibroxanthoma of the distal tibia": "correct"}


def model_reply(request: ChatRequest) -> Reply:
    for history, reply in MODEL_REPLIES.items():
        if history in request.text:
            return reply
    return Reply.idk()  # the head CT strip


def framed_candidate(text: str) -> str:
    """The candidate answer between the judge prompt's random-boundary frame lines."""
    found = re.search(r"<<<candidate (\w+)\n(.*)\n\1>>>", text, re.S)
    return found.group(2).strip() if found else ""


def judge_reply(request: ChatRequest) -> Reply:
    candidate = framed_candidate(request.text).lower()
    verdict = JUDGED.get(candidate, "incorrect")
    return Reply(json.dumps({"verdict": verdict, "reason": f"stub {request.model}"}))


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_demo_run_grade_with_judges_score_and_leaderboard(
    settings: Settings, session: Session, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert run_cli(capsys, "demo", "--no-serve")[0] == 0
    responses = tmp_path / "responses.csv"
    with OpenAIStub() as model, OpenAIStub() as judge:
        model.responder = model_reply
        judge.responder = judge_reply
        code, out, err = run_cli(
            capsys,
            *("run-model", "demo", "--endpoint", model.base_url, "--model", "stub-vlm"),
            *("--cohort", "open-weight", "--group", "Stub", "--quiet", "--backoff", "0.01"),
        )
        assert code == 0, err
        # the key grades one answer; two wait (no judges in the demo's study.toml)
        assert "by key 1" in out and "pending 2" in out
        assert judge.served() == 0

        # score refuses the ungraded rows and names the command that grades them
        code, _, err = run_cli(capsys, "export", "demo", "--raw", "-o", str(responses))
        assert code == 0, err
        code, _, err = run_cli(capsys, "score", str(responses), "--bootstrap", "0")
        assert code == 2
        assert "2 answered row(s) have no verdict" in err
        assert "readerstudy grade STUDY" in err and "readerstudy export STUDY --what key" in err

        # the key, as the file mode of grade reads it (synonyms kept)
        code, out, err = run_cli(capsys, "export", "demo", "--what", "key")
        assert code == 0, err
        key = parse_key_csv(out)
        assert "NOF" in key["tibia-cr"].synonyms
        assert key["chest-cr"].diagnosis == "Multiple pulmonary metastases"

        # --auto-only: the key and grade memory, no judge asked, the two still pending
        code, out, err = run_cli(
            capsys, "grade", "demo", "--auto-only", "--judge", judge.base_url, "judge-a",
            "--judge", judge.base_url, "judge-b",
        )  # fmt: skip
        assert code == 0, err
        assert "pending 2 (2 distinct answers)" in out and judge.served() == 0
        assert "wait for an adjudicator" in err

        code, out, err = run_cli(
            capsys,
            *("grade", "demo", "--judge", judge.base_url, "judge-a"),
            *("--judge", judge.base_url, "judge-b"),
        )
        assert code == 0, err
        assert "by key 1" in out and "by judge 2" in out and "pending 0" in out
        assert "2 distinct answers: 2 agreed" in out
        assert judge.served() == 4  # two answers x two judges
        assert {r.model for r in judge.requests} == {"judge-a", "judge-b"}

        # in grade memory and the audit log, so every later export sees them
        with Session(session.get_bind()) as fresh:
            judged = fresh.exec(select(Verdict).where(Verdict.source == "judge")).all()
            assert {(v.normalized_answer, v.correct) for v in judged} == {
                ("rotator cuff tear", 0),
                ("fibroxanthoma of the distal tibia", 1),
            }
            assert {v.decided_by for v in judged} == {"judge:judge-a+judge-b"}
            events = fresh.exec(
                select(AuditEvent).where(
                    AuditEvent.action == "verdict.record", AuditEvent.actor == "cli:grade"
                )
            ).all()
            assert len(events) == 2
            assert fresh.exec(select(ModelRun)).one().cohort == "open-weight"
        # again: nothing left to ask, nothing asked
        assert run_cli(capsys, "grade", "demo", "--judge", judge.base_url, "judge-a",
                       "--judge", judge.base_url, "judge-b")[0] == 0  # fmt: skip
        assert judge.served() == 4

    code, _, err = run_cli(capsys, "export", "demo", "--raw", "-o", str(responses))
    assert code == 0, err
    exported = pd.read_csv(responses, dtype=str, keep_default_na=False)
    assert set(exported["cohort"]) == {"open-weight"}
    assert set(exported["param_weight"]) == {"L+1"}
    code, out, err = run_cli(capsys, "score", str(responses), "--format", "json")
    assert code == 0, err
    report = json.loads(out)
    (vlm,) = report["responders"]
    assert (vlm["responder"], vlm["cohort"], vlm["group"]) == ("stub-vlm", "open-weight", "Stub")
    # chest +5 (L4), shoulder -4 (wrong L3), tibia +3 (L2), head strip IDK 0 over N = 4
    # (the report case is scored by the rubric): C = 1000 * (1 + 4 / 20) = 1200
    assert vlm["n_cases"] == 4
    assert vlm["radle_c"] == pytest.approx(1200.0)
    assert vlm["radle_a"] == pytest.approx(0.5)
    assert report["params"]["weight"] == "L+1"
    (cohort,) = report["cohort_pools"]
    assert (cohort["cohort"], cohort["runs"]) == ("open-weight", ["stub-vlm"])
    assert cohort["radle_c"] == pytest.approx(1200.0)
    # no reader in the pool: its figures are n/a, grounding included (not 0.000 [0, 0])
    assert report["human_pool"]["radle_c"] is None
    assert report["grounding"]["human_pool"]["grounding_rate"] is None
    assert report["grounding"]["human_pool"]["grounding_rate_ci_low"] is None

    # the leaderboard, as the analyst page builds it: the same numbers
    with Session(session.get_bind()) as fresh:
        study = get_study(session=fresh, slug="demo")
        assert study is not None
        data = study_data(session=fresh, study=study)
    cases = check_scorable(data)
    board = build_leaderboard(data.frame, cases, ScoringParams(), data.grounded_case_ids)
    assert board.cohorts == ("open-weight",)
    shown = board.arms(cohort="open-weight", cohort_pools=True)
    by_name = dict(zip(shown["name"], shown["radle_c"], strict=True))
    assert by_name["stub-vlm"] == pytest.approx(vlm["radle_c"])
    assert by_name["Cohort: open-weight"] == pytest.approx(cohort["radle_c"])
    ci = board.table.set_index("name").loc["stub-vlm", ["radle_c_ci_low", "radle_c_ci_high"]]
    assert list(ci) == pytest.approx([vlm["radle_c_ci_low"], vlm["radle_c_ci_high"]])
    html = leaderboard_html(board, cohort="open-weight")
    assert "model run · Stub · open-weight" in html and "cohort pool · 1 run(s)" in html
    assert board.arms(cohort="frontier", cohort_pools=True)["arm"].tolist() == []


def test_run_model_with_judges_grades_its_answers_as_they_arrive(
    settings: Settings, session: Session, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.factories import make_study

    make_study(session, settings.asset_dir, n_cases=3)
    order = iter(["Diagnosis number 0", "Number one, but spelled otherwise", "Something else"])
    verdicts = {"number one, but spelled otherwise": "correct", "something else": "incorrect"}
    with OpenAIStub() as stub:  # one server: the model and both judges, in arrival order

        def reply(request: ChatRequest) -> Reply:
            if request.model == "stub-vlm":
                return Reply.answer(next(order), 3)
            text = framed_candidate(request.text).lower()
            return Reply(json.dumps({"verdict": verdicts.get(text, "incorrect"), "reason": "x"}))

        stub.responder = reply
        code, out, err = run_cli(
            capsys,
            *("run-model", "study", "--endpoint", stub.base_url, "--model", "stub-vlm"),
            *("--concurrency", "1", "--quiet", "--backoff", "0.01", "--cohort", "frontier"),
            *("--judge", stub.base_url, "judge-a", "--judge", stub.base_url, "judge-b"),
        )
        assert code == 0, err
        asked = [r.model for r in stub.requests]
    # judges were asked between the model's answers, not only at the end
    assert asked.index("judge-a") < max(i for i, m in enumerate(asked) if m == "stub-vlm")
    assert asked.count("judge-a") == asked.count("judge-b") == 2
    assert "2 distinct answers asked, 2 agreed" in out
    assert "pending 0" in out
    with Session(session.get_bind()) as fresh:
        sources = fresh.exec(
            select(Verdict.source, Verdict.correct).where(col(Verdict.active))
        ).all()
        assert sorted(sources) == [("judge", 0), ("judge", 1), ("key", 1)]
        assert fresh.exec(select(ModelRun)).one().cohort == "frontier"
    # the cohort is a label: resuming the run with another one relabels it, asks nothing
    with OpenAIStub() as stub:
        code, out, err = run_cli(
            capsys, "run-model", "study", "--endpoint", stub.base_url, "--model", "stub-vlm",
            "--quiet", "--cohort", "  open   weight ",
        )  # fmt: skip
        assert code == 0, err
        assert stub.served() == 0
    with Session(session.get_bind()) as fresh:
        assert fresh.exec(select(ModelRun)).one().cohort == "open weight"


def test_a_study_naming_judges_this_server_lacks_still_runs_graded_by_the_key(
    settings: Settings,
    session: Session,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tests.factories import make_study

    monkeypatch.delenv("READERSTUDY_JUDGES", raising=False)
    make_study(
        session,
        settings.asset_dir,
        n_cases=2,
        config={"grading": {"judges": [{"name": "judge-a"}]}},
    )
    replies = iter(["Diagnosis number 0", "Something else"])
    with OpenAIStub() as stub:
        stub.responder = lambda request: Reply.answer(next(replies), 3)
        code, out, err = run_cli(
            capsys,
            *("run-model", "study", "--endpoint", stub.base_url, "--model", "stub-vlm"),
            *("--concurrency", "1", "--quiet", "--backoff", "0.01"),
        )
        assert code == 0, err
        assert {r.model for r in stub.requests} == {"stub-vlm"}  # no judge was asked
    assert "'judge-a' is not a judge this server defines" in err and "key and grade memory" in err
    assert "2/2 cases" in out
    with Session(session.get_bind()) as fresh:
        graded = fresh.exec(select(Verdict.source).where(col(Verdict.active))).all()
        assert graded == ["key"]  # "Diagnosis number 0" is case-000's key; the other waits


def test_run_model_judge_options_are_checked(
    settings: Settings, session: Session, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["run-model", "study", "--endpoint", "http://127.0.0.1:9/v1", "--model", "m"]
    three = [arg for name in "abc" for arg in ("--judge", "http://127.0.0.1:9/v1", name)]
    code, _, err = run_cli(capsys, *base, *three)
    assert code == 2 and "one or two judges" in err
    both = ["--judge", "http://127.0.0.1:9/v1", "a", "--judge", "http://127.0.0.1:9/v1", "b"]
    code, _, err = run_cli(capsys, *base, *both, "--no-autograde")
    assert code == 2 and "leave out --no-autograde" in err
    code, _, err = run_cli(capsys, "grade", "nope")
    assert code == 2 and "no study named 'nope'" in err
    code, _, err = run_cli(capsys, "grade", "responses.csv")
    assert code == 2 and "grade it with --key KEY.csv" in err
    help_text = io.StringIO()
    with pytest.raises(SystemExit), contextlib.redirect_stdout(help_text):
        main(["run-model", "--help"])
    assert "[[grading.judges]]" in help_text.getvalue() and "--cohort" in help_text.getvalue()
