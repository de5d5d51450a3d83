"""The served app's doors against a stranger with a bare client (issue 32, items 1, 7, 16).

Each attack is made as it was found: a websocket client with no browser reads
its session id, then PUTs files to ``/_stcore/upload_file/<session>/<file>``
with the page's own XSRF pair; a session id read from a log is resumed
without the browser's cookie; a websocket is opened from another origin.
"""

from __future__ import annotations

import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlmodel import Session

from benchmarks.memory import Sampler
from reader_app.core.db import make_engine
from reader_app.core.settings import load_settings
from reader_app.web.browser_proof import COOKIE, HEADER, browser_id
from reader_app.web.upload_spool import UPLOADS
from tests.e2e.conftest import ServedApp, served_env, start_app, stop_app
from tests.factories import make_reader, make_study
from tests.security.bare_client import (
    XSRF_COOKIE,
    http_request,
    live_visit,
    page_cookies,
    put_file,
    refused_upgrade,
    rss_kib,
    visit,
)

pytestmark = pytest.mark.slow

MB = 1024 * 1024
ZIP_LIMIT_MB = 60  # READERSTUDY_MAX_UPLOAD_MB of the served app
SIGNED_OUT = "Open the personal sign-in link"


@dataclass
class Site:
    app: ServedApp
    reader: str
    coordinator: str
    analyst: str


@contextmanager
def served_site(root: Path, **extra_env: str) -> Iterator[Site]:
    env = served_env(
        f"sqlite:///{root / 'rs.db'}",
        root / "data",
        **{"READERSTUDY_MAX_UPLOAD_MB": str(ZIP_LIMIT_MB), **extra_env},  # extra_env wins
    )
    settings = load_settings(env)
    from reader_app.core.db import migrate

    migrate(settings.database_url)
    engine = make_engine(settings.database_url)
    with Session(engine) as session:
        study = make_study(session, settings.asset_dir, n_cases=2)
        reader = make_reader(session, study, "R01", ready=True).token
        coordinator = make_reader(session, study, "C01", role="coordinator").token
        analyst = make_reader(session, study, "A01", role="analyst").token
        session.commit()
    engine.dispose()
    app = start_app(env, root / "app.log")
    try:
        yield Site(app, reader, coordinator, analyst)
    finally:
        stop_app(app)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    with served_site(tmp_path_factory.mktemp("doors")) as served:
        yield served


def test_a_stranger_cannot_upload_and_the_server_memory_stays_flat(site: Site) -> None:
    """Issue 32 item 1 as found: 8 PUTs of 50 MB by an unauthenticated visitor (204 each on
    main, 228 -> 610 MB). Now each is refused before its body is read."""
    url = site.app.url
    cookies = page_cookies(url)
    with live_visit(url, cookies=cookies) as stranger:
        assert stranger.session_id and SIGNED_OUT in stranger.text
        before = rss_kib(site.app.proc.pid)
        statuses = [put_file(url, stranger.session_id, b"\0" * (50 * MB), cookies=cookies)
                    for _ in range(8)]  # fmt: skip
        after = rss_kib(site.app.proc.pid)
    assert statuses == [401] * 8
    assert after - before < 40 * 1024, f"RSS grew {before} -> {after} KiB"


def test_a_reader_cannot_upload(site: Site) -> None:
    url = site.app.url
    cookies = page_cookies(url)
    with live_visit(url, cookies=cookies, query=f"token={site.reader}") as reader:
        assert "Case 1 of 2" in reader.text
        assert put_file(url, reader.session_id, b"x" * 1000, cookies=cookies) == 403


def _put(url: str, token: str, page: str, sizes: list[int], expect: str = "") -> list[int]:
    """Sign in with a fresh browser, open ``page``, PUT one file per size; the statuses."""
    cookies = page_cookies(url)
    with live_visit(url, cookies=cookies, query=f"token={token}", page=page) as seen:
        assert expect in seen.text
        return [put_file(url, seen.session_id, b"z" * n, cookies=cookies) for n in sizes]


def test_staff_upload_only_on_their_uploader_page_within_its_limit(site: Site) -> None:
    url = site.app.url
    over_zip = ZIP_LIMIT_MB * MB + 100_000
    # the New study page: the configured READERSTUDY_MAX_UPLOAD_MB
    assert _put(url, site.coordinator, "new-study", [MB, over_zip], "Study ZIP") == [204, 413]
    # the answer key page: its own few-MB limit (4 MB)
    assert _put(url, site.coordinator, "", [3 * MB, 5 * MB], "Key CSV") == [204, 413]
    # a coordinator's page without an uploader takes nothing
    assert _put(url, site.coordinator, "progress", [1000]) == [403]
    # the analyst's model-run page takes a run file; an analyst may not upload a study
    assert _put(url, site.analyst, "model-runs", [MB, 17 * MB]) == [204, 413]
    assert _put(url, site.analyst, "new-study", [1000]) == [403]


def test_a_coordinators_session_id_is_useless_in_another_browser(site: Site) -> None:
    """The session id is in every upload URL (so in proxy logs): with it and their own XSRF
    pair, a stranger could replace or delete the coordinator's chosen file."""
    url = site.app.url
    mine = page_cookies(url)
    with live_visit(
        url, cookies=mine, query=f"token={site.coordinator}", page="new-study"
    ) as setup:
        file_id = "f" * 8
        assert put_file(url, setup.session_id, b"mine", cookies=mine, file_id=file_id) == 204
        theirs = page_cookies(url)
        assert theirs[COOKIE] != mine[COOKIE]
        assert put_file(url, setup.session_id, b"theirs", cookies=theirs, file_id=file_id) == 403
        no_proof = {k: v for k, v in theirs.items() if k != COOKIE}
        assert put_file(url, setup.session_id, b"theirs", cookies=no_proof, file_id=file_id) == 403


def test_a_readers_session_is_not_resumed_by_its_id_alone(site: Site) -> None:
    """Issue 32 item 7: after the tab closes, the id resumed the signed-in session (exam and
    all) for 120 s. Another browser, or no cookie at all, now gets a fresh signed-out one."""
    url = site.app.url
    cookies = page_cookies(url)
    first = visit(url, cookies=cookies, query=f"token={site.reader}")
    assert "Case 1 of 2" in first.text
    # a client-sent proof header is dropped, even one with the reader's own value
    forged = {HEADER: browser_id(cookies[COOKIE])}
    for stranger, extra in ((page_cookies(url), {}), ({}, {}), ({}, forged)):
        resumed = visit(url, cookies=stranger, headers=extra, resume=first.session_id)
        assert resumed.session_id != first.session_id
        assert "Case 1 of 2" not in resumed.text and SIGNED_OUT in resumed.text
    # control: the reader's own browser resumes its session, exam and all, without the link
    again = visit(url, cookies=cookies, resume=first.session_id)
    assert again.session_id == first.session_id
    assert "Case 1 of 2" in again.text


def test_websockets_from_another_origin_are_refused(site: Site) -> None:
    """Issue 32 item 16: with CORS off Streamlit accepts a websocket from any origin."""
    url = site.app.url
    cookies = page_cookies(url)
    assert refused_upgrade(url, origin="https://evil.example", cookies=cookies) == 403
    assert refused_upgrade(url, origin="null", cookies=cookies) == 403
    assert refused_upgrade(url, origin=url, cookies=cookies) == 0


def test_the_browser_proof_cookie_is_http_only(site: Site) -> None:
    status, headers, _ = http_request(site.app.url, "GET", "/")
    set_cookie = [v for k, v in headers if k.lower() == "set-cookie" and v.startswith(COOKIE)]
    assert status == 200 and len(set_cookie) == 1
    assert "HttpOnly" in set_cookie[0] and "SameSite=Lax" in set_cookie[0]


def _uploads(root: Path, pid: int) -> list[Path]:
    """The uploaded files on disk of the server process ``pid`` (web/upload_spool.py)."""
    folder = root / "data" / UPLOADS / f"{socket.gethostname()}-{pid}"
    return sorted(p for p in folder.iterdir() if p.suffix != ".part")


def test_a_large_upload_streams_to_disk_and_leaves_with_its_session(tmp_path: Path) -> None:
    """A 200 MB study ZIP PUT by a signed-in coordinator: the server's peak resident memory
    grows by less than 64 MB while it streams in (Streamlit alone holds it all in memory);
    the file sits on disk while the session lives, a second file replaces the first, the
    widget's DELETE removes it, and an ended session's file is removed (here a 2 s
    server.disconnectedSessionTTL after the tab closed). A leftover of a killed server is
    swept when the next one starts."""
    root = tmp_path
    dead = root / "data" / UPLOADS / f"{socket.gethostname()}-{_dead_pid()}"
    dead.mkdir(parents=True)
    (dead / "leftover").write_bytes(b"x" * 1000)
    env = {"STREAMLIT_SERVER_DISCONNECTED_SESSION_TTL": "2", "READERSTUDY_MAX_UPLOAD_MB": "256"}
    with served_site(root, **env) as site:
        url, pid = site.app.url, site.app.proc.pid
        assert not dead.exists()  # swept at start-up
        token = f"token={site.coordinator}"
        cookies = page_cookies(url)
        visit(url, cookies=cookies, query=token, page="new-study")  # warm the page's imports
        with live_visit(url, cookies=cookies, query=token, page="new-study") as setup:
            sid = setup.session_id
            with Sampler(pid, every=0.05) as rss:  # the server's RSS, 20 times a second
                assert put_file(url, sid, 200 * MB, cookies=cookies) == 204
            (stored,) = _uploads(root, pid)
            assert stored.stat().st_size == 200 * MB
            second = str(uuid.uuid4())
            assert put_file(url, sid, 3 * MB, cookies=cookies, file_id=second) == 204
            (replaced,) = _uploads(root, pid)  # one file per session
            assert replaced != stored and replaced.stat().st_size == 3 * MB
            status, _, _ = http_request(
                url, "DELETE", f"/_stcore/upload_file/{sid}/{second}", cookies=cookies,
                headers={"X-Xsrftoken": cookies[XSRF_COOKIE]},
            )  # fmt: skip
            assert status == 204 and _uploads(root, pid) == []
            assert put_file(url, sid, 5 * MB, cookies=cookies) == 204
            assert len(_uploads(root, pid)) == 1
        deadline = time.monotonic() + 30  # the tab closed: gone once the TTL has passed
        while _uploads(root, pid) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert _uploads(root, pid) == []
    base, peak = rss.samples[0][1], max(kib for _, kib in rss.samples)
    print(f"RSS before the 200 MB upload {base} KiB, peak while it streamed {peak} KiB")
    assert peak - base < 64 * 1024, f"peak RSS {base} -> {peak} KiB"


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid
