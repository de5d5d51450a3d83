"""The per-case matrix's drawing data (ui/components/matrix_view.matrix_data): every
cell where matrix.js draws it, with its outcome and confidence."""

from __future__ import annotations

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from reader_app.charts.builders import CELL_COLORS, GLYPHS
from reader_app.charts.theme import DARK_BACKGROUND
from reader_app.ui.components.matrix_view import matrix_data

OUTCOMES = list(CELL_COLORS)


def _cases(ids: list[str]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "case_id": ids,
            "difficulty": [0.5] * len(ids),
            "pool_accuracy": [0.5] * len(ids),
            "split": ["both get"] * len(ids),
        }
    )


def test_a_small_matrix_by_hand() -> None:
    """Two cases (the harder, c10, first), a model and two readers: readers first, each
    kind by name; R02 never answered c2, so that cell is "missing"."""
    cells = pd.DataFrame(
        {
            "case_id": ["c2", "c10", "c10", "c2", "c10"],
            "responder": ["vlm", "vlm", "R02", "R01", "R01"],
            "kind": ["model", "model", "human", "human", "human"],
            "outcome": ["wrong", "correct", "idk", "correct", "failure"],
            "likert": pd.array([1, 4, None, 3, None], dtype="Int64"),
        }
    )
    data = matrix_data(cells, _cases(["c10", "c2"]).assign(difficulty=[1.0, None]))
    assert [r["name"] for r in data["responders"]] == ["R01", "R02", "vlm"]
    assert [c["id"] for c in data["cases"]] == ["c10", "c2"]
    assert [c["difficulty"] for c in data["cases"]] == [1.0, None]  # no pooled reader
    names = [OUTCOMES[i] for i in data["cells"]]
    assert names == ["failure", "correct", "idk", "missing", "correct", "wrong"]
    assert data["likert"] == [None, 3, None, None, 4, 1]
    missing = data["outcomes"][OUTCOMES.index("missing")]
    assert missing["color"] == DARK_BACKGROUND and missing["glyph"] == ""  # the dark page
    assert data["outcomes"][OUTCOMES.index("wrong")]["label"] == f"{GLYPHS['wrong']} wrong"
    assert data["case_labels"] and data["width"] == 200


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from(["R1", "R2", "R10", "m-a", "m-b"]), min_size=1, unique=True),
    st.lists(st.sampled_from(["1", "2", "3", "10", "22"]), min_size=1, unique=True),
    st.data(),
)
def test_every_cell_lands_on_its_row_and_column(
    people: list[str], ids: list[str], draw: st.DataObject
) -> None:
    answered = [
        (p, c) for p in people for c in ids if draw.draw(st.booleans(), label=f"{p} answered {c}")
    ]
    outcome = {pc: draw.draw(st.sampled_from(OUTCOMES[:-1])) for pc in answered}
    likert = {pc: draw.draw(st.none() | st.integers(0, 4)) for pc in answered}
    kind = {p: "model" if p.startswith("m-") else "human" for p in people}
    cells = pd.DataFrame(
        {
            "case_id": [c for _, c in answered],
            "responder": [p for p, _ in answered],
            "kind": [kind[p] for p, _ in answered],
            "outcome": [outcome[pc] for pc in answered],
            "likert": pd.array([likert[pc] for pc in answered], dtype="Int64"),
        }
    )
    data = matrix_data(cells, _cases(ids))
    rows = [r["name"] for r in data["responders"]]
    assert rows == sorted({p for p, _ in answered}, key=lambda p: (kind[p], p))
    assert len(data["cells"]) == len(data["likert"]) == len(rows) * len(ids)
    for i, p in enumerate(rows):
        for j, c in enumerate(ids):
            at = i * len(ids) + j
            assert OUTCOMES[data["cells"][at]] == outcome.get((p, c), "missing")
            assert data["likert"][at] == likert.get((p, c))
