"""`score --format json`'s ``comparisons`` reproduce iMRMC 2.1.2 (../shared/data/mrmc_reference)."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import pandas as pd
import pytest

from reader_app.commands import score
from tests.support.shared_data import shared_data


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    parser = argparse.ArgumentParser(prog="readerstudy")
    score.add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["score", *argv])
    code = args.func(args)
    out = capsys.readouterr()
    return code, out.out, out.err


def tidy_from_export(export: pd.DataFrame) -> pd.DataFrame:
    """The MRMC export back as the tidy responses frame `score` reads."""
    answered = export["status"] == "answered"
    return pd.DataFrame(
        {
            "responder": export["modality"]
            .str.removeprefix("model:")
            .where(export["kind"] == "model", export["reader"]),
            "kind": export["kind"],
            "group": export["group"],
            "case_id": export["case"].astype(str),
            "status": export["status"],
            "diagnosis": ["dx" if a else "" for a in answered],
            "likert": export["likert"].astype("Int64"),
            "correct": export["score"].astype("Int64").where(answered),
        }
    )


def test_comparisons_reproduce_imrmc(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    export = pd.read_csv(shared_data("mrmc_reference", "radle_scale_mrmc.csv"))
    reference = pd.read_csv(shared_data("mrmc_reference", "imrmc_reference.csv"))
    path = tmp_path / "responses.csv"
    tidy_from_export(export).to_csv(path, index=False)
    code, out, err = run_cli([str(path), "--format", "json", "--bootstrap", "20"], capsys)
    assert code == 0, err
    report = json.loads(out)
    got = {(c["model"], c["metric"]): c for c in report["comparisons"]}
    models = sorted(
        set(export.loc[export["kind"] == "model", "modality"].str.removeprefix("model:"))
    )
    assert len(models) == 16 and set(got) == {
        (m, k) for m in models for k in ("radle_a", "radle_c")
    }
    checked = 0
    for row in reference.itertuples():
        metric, scale, offset = (
            ("radle_a", 1.0, 0.0) if row.score == "score" else ("radle_c", 200.0, 1000.0)
        )
        if row.model == "(readers alone)":  # the pool with readers and cases random
            for entry in report["comparisons"]:
                if entry["metric"] == metric:
                    se = entry["pool_mrmc_se"] / scale
                    assert se**2 == pytest.approx(row.var_human, abs=1e-9, rel=0)
            continue
        # iMRMC gives human minus model on `score` (RadLE-A) and on `points`;
        # RadLE-C = 1000 (1 + mean points / 5) = 1000 + 200 mean points, so its
        # difference is 200 times the points' and its variance 200^2 times.
        entry = got[(row.model.removeprefix("model:"), metric)]
        assert entry["diff"] / scale == pytest.approx(-row.mean_diff, abs=1e-9, rel=0)
        assert (entry["mrmc_se"] / scale) ** 2 == pytest.approx(row.var_diff, abs=1e-9, rel=0)
        assert (entry["model_mrmc_se"] / scale) ** 2 == pytest.approx(
            row.var_model, abs=1e-9, rel=0
        )
        assert (entry["pool_mrmc_se"] / scale) ** 2 == pytest.approx(row.var_human, abs=1e-9, rel=0)
        assert (entry["model_value"] - offset) / scale == pytest.approx(row.mean_model, abs=1e-9)
        assert (entry["pool_value"] - offset) / scale == pytest.approx(row.mean_human, abs=1e-9)
        se = entry["mrmc_se"]
        assert entry["mrmc_ci_low"] == pytest.approx(entry["diff"] - 1.959963984540054 * se)
        assert entry["mrmc_ci_high"] == pytest.approx(entry["diff"] + 1.959963984540054 * se)
        assert entry["mrmc_p"] == pytest.approx(math.erfc(abs(entry["diff"]) / se / math.sqrt(2)))
        # the same difference as the responder rows (a complete design), and the
        # case bootstrap's interval beside it
        responder = next(r for r in report["responders"] if r["responder"] == entry["model"])
        assert entry["diff"] == pytest.approx(responder[f"{metric}_diff_vs_pool"], abs=1e-9)
        assert entry["boot_ci_low"] == responder[f"{metric}_diff_vs_pool_ci_low"]
        assert entry["boot_ci_high"] == responder[f"{metric}_diff_vs_pool_ci_high"]
        checked += 1
    assert checked == 6


def test_aid_mrmc_reproduces_imrmc(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An aided arm in which every reader's aided answer is the model's is iMRMC's
    two-modality input (the model repeated under every reader's id): the pool's aided
    minus unaided with readers and cases random is then model minus human."""
    export = pd.read_csv(shared_data("mrmc_reference", "radle_scale_mrmc.csv"))
    reference = pd.read_csv(shared_data("mrmc_reference", "imrmc_reference.csv"))
    tidy = tidy_from_export(export)
    humans = tidy[tidy["kind"] == "human"].assign(arm="unaided", aid_run="model-05")
    model = tidy[tidy["responder"] == "model-05"].drop(columns=["responder", "kind", "group"])
    aided = humans[["responder", "kind", "group", "case_id"]].merge(model, on="case_id")
    aided = aided.assign(arm="aided", aid_run="model-05")
    assert len(aided) == len(humans) == 12 * 200
    path = tmp_path / "responses.csv"
    models = tidy[tidy["kind"] == "model"]
    pd.concat([models, humans, aided]).to_csv(path, index=False)
    code, out, err = run_cli([str(path), "--format", "json", "--bootstrap", "20"], capsys)
    assert code == 0, err
    pool = next(e for e in json.loads(out)["aid"] if e["responder"] == "human_pool")
    assert (pool["mrmc_readers"], pool["mrmc_cases"]) == (12, 200)
    for row in reference[reference["model"] == "model:model-05"].itertuples():
        metric, scale = ("radle_a", 1.0) if row.score == "score" else ("radle_c", 200.0)
        assert pool[f"{metric}_diff_mrmc"] / scale == pytest.approx(-row.mean_diff, abs=1e-9, rel=0)
        assert (pool[f"{metric}_diff_mrmc_se"] / scale) ** 2 == pytest.approx(
            row.var_diff, abs=1e-9, rel=0
        )
        # a complete design: the pools' difference is the same, the bootstrap beside it
        assert pool[f"{metric}_diff"] == pytest.approx(pool[f"{metric}_diff_mrmc"], abs=1e-9)
        assert pool[f"{metric}_diff_ci_low"] < pool[f"{metric}_diff_ci_high"]
