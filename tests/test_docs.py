"""Docs stay true: every setting and every CLI command is documented."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from reader_app.cli import build_parser
from reader_app.core.settings import ENV_VARS

ROOT = Path(__file__).resolve().parents[1]


def _docs_text() -> str:
    parts = [ROOT.joinpath("README.md").read_text()]
    parts += [p.read_text() for p in sorted((ROOT / "docs").glob("*.md"))]
    return "\n".join(parts)


def test_every_setting_is_in_the_readme_table() -> None:
    readme = ROOT.joinpath("README.md").read_text()
    for name in ENV_VARS:
        assert f"| `{name}` |" in readme, f"{name} missing from the README configuration table"


def test_every_cli_command_is_documented() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    docs = _docs_text()
    for name in sub.choices:  # type: ignore[union-attr]
        assert f"readerstudy {name}" in docs, f"`readerstudy {name}` is not documented"


def test_readme_shows_the_two_commands() -> None:
    readme = ROOT.joinpath("README.md").read_text()
    assert "make demo" in readme and "make test" in readme


def _module_map() -> list[str]:
    readme = ROOT.joinpath("README.md").read_text()
    block = readme.split("### Module map", 1)[1].split("```", 2)[1]
    return [line.split()[0] for line in block.splitlines() if line.strip()]


def test_the_readme_module_map_has_every_folder_once_and_no_other() -> None:
    listed = _module_map()
    assert len(listed) == len(set(listed)), "a folder is listed twice"
    try:
        tracked = subprocess.run(
            ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    folders = {str(Path(f).parent) + "/" for f in tracked} - {"./"}
    assert set(listed) == folders
