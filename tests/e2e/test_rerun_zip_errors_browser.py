"""Issue 39, not re-run in round 3: ZIP errors that escaped as Streamlit's error box.

In real Chromium on the served app, a coordinator uploads each malformed ZIP of
tests/security/test_rerun_zips.py on the New study page (a real file chooser)
and presses "Check the study": the page shows our "Refused: ..." message, no
Streamlit exception box, no Problems list, and nothing is written but the audit.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from sqlmodel import Session, select

from reader_app.core.settings import Settings
from reader_app.models import Study
from tests.e2e.conftest import ServedApp
from tests.e2e.exam_driver import settled
from tests.factories import make_reader, make_study
from tests.reader_app.study_setup.hostile_zips import bad_crc
from tests.security.test_rerun_zips import (
    encrypted,
    symlink,
    traversal,
    truncated_entry,
    truncated_tail,
    zip64_lies,
)

pytestmark = pytest.mark.browser

ZIPS: list[tuple[Callable[[Path], Path], str]] = [
    (truncated_tail, "not a ZIP file"),
    (truncated_entry, "damaged entry"),
    (bad_crc, "Bad CRC-32"),
    (encrypted, "encrypted entry"),
    (zip64_lies, "declares 1,000,000 entries"),
    (traversal, "path traversal"),
    (symlink, "symbolic link in the ZIP"),
]


def test_every_malformed_zip_is_our_message_on_the_page(
    served: ServedApp, page: Page, session: Session, settings: Settings, tmp_path: Path
) -> None:
    home = make_study(session, settings.asset_dir, n_cases=1, slug="home")
    token = make_reader(session, home, code="C01", role="coordinator").token
    session.commit()
    for build, message in ZIPS:
        archive = build(tmp_path / f"{build.__name__}.zip")
        page.goto(f"{served.url}/new-study?token={token}")
        expect(page.get_by_role("heading", name="New study")).to_be_visible(timeout=60_000)
        settled(page)
        page.locator(".st-key-setup_zip input[type=file]").set_input_files(str(archive))
        expect(page.locator(".st-key-setup_chosen")).to_contain_text(
            f"Chosen: {archive.name}", timeout=30_000
        )
        settled(page)
        page.locator(".st-key-setup_check button").click()
        alert = page.get_by_role("alert").first
        expect(alert).to_be_visible(timeout=60_000)
        # the page shows stored text with word joiners after ':' and '.' (safe_text.py)
        shown = alert.inner_text().replace("\u2060", "")
        assert shown.startswith("Refused: ") and message in shown, shown
        expect(page.locator("[data-testid=stException]")).to_have_count(0)
        expect(page.get_by_text("Traceback")).to_have_count(0)
        expect(page.get_by_role("heading", name="2. Problems")).to_have_count(0)
    session.expire_all()
    assert [s.slug for s in session.exec(select(Study)).all()] == ["home"]
    assert list((settings.data_dir / ".setup").glob("import-*")) == []
