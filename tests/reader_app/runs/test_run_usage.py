"""Tokens, cost, latency and reasoning text of a model run (issue 41).

A reply with reasoning and cached tokens, a float cost and reasoning text keeps
them all, from the HTTP body to the database and the exports; the cost table
prices the replies whose provider reported no cost with ``--price-in`` /
``--price-out``, and divides by the graded correct answers.
"""

from __future__ import annotations

import json

import pytest
from sqlmodel import Session, select

from reader_app.analysis.exports import export_frame
from reader_app.analysis.model_runs import run_replies, run_usage
from reader_app.cli import main
from reader_app.core.settings import Settings
from reader_app.llm.reply import parse_completion
from reader_app.models import Case, CaseImage, ModelRun, Response, Study
from reader_app.runs.usage import Price, PriceError, load_prices, usage_summary
from tests.factories import make_study
from tests.support.openai_stub import OpenAIStub, Reply, completion, openai_stub

__all__ = ["openai_stub"]

REASONING = "The apex shows a visceral pleural line\nwith no lung markings beyond it."
RICH_USAGE = {
    "prompt_tokens": 1200,
    "completion_tokens": 800,
    "total_tokens": 2000,
    "completion_tokens_details": {"reasoning_tokens": 600},
    "prompt_tokens_details": {"cached_tokens": 1024},
    "cost": 0.0123,
}


def test_a_reply_keeps_reasoning_and_cached_tokens_cost_and_reasoning_text() -> None:
    body = completion("r1", '{"diagnosis": "Pneumothorax", "likert_score": 3}')
    body["usage"] = RICH_USAGE
    body["choices"][0]["message"]["reasoning_content"] = REASONING
    reply = parse_completion(json.dumps(body).encode(), latency_s=1.23456, attempts=1)
    assert reply.usage == {
        "prompt_tokens": 1200,
        "completion_tokens": 800,
        "total_tokens": 2000,
        "reasoning_tokens": 600,
        "cached_tokens": 1024,
    }
    assert reply.cost == 0.0123
    assert reply.reasoning == REASONING
    assert reply.latency_s == 1.2346


@pytest.mark.parametrize(
    ("cost", "kept"),
    [(0.5, 0.5), (2, 2.0), (True, None), ("0.5", None), (-1.0, None), (1e12, None), (10**12, None)],
)
def test_only_a_finite_non_negative_number_is_a_cost(cost: object, kept: float | None) -> None:
    body = completion("m", "x")
    body["usage"]["cost"] = cost
    reply = parse_completion(json.dumps(body).encode(), latency_s=0, attempts=1)
    assert reply.cost == kept
    assert "cost" not in reply.usage  # a refused cost never passes for a token count


def test_reasoning_field_of_other_providers() -> None:
    body = completion("m", "x")
    body["choices"][0]["message"]["reasoning"] = "thought"
    assert parse_completion(json.dumps(body).encode(), latency_s=0, attempts=1).reasoning == (
        "thought"
    )


def test_latency_percentiles_and_cost_by_hand() -> None:
    # latencies 0.1, 0.2, 0.3, 0.4 with numpy's linear interpolation:
    # p50 at position 0.5 * 3 = 1.5 -> 0.2 + 0.5 * 0.1 = 0.25;
    # p95 at position 0.95 * 3 = 2.85 -> 0.3 + 0.85 * 0.1 = 0.385
    metas = [
        {"prompt_tokens": 1000, "completion_tokens": 200, "latency_s": 0.1},
        {"prompt_tokens": 1000, "completion_tokens": 200, "latency_s": 0.2},
        {"prompt_tokens": 1000, "completion_tokens": 200, "latency_s": 0.3, "cost": 0.01},
        {"prompt_tokens": 1000, "completion_tokens": 200, "latency_s": 0.4},
    ]
    # three priced calls: (1000 * 2.5 + 200 * 10) / 1e6 = 0.0045 each; one reported 0.01
    out = usage_summary(metas, price=Price(2.5, 10.0), correct=2)
    assert out["latency_p50_s"] == 0.25 and out["latency_p95_s"] == 0.385
    assert out["cost"] == pytest.approx(3 * 0.0045 + 0.01)
    assert out["cost_source"] == "price+provider"
    assert out["cost_per_correct"] == pytest.approx((3 * 0.0045 + 0.01) / 2)
    unpriced = usage_summary(metas, correct=0)
    assert unpriced["cost"] == 0.01 and unpriced["cost_per_correct"] is None
    assert unpriced["calls_without_cost"] == 3


def test_prices_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "prices.toml"
    path.write_text('["stub-vlm"]\ninput = 2.5\noutput = 10\n')
    assert load_prices(path) == {"stub-vlm": Price(2.5, 10.0)}
    path.write_text('["stub-vlm"]\ninput = "cheap"\noutput = 10\n')
    with pytest.raises(PriceError, match="must be numbers"):
        load_prices(path)
    with pytest.raises(PriceError, match=r"0\.\.1e6"):
        Price(-1.0, 1.0)


def case_index_by_image(session: Session) -> dict[str, int]:
    """Image sha256 -> the case's number (``case-002`` -> 2): the stub answers by case."""
    return {
        sha: int(source.split("-")[1])
        for sha, source in session.exec(
            select(CaseImage.sha256, Case.source_id).join(Case, Case.id == CaseImage.case_id)  # type: ignore[arg-type]
        ).all()
    }


def _study(session: Session) -> Study:
    return session.exec(select(Study)).one()


def test_a_run_stores_usage_cost_and_reasoning_and_the_cost_table_prices_the_rest(
    session: Session,
    settings: Settings,
    openai_stub: OpenAIStub,
    capsys: pytest.CaptureFixture[str],
) -> None:
    make_study(session, settings.asset_dir, n_cases=3)
    plain = {"prompt_tokens": 1000, "completion_tokens": 200, "total_tokens": 1200}
    answers = {  # by the first image's bytes -> which case; one answer each, in any order
        0: Reply(
            Reply.answer("Diagnosis number 0", 3).content, usage=RICH_USAGE, reasoning=REASONING
        ),
        1: Reply(Reply.answer("Diagnosis number 1", 2).content, usage=plain),
        2: Reply(Reply.idk().content, usage=plain),
    }
    case_of = case_index_by_image(session)
    openai_stub.responder = lambda request: answers[case_of[request.image_sha256[0]]]
    code = main(
        [
            "run-model",
            "study",
            "--endpoint",
            openai_stub.base_url,
            "--model",
            "stub-vlm",
            "--price-in",
            "2.5",
            "--price-out",
            "10",
            "--quiet",
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    # the provider's 0.0123 for case 0; cases 1 and 2 priced:
    # (1000 * 2.5 + 200 * 10) / 1e6 = 0.0045 each -> 0.0123 + 0.009 = 0.0213
    assert "cost $0.0213 (price+provider)" in out
    with Session(session.get_bind()) as fresh:
        run = fresh.exec(select(ModelRun)).one()
        rows = {r.case_id: r for r in fresh.exec(select(Response)).all()}
        first = next(r for r in rows.values() if r.diagnosis == "Diagnosis number 0")
        meta = json.loads(first.meta_json)
        assert meta["reasoning_tokens"] == 600 and meta["cached_tokens"] == 1024
        assert meta["prompt_tokens"] == 1200 and meta["completion_tokens"] == 800
        assert meta["cost"] == 0.0123 and meta["latency_s"] > 0
        assert first.reasoning_text == REASONING
        assert first.raw_reply is not None and REASONING not in first.raw_reply
        totals = json.loads(run.totals_json)
        assert totals["reasoning_tokens"] == 600 and totals["cached_tokens"] == 1024
        assert totals["prompt_tokens"] == 1200 + 2 * 1000
        assert totals["price_in"] == 2.5 and totals["price_out"] == 10.0
        study = _study(fresh)
        assert study.id is not None
        table = run_usage(session=fresh, study_id=study.id)
        row = table.iloc[0]
        # two answers matched the key (cases 0 and 1), the IDK is no answer:
        # 0.0213 / 2 = 0.01065 per correct answer
        assert row["correct"] == 2
        assert row["cost"] == pytest.approx(0.0213)
        assert row["cost_per_correct"] == pytest.approx(0.01065)
        # a prices file's row wins over the recorded price: 0.0123 + 2 * (1000 * 1 + 200 * 2) / 1e6
        cheap = run_usage(session=fresh, study_id=study.id, prices={"stub-vlm": Price(1.0, 2.0)})
        assert cheap.iloc[0]["cost"] == pytest.approx(0.0123 + 2 * 0.0014)
        replies = run_replies(session=fresh, study_id=study.id)
        mine = replies[replies["reasoning_text"].notna()]
        assert list(mine["reasoning_text"]) == [REASONING]
        assert list(mine["cost_source"]) == ["provider"]
        exported = export_frame("runs", session=fresh, study=study)
        assert exported.iloc[0]["cost_per_correct"] == pytest.approx(0.01065)
        assert exported.iloc[0]["latency_p95_s"] >= exported.iloc[0]["latency_p50_s"] > 0
        assert "reasoning_text" in export_frame("run-replies", session=fresh, study=study)


def test_half_a_price_is_refused_and_nothing_runs(
    session: Session,
    settings: Settings,
    openai_stub: OpenAIStub,
    capsys: pytest.CaptureFixture[str],
) -> None:
    make_study(session, settings.asset_dir, n_cases=2)
    args = ["run-model", "study", "--endpoint", openai_stub.base_url, "--model", "m"]
    assert main([*args, "--price-in", "2.5", "--quiet"]) == 2
    assert "--price-in and --price-out together" in capsys.readouterr().err
    assert openai_stub.served() == 0
    with Session(session.get_bind()) as fresh:
        assert fresh.exec(select(ModelRun)).all() == []
