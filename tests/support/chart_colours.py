"""The colours a Vega-Lite spec draws with, for the contrast tests."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any


def spec_colours(node: Any, key: str = "") -> Iterator[tuple[str, str]]:
    if isinstance(node, dict):
        for k, v in node.items():
            yield from spec_colours(v, k)
    elif isinstance(node, list):
        for v in node:
            yield from spec_colours(v, key)
    elif isinstance(node, str) and re.fullmatch(r"#[0-9a-fA-F]{6}|black|white", node):
        yield key, node


def drawn_colours(chart: dict[str, Any]) -> set[str]:
    """Colours of lines, rules, ticks, points, text and the responder scales of a spec."""
    found = set()
    for layer in [chart, *chart.get("layer", [])]:
        mark = layer.get("mark")
        kind = mark.get("type") if isinstance(mark, dict) else mark
        if kind in {"rule", "line", "tick", "text", "point"} and isinstance(mark, dict):
            found |= {c for k, c in spec_colours(mark) if k in {"color", "stroke"}}
        colour = layer.get("encoding", {}).get("color", {})
        if colour.get("field") in {"name", "arm"}:
            found |= set(colour.get("scale", {}).get("range", []))
    return found
