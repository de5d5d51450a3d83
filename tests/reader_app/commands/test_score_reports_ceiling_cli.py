"""``readerstudy score REPORTS.csv`` counts as Bench 2 does (issue 40): a report that is
"I don't know", failed or missing scores 0 (Fail) over every case of the file."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from reader_app.cli import main

CASES = [f"ct-{i:02d}" for i in range(1, 11)]


def reports_csv(path: Path) -> str:
    # the columns of `export --what reports` that scoring reads (status, rubric)
    rows = [("M", "model", "", "ct-01", "answered", 40)]
    rows += [("M", "model", "", c, "idk", None) for c in CASES[1:]]
    rows += [("R01", "human", "PGY2", c, "answered", 12) for c in CASES]
    rows += [("R02", "human", "PGY2", "ct-01", "answered", None)]  # waits for its judges
    columns = ["responder", "kind", "group", "case_id", "status", "rubric"]
    frame = pd.DataFrame(rows, columns=columns).astype({"rubric": "Int64"})
    frame.to_csv(path, index=False)
    return str(path)


def test_score_reports_counts_idk_as_fail(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = reports_csv(tmp_path / "reports.csv")
    assert main(["score", path, "--format", "json", "--bootstrap", "20"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ungraded_rows_left_out"] == 1
    rows = {r["responder"]: r for r in report["responders"]}
    # M: 40 + 9 * 0 of 10 * 40 -> 40 / 400 = 10%, nine Fails; judged only 40 / 40
    m = rows["M"]
    assert (m["total"], m["ceiling"], m["percent_of_ceiling"]) == (40, 400, 10.0)
    assert (m["n_fail"], m["n_counted_fail"], m["judged_percent_of_ceiling"]) == (9, 9, 100.0)
    # R01: 12 on all ten -> 120 / 400 = 30%, ranked above M
    assert (rows["R01"]["total"], rows["R01"]["percent_of_ceiling"]) == (120, 30.0)
    order = [r["responder"] for r in report["responders"]]
    assert order.index("R01") < order.index("M")
    # R02's one answer waits for a score: left out (not counted 0); the nine cases R02
    # has no row on are missing -> 0 of 9 * 40
    assert (rows["R02"]["total"], rows["R02"]["ceiling"], rows["R02"]["n_counted_fail"]) == (
        0,
        360,
        9,
    )
    assert main(["score", path, "--bootstrap", "20"]) == 0
    table = capsys.readouterr().out
    assert "I don't know, failed and missing reports 0 (Fail)" in table
    assert "40 / 400" in table and "120 / 400" in table
    assert "1 answered report(s) still waiting for a score were left out" in table
