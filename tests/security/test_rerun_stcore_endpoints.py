"""Issue 39, not re-run in round 3: what a stranger gets from Streamlit's own endpoints.

The served app (``readerstudy serve``'s ASGI app) holds a study whose answer keys
and source ids are planted markers, and a reader is signed in with a live session
(a bare websocket client) while a stranger, with no cookie and with a fresh
browser's own cookies, GETs ``/_stcore/metrics``, ``/_stcore/host-config``,
``/_stcore/allowed-message-origins``, ``/_stcore/health``,
``/_stcore/script-health-check``, ``/_stcore/stream`` without an upgrade,
``/_stcore/upload_file/<reader's session>/x``, ``/component/...`` paths of our
components and made-up ones, and every ``/media/...`` address the reader's page
was sent. No answer holds the keys, the source ids (the PHI-bearing names a
manifest may use), the reader's token, code, session id or browser cookie.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from sqlmodel import Session

from reader_app.core.db import make_engine, migrate
from reader_app.core.settings import load_settings
from reader_app.web.browser_proof import COOKIE
from tests.e2e.conftest import served_env, start_app, stop_app
from tests.factories import make_reader, make_study
from tests.security.bare_client import http_request, live_visit, page_cookies

pytestmark = pytest.mark.slow
KEYS = ["PLANTEDKEY-Tension-pneumothorax", "PLANTEDKEY-Aortic-dissection"]
SOURCES = ["DOE_JOHN_MRN123_chest", "ROE_JANE_MRN456_head"]
PATHS = [
    "/_stcore/metrics",
    "/_stcore/host-config",
    "/_stcore/allowed-message-origins",
    "/_stcore/health",
    "/_stcore/script-health-check",
    "/_stcore/stream",
    "/component/reader_app.ui.components.case_panel.case_panel/index.html",
    "/component/../../../etc/passwd",
    "/component/nothing/here",
    "/media/0000.png",
    "/_stcore/nonexistent",
]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    root = tmp_path_factory.mktemp("stcore")
    env = served_env(f"sqlite:///{root / 'rs.db'}", root / "data")
    settings = load_settings(env)
    migrate(settings.database_url)
    engine = make_engine(settings.database_url)
    with Session(engine) as session:
        study = make_study(
            session, settings.asset_dir, n_cases=2, source_ids=SOURCES, diagnoses=KEYS
        )
        token = make_reader(session, study, "RSECRET9", ready=True).token
        session.commit()
    engine.dispose()
    app = start_app(env, root / "app.log")
    try:
        yield app.url, token
    finally:
        stop_app(app)


def test_a_stranger_gets_nothing_of_the_study_or_the_readers_session(
    served: tuple[str, str],
) -> None:
    url, token = served
    reader_cookies = page_cookies(url)
    with live_visit(url, cookies=reader_cookies, query=f"token={token}") as reader:
        assert "Case 1 of 2" in reader.text
        assert not any(k in reader.text for k in KEYS + SOURCES)  # the reader's own page
        media = sorted(set(re.findall(r"/media/[0-9a-f]+\.[a-z]+", reader.text)))
        secrets = [*KEYS, *SOURCES, token, "RSECRET9", reader.session_id]
        secrets.append(reader_cookies[COOKIE])
        paths = [*PATHS, f"/_stcore/upload_file/{reader.session_id}/x", *media]
        seen: dict[str, int] = {}
        bodies: dict[str, bytes] = {}
        _, _, index = http_request(url, "GET", "/")
        for cookies in ({}, page_cookies(url)):  # no cookie; a fresh browser's own
            for path in paths:
                status, headers, body = http_request(url, "GET", path, cookies=cookies)
                seen[path] = status
                bodies[path] = body
                text = body.decode("utf-8", "replace") + repr(headers)
                leaked = [s for s in secrets if s in text]
                assert leaked == [], f"{path} ({status}) sent {leaked}"
    # as seen on Streamlit 1.67: /_stcore/metrics answers 200 with cache names and sizes
    # (no session, no study data: searched above); an unknown path under /_stcore, a GET of
    # the reader's upload address and /_stcore/stream without an upgrade get the app's
    # static page; /component/ and /media/ refuse what is not theirs
    assert seen["/_stcore/health"] == 200
    assert bodies["/_stcore/metrics"].startswith(b"# TYPE cache_memory_bytes")
    assert bodies[f"/_stcore/upload_file/{reader.session_id}/x"] == index
    assert bodies["/_stcore/stream"] == index
    assert seen["/component/../../../etc/passwd"] == 400
    assert b"root:" not in bodies["/component/../../../etc/passwd"]
    assert seen["/component/nothing/here"] == 404 and seen["/media/0000.png"] == 404
    # the reader's own images: served by their unguessable address (the reader's page is
    # the only one sent it), as PNG bytes; the searches above found no text of the study
    assert media and all(seen[m] == 200 and bodies[m][:4] == b"\x89PNG" for m in media)
