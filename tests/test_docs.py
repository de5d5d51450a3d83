"""Docs stay true: every setting and every CLI command is documented."""

from __future__ import annotations

import json
import os
import re
import shlex
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
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


# --- docs/bench2.md's walk-through, run as written (the stub's URL for $MODEL_URL) ---------


def _fenced(doc: str) -> list[tuple[str, list[str]]]:
    """The doc's fenced blocks, in order: (language, lines)."""
    blocks: list[tuple[str, list[str]]] = []
    lines = doc.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("```"):
            end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
            blocks.append((lines[i][3:].strip(), lines[i + 1 : end]))
            i = end
        i += 1
    return blocks


def _shown_after(blocks: list[tuple[str, list[str]]], command: str) -> list[str]:
    """The output block the doc shows after the bash block that holds ``command``."""
    at = next(i for i, (lang, body) in enumerate(blocks) if lang == "bash" and command in body)
    lang, shown = blocks[at + 1]
    assert lang == "", f"no output shown after {command!r}"
    return shown


def test_bench2_walkthrough_prints_what_the_doc_shows(
    sqlite_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """docs/bench2.md from its toy volumes to `score`: steps 0 and 1 run by bash as
    written, every `readerstudy` command through the CLI, against the doc's stand-in
    models and judges (tests/support/bench2_walk.py); what it prints is what the doc
    shows (latencies aside), the rubric summary exactly."""
    from sqlmodel import col, select

    from reader_app.core.db import make_engine, session_scope
    from reader_app.core.settings import load_settings
    from reader_app.models import Case, CaseImage
    from tests.support.bench2_walk import respond, submit_reader_reports
    from tests.support.openai_stub import OpenAIStub

    monkeypatch.setenv("READERSTUDY_DATABASE_URL", sqlite_url)
    monkeypatch.setenv("READERSTUDY_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("READERSTUDY_ASSET_DIR", raising=False)
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}:{os.environ['PATH']}")
    monkeypatch.chdir(tmp_path)
    blocks = _fenced(ROOT.joinpath("docs/bench2.md").read_text())
    toy = next(body for lang, body in blocks if lang == "bash" and "python make_toy.py" in body)
    assert toy[0] == "mkdir -p /tmp/b2 && cd /tmp/b2"  # here: the test's own folder
    manifest = next(b for lang, b in blocks if lang == "bash" and "bench2_manifest.py" in b[0])
    script = "\n".join([*toy[1:], *manifest]).replace("/path/to/readerstudy", str(ROOT))
    subprocess.run(["bash", "-euc", script], check=True, capture_output=True)

    def cli(command: str, **subst: str) -> tuple[int, list[str], list[str]]:
        for name, value in subst.items():
            command = command.replace(f"${name}", value)
        code = main(shlex.split(command.replace("\\\n", " "))[1:])
        out, err = capsys.readouterr()
        return code, out.splitlines(), err.splitlines()

    def same(doc_line: str, printed: list[str]) -> bool:
        return _SECONDS.sub("N s", doc_line) in [_SECONDS.sub("N s", p) for p in printed]

    code, out, err = cli("readerstudy import bench2/manifest.csv --study bench2")
    shown = _shown_after(blocks, "readerstudy import bench2/manifest.csv --study bench2")
    assert code == 0 and all(same(s, out + err) for s in shown if s.strip() != "..."), err
    for code_ in ("R01", "R02"):  # the doc invites R01; R02 is the second reader
        assert cli(f"readerstudy invite bench2 {code_}")[0] == 0

    with OpenAIStub() as stub:
        stub.responder = respond
        for model in ("--model frontier-vlm --quiet", "--name open-vlm-4x4"):
            command = next(
                line for lang, b in blocks if lang == "bash" for line in b if model in line
            )
            code, out, err = cli(command, MODEL_URL=stub.base_url)
            assert code == 0 and same(_shown_after(blocks, command)[0], out + err), err
        with session_scope(make_engine(load_settings().database_url)) as session:
            submit_reader_reports(session, "bench2")
            labels = session.exec(  # the first case's slice labels, apex first
                select(CaseImage.label)
                .join(Case, col(Case.id) == CaseImage.case_id)
                .where(Case.source_id == "ct-001", CaseImage.role == "slice")
                .order_by(col(CaseImage.seq))
            ).all()
        code, _, err = cli("readerstudy judge-reports bench2")
        assert code == 2
        assert err == ["readerstudy: This study has no judges configured ([[grading.judges]])."]
        pair = next(
            "\n".join(b[i : i + 2])
            for lang, b in blocks
            if lang == "bash"
            for i, line in enumerate(b)
            if line.startswith("readerstudy judge-reports bench2 --judge")
        )
        code, out, err = cli(pair, JUDGE_URL=stub.base_url)
    # the doc's last "judged" line is this pair's (the one before: a study-named judge)
    judged = [b[0] for lang, b in blocks if lang == "" and b and "(gap over the limit)" in b[0]]
    assert code == 0 and out + err == [judged[-1]], (out, err)

    shown = next(b for lang, b in blocks if lang == "" and b and b[0].startswith("1/16 · "))
    assert shown[:3] + shown[-1:] == [*labels[:3], labels[-1]] and shown[3] == "..."

    assert cli("readerstudy export bench2 --what reports -o reports.csv")[0] == 0
    # the doc's excerpt of the grouped model's rows: the same values, in any order
    excerpt = _shown_after(blocks, "readerstudy export bench2 --what reports -o reports.csv")
    columns = excerpt[0].split()
    reports = pd.read_csv("reports.csv", dtype=str, keep_default_na=False)
    grouped = reports[reports["responder"] == "open-vlm-4x4"][columns]
    assert {tuple(v for v in row if v) for row in grouped.itertuples(index=False)} == {
        tuple(line.split()) for line in excerpt[1:]
    }
    command = "readerstudy export bench2 --what mrmc --task report"
    code, out, _ = cli(command)
    shown = next(b for lang, b in blocks if lang == "" and b and b[0].startswith("reader,case,"))
    assert code == 0 and out[0].startswith(shown[0].removesuffix("..."))
    for line in shown[1:]:
        assert line == "..." or any(p.startswith(line.removesuffix("...")) for p in out), line
    code, out, err = cli("readerstudy score reports.csv")
    assert code == 0, err
    assert [s.rstrip() for s in out] == _shown_after(blocks, "readerstudy score reports.csv")
