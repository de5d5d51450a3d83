"""Vega-Lite specs as plain dicts: the few pieces the chart builders share.

The builders write the spec Altair would produce (``alt.X("name:N", ...)`` is
``field("name:N", ...)`` here) without importing Altair: at the size of the
schema classes and the validator it loads, Altair was about 26 MiB of every
server's memory once an analyst page drew a chart (docs/performance.md). The
specs are checked against the Vega-Lite schema in the tests instead
(tests/reader_app/analysis/test_chart_specs.py).
"""

from __future__ import annotations

import math
from typing import Any, Final

import pandas as pd

Spec = dict[str, Any]  # a Vega-Lite spec, or a piece of one
SCHEMA_URL: Final = "https://vega.github.io/schema/vega-lite/v6.4.1.json"
TYPES: Final = {"N": "nominal", "Q": "quantitative", "O": "ordinal", "T": "temporal"}


def field(shorthand: str, **props: Any) -> Spec:
    """An encoding channel: ``"value:Q"`` -> field ``value``, type quantitative."""
    name, _, kind = shorthand.partition(":")
    return {"field": name, "type": TYPES[kind], **props}


def secondary(name: str) -> Spec:
    """``x2``/``y2``: a field without a type (it shares its primary channel's)."""
    return {"field": name}


def tooltip(*channels: Spec) -> list[Spec]:
    return list(channels)


def value(v: Any) -> Spec:
    return {"value": v}


def when(param: str, on: Any, off: Any) -> Spec:
    """``on`` where the selection ``param`` holds (everywhere when it is empty), else ``off``."""
    return {"condition": {"param": param, "value": on}, "value": off}


def mark(kind: str, **props: Any) -> Spec:
    return {"type": kind, **props}


def values(frame: pd.DataFrame) -> Spec:
    """Inline data with NaN as null (JSON has no NaN) and plain Python scalars."""
    records = []
    for row in frame.to_dict(orient="records"):
        clean: dict[str, Any] = {}
        for key, v in row.items():
            if v is pd.NA or v is None or (isinstance(v, float) and math.isnan(v)):
                clean[str(key)] = None
            elif hasattr(v, "item"):
                clean[str(key)] = v.item()
            else:
                clean[str(key)] = v
        records.append(clean)
    return {"values": records}


def layer(*layers: Spec, **props: Any) -> Spec:
    """Layers drawn on one another. Data that every layer shares (the same dict) moves up
    to the layered chart, as Altair does; and when every layer has data, the data that
    most of them share (two at least) moves up too, the others keep their own (a layer's
    own data overrides its parent's): the browser then receives and parses it once, not
    once per layer (a bar chart with CI whiskers and caps sent its rows four times)."""
    datas = [part.get("data") for part in layers]
    if any(d is None for d in datas):
        return {"layer": list(layers), **props}
    shared = max(datas, key=lambda d: sum(other is d for other in datas))
    if sum(d is shared for d in datas) < 2:
        return {"layer": list(layers), **props}
    kept = tuple(
        {k: v for k, v in part.items() if k != "data"} if part["data"] is shared else part
        for part in layers
    )
    return {"data": shared, "layer": list(kept), **props}
