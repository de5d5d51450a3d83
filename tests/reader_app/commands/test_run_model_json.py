"""``run-model --json strict|object`` (issue 40: Bench 2's "enforced as strict JSON"): the
request carries the response_format, its schema the prompt's own fields, and the run
records the mode."""

from __future__ import annotations

import json

import pytest
from sqlmodel import Session, select

from reader_app.cli import main
from reader_app.core.settings import Settings
from reader_app.llm.json_format import prompt_schema
from reader_app.llm.prompts import load_prompt
from reader_app.models import ModelRun
from tests.factories import make_study
from tests.reader_app.commands.test_run_model_cli import cli_args
from tests.support.openai_stub import OpenAIStub, Reply, openai_stub

__all__ = ["openai_stub"]


def test_json_strict_sends_the_prompt_schema_and_is_recorded(
    session: Session,
    settings: Settings,
    openai_stub: OpenAIStub,
    capsys: pytest.CaptureFixture[str],
) -> None:
    make_study(session, settings.asset_dir, n_cases=2)
    openai_stub.responder = lambda request: Reply.answer("Diagnosis number 0", 3)
    assert main(cli_args(openai_stub, "--json", "strict", "--quiet", "--no-autograde")) == 0
    capsys.readouterr()
    bodies = [r.body for r in openai_stub.requests]
    assert len(bodies) == 2
    for body in bodies:
        fmt = body["response_format"]
        assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
        schema = fmt["json_schema"]["schema"]
        # radle_v1 asks {"diagnosis": ..., "likert_score": 0-4 or null}
        assert schema["required"] == ["diagnosis", "likert_score"]
        assert schema["additionalProperties"] is False
        assert schema["properties"]["likert_score"]["type"] == ["integer", "null"]
    with Session(session.get_bind()) as fresh:
        run = fresh.exec(select(ModelRun)).one()
        assert json.loads(run.params_json)["json"] == "strict"


def test_json_object_and_none(
    session: Session,
    settings: Settings,
    openai_stub: OpenAIStub,
    capsys: pytest.CaptureFixture[str],
) -> None:
    make_study(session, settings.asset_dir, n_cases=1)
    openai_stub.responder = lambda request: Reply.answer("Diagnosis number 0", 3)
    args = ["--json", "object", "--quiet", "--no-autograde", "--name", "a"]
    assert main(cli_args(openai_stub, *args)) == 0
    assert openai_stub.requests[-1].body["response_format"] == {"type": "json_object"}
    assert main(cli_args(openai_stub, "--quiet", "--no-autograde", "--name", "b")) == 0
    assert "response_format" not in openai_stub.requests[-1].body  # the default sends none
    with Session(session.get_bind()) as fresh:
        params = {r.name: json.loads(r.params_json) for r in fresh.exec(select(ModelRun))}
    assert params["a"]["json"] == "object" and "json" not in params["b"]
    with pytest.raises(SystemExit) as refused:  # argparse: exit 2, the choices named
        main(cli_args(openai_stub, "--json", "loose"))
    assert refused.value.code == 2
    assert "--json" in capsys.readouterr().err


def test_schemas_follow_the_prompts() -> None:
    name, schema = prompt_schema(load_prompt("radle_grounded_v1"))
    assert name == "grounded_diagnosis"
    assert schema["required"] == ["diagnosis", "likert_score", "location"]
    assert schema["properties"]["location"]["required"] == ["slice", "x", "y"]
    name, schema = prompt_schema(load_prompt("bench2_v2"))
    assert (name, schema["required"]) == ("report", ["findings", "impression"])
