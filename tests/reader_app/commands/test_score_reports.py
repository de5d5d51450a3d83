"""``readerstudy score`` on report rows prints the rubric summary (SCORING.md section 6);
an empty file and a file without rows are refused (exit 2, "readerstudy: ...")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reader_app.cli import main

# R01: 36, 20, 30 (total 86 of 120); R02: 30, 26 and "I don't know", which Bench 2 counts
# 0 (56 of 120; judged only 56 of 80); model M: 10, 40, 5 (55 of 120)
# pool per case: ct-01 (36 + 30) / 2 = 33, ct-02 (20 + 26) / 2 = 23, ct-03 (30 + 0) / 2 = 15
# -> 71 / 3
REPORTS = """responder,kind,group,case_id,status,findings,impression,likert,idk,rubric,tier
R01,human,,ct-01,answered,"=A, b\nc",Imp,3,False,36,Strong
R01,human,,ct-02,answered,x,y,2,False,20,Mixed
R01,human,,ct-03,answered,x,y,2,False,30,Solid
R02,human,,ct-01,answered,x,y,2,False,30,Solid
R02,human,,ct-02,answered,x,y,2,False,26,Solid
R02,human,,ct-03,idk,,,,True,,
M,model,,ct-01,answered,x,y,,False,10,Poor
M,model,,ct-02,answered,x,y,,False,40,Exceptional
M,model,,ct-03,answered,x,y,,False,5,Fail
"""


def _file(tmp_path: Path, text: str, name: str = "reports.csv") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_report_rows_get_the_rubric_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _file(tmp_path, REPORTS)
    assert main(["score", path, "--format", "json", "--bootstrap", "200"]) == 0
    out = json.loads(capsys.readouterr().out)
    rows = {r["responder"]: r for r in out["responders"]}
    assert out["ungraded_rows_left_out"] == 0  # the IDK is no row waiting for a score
    r01 = rows["R01"]
    assert (r01["n_cases"], r01["total"], r01["ceiling"]) == (3, 86, 120)
    assert r01["percent_of_ceiling"] == pytest.approx(100 * 86 / 120)
    assert r01["mean"] == pytest.approx(86 / 3) and r01["median"] == 30
    # sample SD of 36, 20, 30: mean 28.667, squares 53.78 + 75.11 + 1.78 = 130.67 / 2
    assert r01["sd"] == pytest.approx((130.6667 / 2) ** 0.5, abs=1e-3)
    assert (r01["min"], r01["max"], r01["n_strong"], r01["n_mixed"], r01["n_solid"]) == (
        20, 36, 1, 1, 1
    )  # fmt: skip
    assert r01["mean_ci_low"] <= r01["mean"] <= r01["mean_ci_high"]
    r02 = rows["R02"]
    assert (r02["total"], r02["n_cases"], r02["ceiling"], r02["n_fail"]) == (56, 3, 120, 1)
    assert (r02["judged_total"], r02["judged_ceiling"], r02["n_counted_fail"]) == (56, 80, 1)
    pool = rows["human pool"]
    assert pool["mean"] == pytest.approx(71 / 3)
    model = rows["M"]
    assert (model["n_exceptional"], model["n_poor"], model["n_fail"]) == (1, 1, 1)
    (comparison,) = out["comparisons"]
    # d = (10 - 33, 40 - 23, 5 - 15) = (-23, 17, -10): mean -16 / 3
    assert comparison["model"] == "M" and comparison["diff"] == pytest.approx(-16 / 3)

    assert main(["score", path, "--bootstrap", "200"]) == 0
    table = capsys.readouterr().out
    assert "Report rubric (0-40 per report" in table and "human pool" in table
    assert "86 / 120" in table and "Each model minus the human pool" in table
    assert "56 / 120" in table and "still waiting for a score" not in table
    assert "RadLE" not in table and "1000" not in table  # not the diagnosis metrics


def test_an_empty_file_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _file(tmp_path, "")
    assert main(["score", path]) == 2
    assert capsys.readouterr().err == f"readerstudy: {path} is empty: nothing to score\n"


def test_a_reports_file_with_no_score_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    header_only = _file(tmp_path, REPORTS.splitlines()[0] + "\n")
    assert main(["score", header_only]) == 2
    assert "has no rows: nothing to score" in capsys.readouterr().err
    unjudged = _file(
        tmp_path, REPORTS.splitlines()[0] + "\nR01,human,,ct-01,answered,x,y,3,False,,\n", "u.csv"
    )
    assert main(["score", unjudged]) == 2
    err = capsys.readouterr().err
    assert err.startswith("readerstudy: ") and "1 answered report(s), none with a score yet" in err


def test_a_bad_score_is_named_by_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _file(tmp_path, REPORTS.replace(",10,Poor", ",41,Poor"))
    assert main(["score", path]) == 2
    assert "bad line(s) 8" in capsys.readouterr().err


def test_a_diagnosis_export_with_no_rows_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _file(tmp_path, "responder,kind,group,case_id,status,diagnosis,likert,correct\n")
    assert main(["score", path]) == 2
    assert capsys.readouterr().err == f"readerstudy: {path} has no rows: nothing to score\n"
