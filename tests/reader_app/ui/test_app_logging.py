"""The Streamlit entry configures logging once, and a refused link is logged without the token."""

from __future__ import annotations

import logging
from collections.abc import Callable

import pytest
from streamlit.testing.v1 import AppTest

from reader_app.core.logs import _CurrentStderr
from reader_app.core.settings import Settings


def test_the_app_logs_a_refused_link_at_the_configured_level(
    settings: Settings,
    app_for: Callable[..., AppTest],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    logger = logging.getLogger("reader_app")
    for handler in [h for h in logger.handlers if isinstance(h, _CurrentStderr)]:
        logger.removeHandler(handler)
    monkeypatch.setenv("READERSTUDY_LOG_LEVEL", "WARNING")
    forged = "forged-token-" + "x" * 30
    logger.setLevel(logging.NOTSET)
    with caplog.at_level(logging.DEBUG):  # the root: reader_app's own level is the app's to set
        at = app_for(forged)
        at.run()  # a rerun configures again: still one handler
        assert logger.level == logging.WARNING  # from READERSTUDY_LOG_LEVEL
    assert not at.exception
    assert sum(isinstance(h, _CurrentStderr) for h in logger.handlers) == 1
    refusals = [r.getMessage() for r in caplog.records if "sign-in refused" in r.getMessage()]
    assert refusals and all(m == "sign-in refused: unknown or rotated link" for m in refusals)
    assert forged not in caplog.text
    logger.setLevel(logging.INFO)
