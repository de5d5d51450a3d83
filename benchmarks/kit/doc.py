"""docs/performance.md: each driver rewrites only its own ``## `` section."""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "performance.md"


def update_doc(doc: Path, section: str, heading: str | None = None) -> None:
    """Replace the section that starts with ``heading`` (default: the section's first
    line) up to the next ``## `` heading; append it when the page has none yet."""
    heading = heading or section.splitlines()[0]
    text = doc.read_text() if doc.exists() else "# Performance\n\n"
    pattern = re.compile(rf"^{re.escape(heading)}\n.*?(?=^## |\Z)", re.S | re.M)
    section = section.rstrip("\n") + "\n\n"
    if pattern.search(text):
        text = pattern.sub(lambda _: section, text, count=1)
    else:
        text = text.rstrip("\n") + "\n\n" + section
    doc.write_text(text.rstrip("\n") + "\n")


def para(*parts: str) -> list[str]:
    """One paragraph, wrapped at 88 columns, then a blank line."""
    return [*textwrap.wrap(" ".join(p for p in parts if p), 88, break_on_hyphens=False), ""]


def shown_command(module: str, argv: Sequence[str]) -> str:
    """The command a section quotes: database URLs hidden, the JSON output path left out
    (where a run kept its JSON is no part of the command)."""
    shown = [a if "@" not in a else "<url>" for a in argv]
    if "--json-out" in shown:
        i = shown.index("--json-out")
        del shown[i : i + 2]
    return " ".join([f".venv/bin/python -m benchmarks.{module}", *shown])


def emit(result: dict[str, Any], json_out: Path | None = None) -> int:
    """A driver's ending: the whole result to ``json_out`` if asked, and one JSON
    object as the last line on stdout (what run_all and the smoke tests read); 0."""
    if json_out is not None:
        json_out.write_text(json.dumps(result, indent=1))
    print(json.dumps(result))
    return 0
