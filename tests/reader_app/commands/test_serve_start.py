"""``readerstudy serve`` starts light: the command line it parses imports no importer or
scoring library (pandas, pydicom, nibabel) before it hands over to Streamlit.

Every served app, the suite's hundreds of them included, pays this start; the other
commands' libraries cost about a second of CPU (docs/performance.md).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import pytest

from reader_app import cli

HEAVY = ("pandas", "pydicom", "nibabel", "scoring.io", "reader_app.study_setup.validation")

PROBE = """
import json, sys
from reader_app.cli import build_parser
def loaded(): return sorted(m for m in {heavy!r} if m in sys.modules)
args = build_parser("serve").parse_args(["serve", "--port", "8765"])
assert args.func.__module__ == "reader_app.commands.serve", args.func
after_serve = loaded()
build_parser()  # the whole command line: every command's libraries
print(json.dumps([after_serve, loaded()]))
"""


def test_serve_parses_its_command_line_without_the_heavy_libraries() -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROBE.format(heavy=HEAVY)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    after_serve, after_all = json.loads(out.strip().splitlines()[-1])
    assert after_serve == []
    assert after_all != [], "the probe sees none of them at all: it could not fail"


def test_main_builds_only_the_serve_parser_for_serve(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[str | None] = []
    real = cli.build_parser

    def spy(only: str | None = None) -> argparse.ArgumentParser:
        built.append(only)
        return real(only)

    monkeypatch.setattr(cli, "build_parser", spy)
    with pytest.raises(SystemExit):
        cli.main(["serve", "--help"])
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    assert built == ["serve", None]
