"""``readerstudy score --input-format radle`` on a 200-case master in RadLE's real shape
(tests/support/radle_master.py: 12 readers named by ``provider``, two roles, seven
seniorities; three models on the board, a replaced one and an excluded one).

Every expected figure is derived by hand below from the blocks the generator writes;
points are SCORING.md's L + 1, C = 1000 (1 + sum(s) / (5 * 200)).
"""

from __future__ import annotations

import io
import json
import math
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from reader_app.cli import main
from tests.support.radle_master import master_csv

BOARD = ("alpha_1", "beta_med", "gamma_muse")


def h_v2(r: float, cov: float, d: float) -> float:
    """SCORING.md section 3: 100 x the harmonic mean of R, Cov and D."""
    return 300.0 / (1 / r + 1 / cov + 1 / d)


def reader_expected(k: int) -> dict[str, float]:
    # reader k: correct L4 x (80 + 5k), wrong L3 x 30, IDK x 10, wrong L1 x 10,
    # correct L2 x (70 - 5k).
    # sum(s) = 5 (80 + 5k) - 4 * 30 + 0 - 2 * 10 + 3 (70 - 5k) = 470 + 10k
    #   -> C = 1000 (1 + (470 + 10k) / 1000) = 1470 + 10k.
    # A = (80 + 5k + 70 - 5k) / 200 = 0.75.  R = (80 + 5k) / (110 + 5k).
    # E = 4 * 30 + 2 * 10 = 140 -> S = 100 (1 - 140 / 1000) = 86.
    # Cov = (110 + 5k) / 200; W = 40, W>=3 = 30 -> D = 10 / 40 = 0.25.
    r, cov = (80 + 5 * k) / (110 + 5 * k), (110 + 5 * k) / 200
    return {
        "radle_c": 1470.0 + 10 * k,
        "radle_a": 0.75,
        "radle_r": r,
        "radle_s": 86.0,
        "h_coverage": cov,
        "h_deferral": 0.25,
        "radle_h": h_v2(r, cov, 0.25),
        "idk_rate": 0.05,
        "n_failure": 0.0,
    }


def pool_expected(mean_k: float) -> dict[str, float]:
    # Every reader reads every case, so the pool's counts are the readers' mean counts
    # (weight 1/n per row, SCORING.md section 4): correct L4 80 + 5 mean_k, correct L2
    # 70 - 5 mean_k, the rest as each reader. Linear in k, so C is the mean of the Cs:
    # 1470 + 10 mean_k (12 readers: mean_k = 6.5 -> 1535; trainees R01-R06 3.5 -> 1505;
    # board-certified R07-R12 9.5 -> 1565).
    c4 = 80 + 5 * mean_k
    r, cov = c4 / (c4 + 30), (c4 + 30) / 200
    return {
        "radle_c": 1470.0 + 10 * mean_k,
        "radle_a": 0.75,
        "radle_r": r,
        "radle_s": 86.0,
        "radle_h": h_v2(r, cov, 0.25),
    }


MODELS: dict[str, dict[str, Any]] = {
    # alpha_1: correct L4 x120 (+600), correct L3 with an empty diagnosis x5, scored by
    # its verdict (+20), wrong L4 x30 (-150), wrong L1 x10 (-20), failures x10 (0: five
    # technical_failure, three PARSE_FAILED diagnoses, two PARSE_FAILED Likerts), IDK
    # x25 (0). sum = 450 -> C = 1450; A = 125/200; R = 125/155; E = 150 + 20 = 170 ->
    # S = 83; Cov = 155/200; W = 40, W>=3 = 30 -> D = 0.25.
    "alpha_1": {
        "radle_c": 1450.0, "radle_a": 0.625, "radle_r": 125 / 155, "radle_s": 83.0,
        "radle_h": h_v2(125 / 155, 155 / 200, 0.25), "n_failure": 10.0, "n_idk": 25.0,
        "group": "OpenAI", "cohort": "closed/general",
    },
    # beta_med: correct L4 x60 (+300), correct L2 x60 (+180), wrong L2 x40 (-120), wrong
    # L4 x20 (-100), IDK x20. sum = 260 -> C = 1260; A = 0.6; R = 60/80; E = 220 ->
    # S = 78; Cov = 80/200; W = 60, W>=3 = 20 -> D = 40/60;
    # H = 300 / (4/3 + 5/2 + 3/2) = 56.25.
    "beta_med": {
        "radle_c": 1260.0, "radle_a": 0.6, "radle_r": 0.75, "radle_s": 78.0,
        "radle_h": 56.25, "n_failure": 0.0, "n_idk": 20.0,
        "group": "Acme Med", "cohort": "open/medical",
    },
    # gamma_muse, Meta Muse Spark 1.1's counts (issue 40): correct 8, 14, 35 at L2-4,
    # wrong 7, 62, 45, 28 at L1-4, one failure. P = 24 + 56 + 175 = 255, E = 14 + 186 +
    # 180 + 140 = 520 -> C = 1000 (1 - 265/1000) = 735, the published value; A = 57/200;
    # S = 100 (1 - 520/1000) = 48; R = 49/122, Cov = 122/200, D = 69/142 -> H = 48.49,
    # RadLE's published 48.5.
    "gamma_muse": {
        "radle_c": 735.0, "radle_a": 0.285, "radle_r": 49 / 122, "radle_s": 48.0,
        "radle_h": h_v2(49 / 122, 122 / 200, 69 / 142), "n_failure": 1.0, "n_idk": 0.0,
        "group": "Meta", "cohort": "open/general",
    },
}  # fmt: skip


def score(tmp_path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> dict[str, Any]:
    path = tmp_path / "master.csv"
    if not path.exists():
        path.write_text(master_csv(), encoding="utf-8")
    args = ["score", str(path), "--input-format", "radle", "--format", "json", "--bootstrap", "0"]
    assert main([*args, *extra]) == 0, capsys.readouterr().err
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    return report


def check(row: dict[str, Any], expected: dict[str, Any], who: str) -> None:
    for key, value in expected.items():
        if isinstance(value, str):
            assert row[key] == value, (who, key)
        else:
            assert row[key] == pytest.approx(value, abs=1e-9), (who, key)


def test_score_reads_radle_real_shape_with_the_roster(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = score(tmp_path, capsys, "--exclude", "alpha_0")
    rows = {r["responder"]: r for r in report["responders"]}
    humans = sorted(r for r, row in rows.items() if row["kind"] == "human")
    assert humans == [f"R{k:02d}" for k in range(1, 13)]  # by provider, not "Trainee"
    assert sorted(r for r, row in rows.items() if row["kind"] == "model") == sorted(BOARD)
    for k in range(1, 13):
        row = rows[f"R{k:02d}"]
        check(row, reader_expected(k), row["responder"])
        assert row["group"] == ("trainees" if k <= 6 else "board-certified")
    for name, expected in MODELS.items():
        check(rows[name], expected, name)
    assert round(rows["gamma_muse"]["radle_h"], 2) == 48.49
    assert rows["gamma_muse"]["radle_c"] == pytest.approx(735.0)

    pool = report["human_pool"]
    assert pool["n_readers"] == 12
    check(pool, pool_expected(6.5), "pool")
    # the pool is the mean of the 12 readers' C (every reader read every case)
    assert pool["radle_c"] == pytest.approx(sum(1470 + 10 * k for k in range(1, 13)) / 12)
    groups = {g["group"]: g for g in pool["by_group"]}
    assert set(groups) == {"trainees", "board-certified"}
    assert groups["trainees"]["n_readers"] == groups["board-certified"]["n_readers"] == 6
    check(groups["trainees"], pool_expected(3.5), "trainees")
    check(groups["board-certified"], pool_expected(9.5), "board-certified")
    params = report["params"]
    assert (params["h_variant"], params["h_aggregate"]) == ("v2", "harmonic")


def test_score_radle_roster_file_excluded_access_and_bad_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Without a roster the replaced model (access left "closed") is on the board: 4 models.
    models = {r["responder"] for r in score(tmp_path, capsys)["responders"] if r["kind"] == "model"}
    assert models == {*BOARD, "alpha_0"}
    # A roster file does what --exclude does.
    roster = tmp_path / "roster.txt"
    roster.write_text("# replaced by alpha_1\nalpha_0\n\n", encoding="utf-8")
    report = score(tmp_path, capsys, "--exclude-file", str(roster))
    assert {r["responder"] for r in report["responders"] if r["kind"] == "model"} == set(BOARD)
    # access == excluded comes back only when asked; C of all wrong at L4 = 0.
    report = score(tmp_path, capsys, "--exclude", "alpha_0", "--include-excluded")
    rows = {r["responder"]: r for r in report["responders"]}
    assert rows["gone"]["radle_c"] == pytest.approx(0.0)
    assert math.isclose(rows["alpha_1"]["radle_c"], 1450.0)
    # A roster name that is no model of the file is refused, nothing printed.
    args = ["score", str(tmp_path / "master.csv"), "--input-format", "radle", "--exclude", "alpha"]
    assert main(args) == 2
    captured = capsys.readouterr()
    assert "alpha" in captured.err and "no model" in captured.err and captured.out == ""


def test_score_h_variant_v1_is_scored_and_recorded_in_json_csv_and_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--h-variant v1`` (issue 40): Muse's H is v1's 49.3, not the published 48.49, and
    every output format records the variant and the mean it brought."""
    # v1 for Muse: R = 49/122, Cov = 122/200, D = 1 - W>=3 / (N - C) = 1 - 73/143,
    # geometric mean -> 49.3 (SCORING.md section 3)
    muse_v1 = 100 * (49 / 122 * 122 / 200 * (1 - 73 / 143)) ** (1 / 3)
    report = score(tmp_path, capsys, "--exclude", "alpha_0", "--h-variant", "v1")
    rows = {r["responder"]: r for r in report["responders"]}
    assert rows["gamma_muse"]["radle_h"] == pytest.approx(muse_v1, abs=1e-9)
    assert round(rows["gamma_muse"]["radle_h"], 1) == 49.3
    assert rows["gamma_muse"]["radle_c"] == pytest.approx(735.0)  # C does not depend on H
    assert (report["params"]["h_variant"], report["params"]["h_aggregate"]) == ("v1", "geometric")

    master = str(tmp_path / "master.csv")
    base = ["score", master, "--input-format", "radle", "--bootstrap", "0", "--h-variant", "v1"]
    assert main([*base, "--format", "csv"]) == 0
    csv = pd.read_csv(io.StringIO(capsys.readouterr().out), keep_default_na=False)
    assert set(csv["param_h_variant"]) == {"v1"} and set(csv["param_h_aggregate"]) == {"geometric"}
    muse = csv[csv["responder"] == "gamma_muse"].iloc[0]
    assert muse["radle_h"] == pytest.approx(muse_v1, abs=1e-9)
    assert main([*base, "--format", "table"]) == 0
    table = capsys.readouterr().out
    assert "h_aggregate=geometric" in table and "h_variant=v1" in table
