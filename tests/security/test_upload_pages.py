"""The upload gate's table of pages with an uploader matches the pages themselves."""

from __future__ import annotations

import re

from reader_app.ui.navigation import ALL_PAGES, PAGES_DIR, ROLE_PAGES
from reader_app.web.upload_pages import upload_pages


def test_every_page_with_an_uploader_and_only_those_take_uploads() -> None:
    with_uploader = {
        spec.url_path
        for spec in ALL_PAGES
        if re.search(r"\bst\.file_uploader\(", (PAGES_DIR / spec.file).read_text())
    }
    assert with_uploader == set(upload_pages(500))


def test_readers_have_no_uploader_and_each_role_listed_has_the_page() -> None:
    table = upload_pages(500)
    assert not any("reader" in page.roles for page in table.values())
    for url_path, page in table.items():
        for role in page.roles:
            assert url_path in {p.url_path for p in ROLE_PAGES[role]}, (url_path, role)
    assert table["new-study"].max_bytes == 500 * 1024 * 1024
