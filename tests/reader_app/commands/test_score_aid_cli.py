"""`readerstudy score` on a responses file with an aided arm (SCORING.md section 10)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.reader_app.commands.test_score_cli import run_cli

HEADER = "responder,kind,group,case_id,status,diagnosis,likert,correct,arm,aid_run\n"
# Model m: case 1 wrong L4, case 2 correct L3. Reader r1 unaided right on 1, wrong on 2;
# aided: gives case 1 up (harmful, 1/1), takes the model's right answer on 2 (helpful, 1/1);
# net benefit (1 - 1) / 2 = 0.
AIDED = HEADER + (
    "m,model,,1,,CCF,4,0,,\n"
    "m,model,,2,,Mucocele,3,1,,\n"
    "r1,human,PGY2,1,,Mucocele,3,1,unaided,m\n"
    "r1,human,PGY2,2,,Polyp,2,0,unaided,m\n"
    "r1,human,PGY2,1,,CCF,4,0,aided,m\n"
    "r1,human,PGY2,2,,Mucocele,3,1,aided,m\n"
)


def test_json_has_the_aid_list(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "responses.csv"
    path.write_text(AIDED)
    code, out, err = run_cli([str(path), "--format", "json", "--bootstrap", "20"], capsys)
    assert code == 0, err
    data = json.loads(out)
    assert [e["responder"] for e in data["aid"]] == ["r1", "human_pool"]
    for e in data["aid"]:
        assert (e["harmful_switch_rate"], e["helpful_switch_rate"], e["net_benefit"]) == (1, 1, 0)
        assert e["n_aided_cases"] == 2
    names = {r["responder"] for r in data["responders"]}
    assert names == {"m", "r1", "r1 [aided]"}
    assert data["aided_pool"]["responder"] == "human_pool [aided]"


def test_table_lists_both_arms(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "responses.csv"
    path.write_text(AIDED)
    code, out, _ = run_cli([str(path), "--bootstrap", "0"], capsys)
    assert code == 0
    assert "r1 [aided]" in out and "human_pool [aided]" in out


def test_an_unknown_arm_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "responses.csv"
    path.write_text(AIDED.replace("aided,m\n", "helped,m\n", 1))
    code, _, err = run_cli([str(path), "--format", "json"], capsys)
    assert code == 2
    assert "unknown arm" in err


def test_a_responses_export_with_hits_scores(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The responses export of an aided study has a ``hit`` column: grounding is scored on
    the unaided rows (the aided ones would be a second row per reader and case)."""
    lines = AIDED.splitlines()
    path = tmp_path / "responses.csv"
    path.write_text("\n".join([lines[0] + ",hit", *(f"{row},1" for row in lines[1:])]) + "\n")
    code, out, err = run_cli([str(path), "--format", "json", "--bootstrap", "0"], capsys)
    assert code == 0, err
    data = json.loads(out)
    assert data["grounding"]["human_pool"]["n_grounded"] == 2
    assert [e["responder"] for e in data["aid"]] == ["r1", "human_pool"]
