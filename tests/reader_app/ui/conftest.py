"""AppTest helpers: run the real app script against a test database."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

MAIN = str(Path(__file__).resolve().parents[3] / "reader_app" / "main.py")


@pytest.fixture
def app_for(settings: object) -> Callable[[str], AppTest]:
    """Return a factory: token -> a fresh AppTest signed in with that token (already run)."""
    st.cache_resource.clear()
    st.cache_data.clear()

    def make(token: str) -> AppTest:
        at = AppTest.from_file(MAIN, default_timeout=30)
        if token:
            at.query_params["token"] = token
        return at.run()

    return make
