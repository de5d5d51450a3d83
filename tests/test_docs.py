"""Docs stay true: every setting and every CLI command is documented."""

from __future__ import annotations

import json
import re
import shlex
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from reader_app.cli import build_parser, main
from reader_app.core.settings import ENV_VARS
from tests.support.processes import die_with_parent, track

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


# --- docs/grounding.md's walk-through, run as written (ports aside) ---------------------

_SECONDS = re.compile(r"\d+(\.\d+)? s\b")  # latencies differ from run to run


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _walk(doc: str) -> list[tuple[str, list[str]]]:
    """Each ``$ command`` of an indented shell session with the lines printed under it."""
    steps: list[tuple[str, list[str]]] = []
    in_block = False
    for line in doc.splitlines():
        if line.startswith("    $ "):
            steps.append((line[6:], []))
            in_block = True
        elif in_block and line.startswith("    "):
            steps[-1][1].append(line[4:])
        else:
            in_block = False  # a blank line or prose ends the session's block
    return steps


def _argv(command: str, ports: dict[str, str]) -> list[str]:
    for doc_port, port in ports.items():
        command = command.replace(doc_port, port)
    words = shlex.split(command.split(" 2>/dev/null")[0].split(" &")[0])
    assert words[0] == "readerstudy", command
    return words[1:]


@pytest.fixture
def lesion_servers() -> Iterator[dict[str, str]]:
    """The doc's two toy model servers (scripts/lesion_stub.py), each on a free port."""
    ports = {"8911": str(_free_port()), "8912": str(_free_port())}
    procs = []
    try:
        for doc_port, extra in (("8911", []), ("8912", ["--from-history"])):
            cmd = [sys.executable, str(ROOT / "scripts/lesion_stub.py"), "serve"]
            procs.append(
                subprocess.Popen(
                    [*cmd, "--port", ports[doc_port], *extra], preexec_fn=die_with_parent
                )
            )
            track(procs[-1], f"lesion_stub.py serve --port {ports[doc_port]}")
        for port in ports.values():  # listening before the first request
            deadline = time.monotonic() + 30
            while True:
                try:
                    socket.create_connection(("127.0.0.1", int(port)), timeout=1).close()
                    break
                except OSError:
                    assert time.monotonic() < deadline, f"lesion stub on {port} never listened"
                    time.sleep(0.05)
        yield ports
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(10)


def test_grounding_walkthrough_prints_what_the_doc_shows(
    sqlite_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    lesion_servers: dict[str, str],
) -> None:
    """Every ``readerstudy`` command of docs/grounding.md, in order, against the doc's own
    toy study and servers: the audit tables exactly, the run lines but for their
    latencies, the JSON line's fields and the refusal, as the doc pastes them."""
    monkeypatch.setenv("READERSTUDY_DATABASE_URL", sqlite_url)
    monkeypatch.setenv("READERSTUDY_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("READERSTUDY_ASSET_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    steps = _walk(ROOT.joinpath("docs/grounding.md").read_text())
    assert steps[0][0] == "python scripts/lesion_stub.py make-study toy"
    subprocess.run(
        [sys.executable, str(ROOT / "scripts/lesion_stub.py"), "make-study", "toy"], check=True
    )
    ran = 0
    for command, shown in steps[1:]:
        if "lesion_stub.py serve" in command:
            continue  # the fixture's servers
        code = main(_argv(command, lesion_servers))
        out, err = capsys.readouterr()
        if "--fill black" in command:  # a refusal: its one line on standard error
            assert code == 2 and err.strip() == "\n".join(shown), err
        elif "| jq" in command:  # the doc's jq projection of the last line
            assert code == 0, err
            report = json.loads(out.strip().splitlines()[-1])
            keys = ("name", "category", "occlusion_effect", "asked")
            assert {k: report[k] for k in keys} == json.loads(shown[0])
        else:
            assert code == 0, err
            # the doc shows standard error (when it does) first, then standard output
            n_err = next((i for i, s in enumerate(shown) if s.startswith("audit ")), 0)
            assert out.splitlines() == shown[n_err:], out
            printed = [_SECONDS.sub("N s", s) for s in err.splitlines()]
            for line in shown[:n_err]:
                assert _SECONDS.sub("N s", line) in printed, (line, err)
        ran += 1
    assert ran == 5  # import, two audits, the JSON line, the refusal
