"""Fixtures of the analysis tests."""

from __future__ import annotations

import pandas as pd
import pytest

from tests.reader_app.analysis.chart_frame import chart_frame


@pytest.fixture
def frame() -> pd.DataFrame:
    """A hand-built tidy frame: R1, R2 and a model with a hostile name on cases a-d."""
    return chart_frame()
