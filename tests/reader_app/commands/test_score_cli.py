"""`readerstudy score`: output formats, options, and refusing ungraded input."""

from __future__ import annotations

import argparse
import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from reader_app.commands import score

ROOT = Path(__file__).resolve().parents[3]
SAMPLE = ROOT / "tests" / "scoring" / "io" / "data" / "radle_long_master_sample.csv"
HEADER = "responder,kind,group,case_id,status,diagnosis,likert,correct\n"
# r1 (human): correct L4, wrong L3 -> +5 -4 = 1 -> C = 1000 (1 + 1/10) = 1100
# m (model): correct L4, I don't know -> +5 + 0 = 5 -> C = 1000 (1 + 5/10) = 1500
GRADED = HEADER + (
    "r1,human,PGY2,1,,Mucocele,4,1\n"
    "r1,human,PGY2,2,,CCF,3,0\n"
    "m,model,,1,,Mucocele,4,1\n"
    "m,model,,2,,I don't know,,\n"
)


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    parser = argparse.ArgumentParser(prog="readerstudy")
    score.add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["score", *argv])
    code = args.func(args)
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def graded(tmp_path: Path) -> Path:
    path = tmp_path / "responses.csv"
    path.write_text(GRADED)
    return path


def test_json_contract(graded: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli([str(graded), "--format", "json", "--bootstrap", "50"], capsys)
    assert code == 0
    data = json.loads(out)
    assert set(data) == {"responders", "human_pool", "params", "comparisons"}
    by = {r["responder"]: r for r in data["responders"]}
    assert by["m"]["radle_c"] == pytest.approx(1500.0) and by["m"]["kind"] == "model"
    assert by["r1"]["radle_c"] == pytest.approx(1100.0) and by["r1"]["group"] == "PGY2"
    assert by["m"]["radle_r"] == pytest.approx(1.0)  # one answer at L >= 3, correct
    for key in ("n_cases", "radle_a", "radle_s", "radle_h", "idk_rate", "perm_p_vs_pool"):
        assert key in by["m"]
    assert data["human_pool"]["radle_c"] == pytest.approx(1100.0)
    assert data["params"]["scoring_spec_version"] == "2.0"
    assert data["params"]["n_boot"] == 50


def test_nan_is_null(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "r.csv"
    path.write_text(HEADER + "m,model,,1,,I don't know,,\n")
    code, out, _ = run_cli([str(path), "--format", "json", "--bootstrap", "0"], capsys)
    assert code == 0 and json.loads(out)["responders"][0]["radle_r"] is None


def test_params_options(graded: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = [str(graded), "--format", "json", "--bootstrap", "0", "--idk-score", "1",
            "--tau-high", "4", "--h-aggregate", "harmonic", "--min-completion", "0.5",
            "--seed", "3"]  # fmt: skip
    code, out, _ = run_cli(argv, capsys)
    assert code == 0
    data = json.loads(out)
    # idk_score 1: m = +5 + 1 = 6 -> C = 1600
    by = {r["responder"]: r for r in data["responders"]}
    assert by["m"]["radle_c"] == pytest.approx(1600.0)
    params = data["params"]
    assert (params["idk_score"], params["tau_high"], params["h_aggregate"]) == (1.0, 4, "harmonic")
    assert (params["min_completion"], params["n_boot"], params["seed"]) == (0.5, 0, 3)


def test_csv_rows(graded: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli([str(graded), "--format", "csv", "--bootstrap", "0"], capsys)
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 0
    assert [(r["responder"], r["kind"], r["group"]) for r in rows] == [
        ("m", "model", ""),
        ("r1", "human", "PGY2"),
        ("human_pool", "pool", ""),
        ("human_pool", "pool", "PGY2"),
    ]
    assert float(rows[0]["radle_c"]) == pytest.approx(1500.0)


def test_table(graded: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli([str(graded), "--bootstrap", "0"], capsys)
    assert code == 0 and "RadLE-C" in out and "human_pool[PGY2]" in out


def test_verdict_column(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "graded.csv"
    path.write_text(
        "responder,kind,case_id,diagnosis,likert,verdict\n"
        "m,model,1,CCF,4,correct\nm,model,2,X,2,incorrect\nm,model,3,I don't know,,pending\n"
    )
    code, out, _ = run_cli([str(path), "--format", "json", "--bootstrap", "0"], capsys)
    # +5 -3 + 0 = 2 over 3 cases -> C = 1000 (1 + 2/15)
    assert code == 0
    assert json.loads(out)["responders"][0]["radle_c"] == pytest.approx(1000 * (1 + 2 / 15))


def test_ungraded_rows_exit_non_zero(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "ungraded.csv"
    path.write_text(
        "responder,kind,case_id,diagnosis,likert,verdict\n"
        "m,model,1,CCF,4,pending\nm,model,2,X,2,\nm,model,3,I don't know,,\n"
    )
    code, out, err = run_cli([str(path), "--format", "json"], capsys)
    assert code != 0 and out == ""
    assert "m/1" in err and "m/2" in err and "m/3" not in err


def test_no_correct_column_at_all(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "raw.csv"
    path.write_text("responder,kind,case_id,diagnosis,likert\nm,model,1,CCF,4\n")
    code, _, err = run_cli([str(path)], capsys)
    assert code != 0 and "m/1" in err


def test_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli([str(tmp_path / "nope.csv")], capsys)
    assert code == 2 and "error" in err


def test_radle_input_and_case_list(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = [str(SAMPLE), "--input-format", "radle", "--format", "json", "--bootstrap", "0"]
    code, out, _ = run_cli(argv, capsys)
    assert code == 0 and len(json.loads(out)["responders"]) == 6  # excluded rows dropped
    code, out, _ = run_cli([*argv, "--include-excluded"], capsys)
    assert len(json.loads(out)["responders"]) == 9
    cases = tmp_path / "cases.txt"
    cases.write_text("case_id\n1\n2\n")
    code, out, _ = run_cli([*argv, "--cases", str(cases)], capsys)
    gpt = next(r for r in json.loads(out)["responders"] if r["responder"] == "gpt_5_5")
    assert gpt["n_cases"] == 2 and gpt["radle_c"] == pytest.approx(1500.0)  # +5 over N = 2


def _cli_has_score() -> bool:
    try:
        from reader_app import cli
    except ImportError:
        return False
    return "score" in getattr(cli, "COMMAND_MODULES", ())


@pytest.mark.skipif(not _cli_has_score(), reason="reader_app.cli does not list `score` yet")
def test_through_the_real_cli(graded: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "reader_app.cli", "score", str(graded), "--format", "json",
         "--bootstrap", "20"],
        capture_output=True, text=True, cwd=ROOT, check=True,
    )  # fmt: skip
    assert json.loads(out.stdout)["human_pool"]["radle_c"] == pytest.approx(1100.0)


def test_every_option_is_documented() -> None:
    parser = argparse.ArgumentParser(prog="readerstudy")
    sub = parser.add_subparsers(dest="command")
    score.add_parser(sub)
    docs = (ROOT / "docs" / "scoring.md").read_text()
    assert "readerstudy score" in docs
    for action in sub.choices["score"]._actions:
        for option in action.option_strings:
            if option not in ("-h", "--help"):
                assert option in docs, f"{option} is not in docs/scoring.md"
