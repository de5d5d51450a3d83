"""The coordinator's links and the study's last step, in real Chromium.

- served on a port that is not 8501, every link points at that port: the one
  `readerstudy invite` prints beside the server and the ones the Invites page
  makes (read from the page's own CSV download);
- inviting a code again replaces its row in the shown-once table, the banner
  says the earlier link is dead, and that link is refused;
- "Close for good" asks once more; Cancel keeps the study open.
"""

from __future__ import annotations

import io
import subprocess
import sys

import pandas as pd
import pytest
from playwright.sync_api import Page, expect
from sqlmodel import Session

from reader_app.core.settings import Settings
from reader_app.models import Study
from tests.e2e.conftest import ROOT, ServedApp, artifact
from tests.factories import make_reader, make_study

pytestmark = pytest.mark.browser
WAIT = 30_000  # ms; a rerun on a loaded 2-core machine can take seconds


@pytest.fixture
def db_url(sqlite_url: str) -> str:
    return sqlite_url


def _links_csv(page: Page) -> pd.DataFrame:
    with page.expect_download() as download:
        page.get_by_role("button", name="Download links (CSV)").click()
    return pd.read_csv(io.StringIO(open(download.value.path(), encoding="utf-8").read()))


def _create(page: Page, lines: str) -> None:
    box = page.get_by_label("One person per line", exact=False)
    box.click()
    box.press("Control+a")
    box.press_sequentially(lines.replace("\n", " "), delay=10)
    box.press("Tab")  # Streamlit's text area sends its value on blur
    page.get_by_role("button", name="Create links").click()


def test_links_use_the_served_port_and_a_re_invite_replaces_the_dead_one(
    served: ServedApp, page: Page, session: Session, settings: Settings
) -> None:
    assert served.port != 8501
    study = make_study(session, settings.asset_dir, n_cases=1)
    make_reader(session, study, code="C01", role="coordinator")
    printed = (
        subprocess.run(
            [
                sys.executable,
                "-m",
                "reader_app.cli",
                "invite",
                study.slug,
                "C01",
                "--role",
                "coordinator",
            ],
            env=served.env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
        .stdout.strip()
        .splitlines()[-1]
    )
    assert printed.startswith(f"http://127.0.0.1:{served.port}/?token=")

    page.goto(printed.replace("/?token=", "/invites?token="))
    expect(page.get_by_role("heading", name="Invites")).to_be_visible(timeout=WAIT)
    _create(page, "R77")
    expect(page.get_by_text("1 link(s) created")).to_be_visible(timeout=WAIT)
    first = _links_csv(page).set_index("code")["link"]
    assert first["R77"].startswith(f"http://127.0.0.1:{served.port}/?token=")

    _create(page, "R77")
    expect(page.get_by_text("The earlier link of R77 no longer works")).to_be_visible(timeout=WAIT)
    page.screenshot(path=str(artifact("coordinator-reinvite-1440.png")))
    shown = _links_csv(page)
    assert list(shown["code"]) == ["R77"]
    assert shown["link"][0] != first["R77"]

    dead = page.context.new_page()
    dead.goto(first["R77"])
    expect(dead.get_by_text("This sign-in link is not valid")).to_be_visible(timeout=WAIT)
    dead.close()


def test_close_for_good_asks_once_more(
    served: ServedApp, page: Page, session: Session, settings: Settings
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=1)
    token = make_reader(session, study, code="C01", role="coordinator").token
    page.goto(f"{served.url}/progress?token={token}")
    page.get_by_role("button", name="Close for good…").click()
    expect(page.get_by_text("can never be reopened")).to_be_visible(timeout=WAIT)
    page.set_viewport_size({"width": 1024, "height": 768})
    page.screenshot(path=str(artifact("coordinator-close-confirm-1024.png")))
    page.get_by_role("button", name="Cancel").click()
    expect(page.get_by_text("can never be reopened")).to_have_count(0, timeout=WAIT)
    session.expire_all()
    assert session.get(Study, study.id).state == "open"  # type: ignore[union-attr]

    page.get_by_role("button", name="Close for good…").click()
    page.get_by_role("button", name="Yes, close for good").click()
    expect(page.get_by_text("The study is now closed")).to_be_visible(timeout=WAIT)
    session.expire_all()
    assert session.get(Study, study.id).state == "closed"  # type: ignore[union-attr]
