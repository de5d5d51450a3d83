"""Issue 30: ``import-run --format radle`` keeps RadLE's cohorts, and with ``weight L``
the points reproduce the file's own ``weighted_score`` column for every answered row."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pytest
from sqlmodel import Session, select

from reader_app.cli import main
from reader_app.core.settings import Settings
from reader_app.models import ModelRun
from tests.factories import make_study

SAMPLE = Path(__file__).resolve().parents[2] / "scoring/io/data/radle_long_master_sample.csv"
COHORTS = {  # access/domain of each candidate in the shared sample
    "gpt_5_5": "closed/general",
    "claude_4_8_opus": "excluded/excluded",
    "gemini_3_1_pro": "closed/general",
    "grok_4_20": "excluded/excluded",
    "qwen_3_7_plus": "closed/general",
    "gemma_4_31b": "open/general",
    "llama_4_maverick": "open/general",
    "mistral_large_3_2512": "open/general",
    "glm_4_6v": "excluded/excluded",
}


@pytest.fixture
def radle_study(session: Session, settings: Settings) -> str:
    make_study(
        session, settings.asset_dir, n_cases=1, slug="radle", source_ids=["1"],
        diagnoses=["Carotid-cavernous fistula"],
    )  # fmt: skip
    return "radle"


def test_radle_import_keeps_cohorts_and_weight_l_gives_back_weighted_score(
    radle_study: str,
    session: Session,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    argv = ["import-run", str(SAMPLE), "--format", "radle", "--study", radle_study]
    assert main([*argv, "--include-excluded"]) == 0, capsys.readouterr().err
    capsys.readouterr()
    with Session(session.get_bind()) as fresh:
        runs = {r.name: r.cohort for r in fresh.exec(select(ModelRun)).all()}
    assert runs == COHORTS

    # the MRMC export's points, with the RadLE weight, are the file's weighted_score
    assert main(["export", radle_study, "--what", "mrmc", "--weight", "L", "--raw"]) == 0
    mrmc = pd.read_csv(io.StringIO(capsys.readouterr().out), dtype=str, keep_default_na=False)
    source = pd.read_csv(SAMPLE, dtype=str, keep_default_na=False)
    answered = source[source["weighted_score"] != ""]
    assert len(answered) == 8  # nine rows, one "I don't know"
    points = dict(zip(mrmc["reader"], mrmc["points"], strict=True))
    for candidate, expected in zip(answered["candidate"], answered["weighted_score"], strict=True):
        assert float(points[candidate]) == float(expected), candidate
    assert set(mrmc["param_weight"]) == {"L"}
    assert dict(zip(mrmc["reader"], mrmc["cohort"], strict=True)) == COHORTS
    # the default weight is SCORING.md's L + 1: a correct L4 is 5 there, not 4
    assert main(["export", radle_study, "--what", "mrmc", "--raw"]) == 0
    default = pd.read_csv(io.StringIO(capsys.readouterr().out), dtype=str)
    assert float(default.set_index("reader").loc["gpt_5_5", "points"]) == 5.0

    # score says which weight it used, and pools each cohort
    responses = tmp_path / "responses.csv"
    assert main(["export", radle_study, "--raw", "-o", str(responses)]) == 0
    score = ["score", str(responses), "--weight", "L", "--bootstrap", "0"]
    assert main([*score, "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["params"]["weight"] == "L"
    cohorts = {r["responder"]: r["cohort"] for r in report["responders"]}
    assert cohorts == COHORTS
    pools = {p["cohort"]: p for p in report["cohort_pools"]}
    # open/general: gemma correct L3 (+3), llama and mistral wrong L3 (-3 each), one case:
    # the pool's points (3 - 3 - 3) / 3 = -1 -> C = 1000 * (1 - 1 / 4) = 750 under weight L
    assert pools["open/general"]["radle_c"] == pytest.approx(750.0)
    assert pools["open/general"]["runs"] == [
        "gemma_4_31b",
        "llama_4_maverick",
        "mistral_large_3_2512",
    ]
    # closed/general: three correct L4 -> 2000
    assert pools["closed/general"]["radle_c"] == pytest.approx(2000.0)
    # the table shows the cohort column and the cohort pools
    assert main(score) == 0
    table = capsys.readouterr().out
    assert "cohort_pool[open/general]" in table and "weight=L" in table


def test_radle_import_refuses_a_cohort_option(
    radle_study: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["import-run", str(SAMPLE), "--study", radle_study, "--cohort", "frontier"]
    assert main(argv) == 2
    assert "names each run's cohort" in capsys.readouterr().err
