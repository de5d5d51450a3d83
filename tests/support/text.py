"""What a reader sees of text the app escaped for markdown."""

from __future__ import annotations

import re


def plain(markdown: str) -> str:
    """The visible text of a message escaped with safe_text.escape_markdown."""
    return re.sub(r"\\(.)", r"\1", markdown.replace("\u2060", "").replace("  \n", "\n"))
