"""The server's judges for a test: a ``READERSTUDY_JUDGES`` TOML file, as an operator writes it.

define_judges(monkeypatch, tmp_path, {"judge-a": {"url": base_url, "model": "judge-a"}})
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest


def _toml(value: Any) -> str:
    if isinstance(value, dict):
        return json.dumps(json.dumps(value))  # extra: a JSON object in a TOML string
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    return json.dumps(str(value))


def judges_toml(judges: dict[str, dict[str, Any]]) -> str:
    lines = []
    for name, table in judges.items():
        lines.append(f"[{name}]")
        lines.extend(f"{k} = {_toml(v)}" for k, v in table.items())
        lines.append("")
    return "\n".join(lines)


def define_judges(
    monkeypatch: pytest.MonkeyPatch, folder: Path, judges: dict[str, dict[str, Any]]
) -> Path:
    path = folder / "judges.toml"
    path.write_text(judges_toml(judges), encoding="utf-8")
    monkeypatch.setenv("READERSTUDY_JUDGES", str(path))
    return path
