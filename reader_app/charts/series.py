"""The series the charts draw, in their order: named here, below the tables that fill them.

``reader_app.analysis.chart_data`` builds its tables with these labels and the builders
colour and order them, so both import them from here (charts never import analysis).
"""

from __future__ import annotations

from typing import Final

# response-profile segments, in stacking order (left to right): (label, outcome, Likert level)
OUTCOMES: Final = (
    *((f"wrong · L{level}", "wrong", level) for level in (4, 3, 2, 1, 0)),
    ("I don't know", "idk", None),
    ("invalid", "invalid", None),
    ("failure", "failure", None),
    ("missing", "missing", None),
    *((f"correct · L{level}", "correct", level) for level in (0, 1, 2, 3, 4)),
)
GROUNDING_SERIES: Final = ("human pool", "reader", "model run", "model run · text only")
