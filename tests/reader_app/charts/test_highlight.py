"""Issue 42: the reliability diagram drew 16 model lines in similar warm hues. With one
responder highlighted, it alone keeps its colour (drawn heavier, on top), the pools keep
theirs and every other line is grey."""

from __future__ import annotations

import pandas as pd

from reader_app.charts import reliability_chart, risk_coverage_chart
from reader_app.charts.palette import GREYED, HIGHLIGHT_WIDTH, MODELS, POOL
from reader_app.charts.vl import Spec

MODEL_NAMES = [f"vlm-{i:02d}" for i in range(16)]


def _frame(value: str) -> pd.DataFrame:
    series = [("Human pool", "pool"), ("R01", "reader"), *((m, "model") for m in MODEL_NAMES)]
    return pd.DataFrame(
        [
            {"name": n, "arm": a, "likert": level, "accuracy": 0.5, "n": 3.0,
             "threshold": level, "coverage": 0.5, "risk": 0.2, "aurc": 0.1, value: 0.5}
            for n, a in series
            for level in range(5)
        ]
    )  # fmt: skip


def _lines(chart: Spec) -> tuple[dict[str, str], list[dict[str, object]]]:
    """The colour of each series and the rows in drawing order."""
    part = chart["layer"][1] if "layer" in chart else chart
    scale = part["encoding"]["color"]["scale"]
    rows = (part.get("data") or chart["data"])["values"]
    return dict(zip(scale["domain"], scale["range"], strict=True)), rows


def test_one_model_in_colour_the_others_grey() -> None:
    for build, frame in (
        (reliability_chart, _frame("accuracy")),
        (risk_coverage_chart, _frame("coverage")),
    ):
        colours, rows = _lines(build(frame, highlight="vlm-07"))
        assert colours["vlm-07"] == MODELS[7] and colours["Human pool"] == POOL
        assert {colours[m] for m in MODEL_NAMES if m != "vlm-07"} == {GREYED}
        assert colours["R01"] == GREYED
        assert {r["name"] for r in rows[-5:]} == {"vlm-07"}  # drawn last, on top
        # the pool's white line over the grey ones, under the one in colour
        drawn = list(dict.fromkeys(r["name"] for r in rows))
        assert drawn[-2:] == ["Human pool", "vlm-07"]
        assert set(drawn[:-2]) == {"R01", *MODEL_NAMES} - {"vlm-07"}
        assert {r["weight"] for r in rows if r["name"] == "vlm-07"} == {HIGHLIGHT_WIDTH}
        # no highlight (or a name not drawn): every series in its own colour, as before
        for plain in (build(frame), build(frame, highlight="gone")):
            colours, _ = _lines(plain)
            assert GREYED not in colours.values()
            assert len(set(colours[m] for m in MODEL_NAMES)) == 16
