"""Tokens, cost and latency of a model run, from its stored replies' metadata.

Each reply's ``meta_json`` holds what the provider reported (runner.reply_outcome):
``prompt_tokens``, ``completion_tokens``, ``total_tokens``, ``reasoning_tokens``
(``completion_tokens_details``), ``cached_tokens`` (``prompt_tokens_details``),
``cost`` (``usage.cost``, when the provider reports one) and ``latency_s``.

Cost of a call: the provider's ``cost`` when it reported one, else the tokens at
a price (``Price``: US dollars per million input and output tokens, from
``--price-in`` / ``--price-out`` or a prices file), else unknown. Reasoning
tokens are part of ``completion_tokens`` (OpenAI's accounting), so they are
priced as output once, never twice. A run's ``cost_source`` says which:
``provider``, ``price``, ``provider+price`` (some of each) or ``none``.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from reader_app.core.errors import ReaderStudyError

TOKEN_KEYS = (
    "prompt_tokens",
    "completion_tokens",
    "reasoning_tokens",
    "cached_tokens",
    "total_tokens",
)


class PriceError(ReaderStudyError, ValueError):
    """A price or prices file that cannot be used; the message names it."""


@dataclass(frozen=True)
class Price:
    """US dollars per million prompt (input) and completion (output) tokens."""

    input_per_mtok: float
    output_per_mtok: float

    def __post_init__(self) -> None:
        for name, value in (("input", self.input_per_mtok), ("output", self.output_per_mtok)):
            if not math.isfinite(value) or not 0 <= value < 1e6:
                raise PriceError(f"price per million {name} tokens must be 0..1e6, not {value}")

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (
            prompt_tokens * self.input_per_mtok + completion_tokens * self.output_per_mtok
        ) / 1e6

    def to_dict(self) -> dict[str, float]:
        return {"price_in": self.input_per_mtok, "price_out": self.output_per_mtok}


def price_from_options(price_in: float | None, price_out: float | None) -> Price | None:
    """``--price-in`` / ``--price-out``: both or neither."""
    if price_in is None and price_out is None:
        return None
    if price_in is None or price_out is None:
        raise PriceError("give --price-in and --price-out together (dollars per million tokens)")
    return Price(price_in, price_out)


def load_prices(path: str | Path) -> dict[str, Price]:
    """A prices file: TOML, one table per model name with ``input`` and ``output`` in
    dollars per million tokens::

        ["gpt-4o"]
        input = 2.5
        output = 10.0
    """
    try:
        raw = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise PriceError(f"cannot read the prices file {path}: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise PriceError(f"prices file {path} is not TOML: {exc}") from None
    prices = {}
    for model, table in raw.items():
        if not isinstance(table, Mapping) or set(table) != {"input", "output"}:
            raise PriceError(f"prices file {path}: [{model}] needs input and output, nothing else")
        values = [table["input"], table["output"]]
        if any(isinstance(v, bool) or not isinstance(v, int | float) for v in values):
            raise PriceError(f"prices file {path}: [{model}] input and output must be numbers")
        prices[str(model)] = Price(float(values[0]), float(values[1]))
    return prices


def call_cost(meta: Mapping[str, Any], price: Price | None) -> tuple[float | None, str]:
    """(cost in dollars, ``provider`` / ``price`` / ``none``) of one stored reply."""
    reported = meta.get("cost")
    if isinstance(reported, int | float) and not isinstance(reported, bool):
        return float(reported), "provider"
    if price is not None and ("prompt_tokens" in meta or "completion_tokens" in meta):
        prompt = int(meta.get("prompt_tokens") or 0)
        completion = int(meta.get("completion_tokens") or 0)
        return price.cost(prompt, completion), "price"
    return None, "none"


def percentile(values: list[float], q: float) -> float | None:
    """The q-th percentile (numpy's linear interpolation), None for no values."""
    return round(float(np.percentile(values, q)), 4) if values else None


def usage_summary(
    metas: Iterable[Mapping[str, Any]], *, price: Price | None = None, correct: int | None = None
) -> dict[str, Any]:
    """A run's tokens, cost, cost per correct answer and latency p50/p95 over its replies'
    metadata. ``correct``: the run's correct answers (graded), for the cost per correct."""
    metas = list(metas)
    out: dict[str, Any] = {k: sum(int(m.get(k) or 0) for m in metas) for k in TOKEN_KEYS}
    costs = [call_cost(m, price) for m in metas]
    known = [c for c, _ in costs if c is not None]
    sources = sorted({s for _, s in costs if s != "none"})
    out["cost"] = round(sum(known), 6) if known else None
    out["cost_source"] = "+".join(sources) if sources else "none"
    out["calls_without_cost"] = sum(1 for c, _ in costs if c is None)
    out["correct"] = correct
    out["cost_per_correct"] = (
        round(out["cost"] / correct, 6) if out["cost"] is not None and correct else None
    )
    latencies = [float(m["latency_s"]) for m in metas if m.get("latency_s") is not None]
    out["latency_p50_s"] = percentile(latencies, 50)
    out["latency_p95_s"] = percentile(latencies, 95)
    return out
