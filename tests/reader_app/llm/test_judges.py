"""The server's judges file (``READERSTUDY_JUDGES``): strict, and the one place judges are."""

from __future__ import annotations

from pathlib import Path

import pytest

from reader_app.llm.judges import (
    JudgeConfig,
    JudgeSetupError,
    key_env,
    parse_judges_file,
    resolve_judges,
    server_judges,
)
from reader_app.llm.request import request_params


def test_a_judges_file_with_request_settings() -> None:
    judges = parse_judges_file(
        '[judge-a]\nurl = "http://127.0.0.1:8000/v1"\nmodel = "qwen"\ntemperature = "none"\n'
        'max_tokens = 4000\nextra = { reasoning_effort = "high" }\ntimeout_s = 60\n'
        '[judge_b]\nurl = "https://api.example.org/v1"\nmodel = "gpt"\n'
        'extra = \'{"max_tokens": null, "max_completion_tokens": 900}\'\n'
    )
    a, b = judges["judge-a"], judges["judge_b"]
    assert (a.name, a.model, a.timeout_s, a.api_key_env) == (
        "judge-a",
        "qwen",
        60.0,
        "READERSTUDY_JUDGE_KEY_JUDGE_A",
    )
    assert a.params(600) == {"max_tokens": 4000, "reasoning_effort": "high"}  # no temperature
    assert b.params(600) == {"temperature": 0.0, "max_completion_tokens": 900}  # null drops
    assert JudgeConfig(url="http://h/v1", model="m").params(200) == {
        "temperature": 0.0,
        "max_tokens": 200,
    }


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[a]\nmodel = 'm'", r"a\.url: required"),
        ("[a]\nurl = 'ftp://x'\nmodel = 'm'", r"a\.url: endpoint must be an http"),
        ("[a]\nurl = 'http://x'\nmodel = 'm'\napi_key_env = 'HOME'", r"a\.api_key_env: unknown"),
        ("[a]\nurl = 'http://x'\nmodel = 'm'\ntemperature = 'hot'", r"a\.temperature: must be"),
        ("[a]\nurl = 'http://x'\nmodel = 'm'\ntemperature = 9", r"a\.temperature: must be 0\.\.2"),
        ("[a]\nurl = 'http://x'\nmodel = 'm'\nmax_tokens = 0", r"a\.max_tokens"),
        ("[a]\nurl = 'http://x'\nmodel = 'm'\nextra = '[1]'", r"a\.extra: must be a table"),
        ("[a]\nurl = 'http://x'\nmodel = 'm'\nextra = {model = 'x'}", "'model' cannot be set"),
        ("[a]\nurl = 'http://x'\nmodel = 'm'\ntimeout_s = -1", r"a\.timeout_s"),
        ("[a]\nurl = 'http://x'\nmodel = 'm'\nextra = {at = 1979-05-27}", "JSON values only"),
        ("['a b']\nurl = 'http://x'\nmodel = 'm'", "a judge name is"),
        (
            "[a-b]\nurl = 'http://x'\nmodel = 'm'\n[a_b]\nurl = 'http://x'\nmodel = 'm'",
            "share the key variable READERSTUDY_JUDGE_KEY_A_B",
        ),
        ("[a", "not valid TOML"),
    ],
)
def test_a_bad_judges_file_names_the_setting(text: str, message: str) -> None:
    with pytest.raises(JudgeSetupError, match=message):
        parse_judges_file(text)


def test_names_resolve_only_against_the_server(tmp_path: Path) -> None:
    path = tmp_path / "judges.toml"
    path.write_text('[judge-a]\nurl = "http://127.0.0.1:9/v1"\nmodel = "m"\n')
    env = {"READERSTUDY_JUDGES": str(path)}
    assert [j.name for j in resolve_judges(["judge-a"], env)] == ["judge-a"]
    with pytest.raises(JudgeSetupError, match=r"grading.judges\[1\].name: 'judge-b' is not"):
        resolve_judges(["judge-a", "judge-b"], env)
    with pytest.raises(JudgeSetupError, match="defined: none; see READERSTUDY_JUDGES"):
        resolve_judges(["judge-a"], {})
    assert server_judges({}) == {} and resolve_judges([], {}) == ()
    with pytest.raises(JudgeSetupError, match="cannot read"):
        server_judges({"READERSTUDY_JUDGES": str(tmp_path / "missing.toml")})
    assert key_env("judge-a") == "READERSTUDY_JUDGE_KEY_JUDGE_A"


def test_one_request_rule_for_runs_and_judges() -> None:
    from reader_app.runs.record import RunSpec

    spec = RunSpec(name="m", model="m", temperature=None, extra={"top_p": 0.9, "seed": None})
    assert spec.sampling() == {"max_tokens": 4096, "top_p": 0.9}
    assert spec.sampling() == request_params(
        temperature=None, seed=0, max_tokens=4096, extra={"top_p": 0.9, "seed": None}
    )
