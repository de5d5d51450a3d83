"""``readerstudy grade --key KEY.csv RESPONSES.csv [--auto-only]`` end to end."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from sqlmodel import Session

from reader_app.cli import main
from reader_app.core.settings import Settings
from reader_app.grading.memory import record_verdict
from tests.reader_app.grading.helpers import case_by_source, make_key_study
from tests.reader_app.grading.judge_server import JudgeServer, Say

KEY = """case_id,diagnosis,synonyms
bone-01,Osteopoikilosis,Osteopathia condensans disseminata
chest-02,Pectus excavatum,Funnel chest
neuro-03,Pericallosal lipoma with agenesis of the corpus callosum,
vasc-04,Carotid-cavernous fistula,CCF|Caroticocavernous fistula
"""
# the tidy frame as `readerstudy export` writes it
RESPONSES = """responder,kind,group,case_id,status,diagnosis,likert,correct
R01,human,PGY2,bone-01,answered,Osteopoikilosis,4,
gpt-run,model,OpenAI,bone-01,answered,osteopoikilosis.,3,
R01,human,PGY2,chest-02,answered,Pectus carinatum,3,
gpt-run,model,OpenAI,chest-02,answered,Funnel-chest,2,
R01,human,PGY2,neuro-03,answered,Complete agenesis of corpus callosum,2,
gpt-run,model,OpenAI,neuro-03,idk,,,
R01,human,PGY2,vasc-04,failure,PARSE_FAILED,,
gpt-run,model,OpenAI,vasc-04,answered,Carotid cavernous fistula,4,
R02,human,board-certified,vasc-04,invalid,CCF,,
"""


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    key, responses = tmp_path / "key.csv", tmp_path / "responses.csv"
    key.write_text(KEY)
    responses.write_text(RESPONSES)
    return key, responses


def _rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def _verdicts(text: str) -> list[tuple[str, str, str]]:
    return [(r["responder"], r["case_id"], r["verdict"]) for r in _rows(text)]


def test_auto_only_writes_a_verdict_column(
    files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    key, responses = files
    assert main(["grade", "--key", str(key), str(responses), "--auto-only"]) == 0
    out, err = capsys.readouterr()
    assert _verdicts(out) == [
        ("R01", "bone-01", "correct"),  # Osteopoikilosis / Osteopoikilosis
        ("gpt-run", "bone-01", "correct"),
        ("R01", "chest-02", "pending"),  # Pectus carinatum is never auto-correct
        ("gpt-run", "chest-02", "correct"),  # a synonym, hyphenated
        ("R01", "neuro-03", "pending"),  # only the secondary finding
        ("gpt-run", "neuro-03", ""),  # idk: no verdict
        ("R01", "vasc-04", ""),  # failure
        ("gpt-run", "vasc-04", "correct"),
        ("R02", "vasc-04", ""),  # invalid (no Likert): scored 0 by status
    ]
    # every input column comes back unchanged, verdict added at the end
    rows = _rows(out)
    assert list(rows[0]) == [*_rows(RESPONSES)[0], "verdict"]
    assert [{k: v for k, v in r.items() if k != "verdict"} for r in rows] == _rows(RESPONSES)
    assert "4 by key" in err and "2 pending (2 distinct answers)" in err


def test_output_file_and_derived_status(tmp_path: Path, files: tuple[Path, Path]) -> None:
    key, _ = files
    bare = tmp_path / "bare.csv"
    bare.write_text(
        "case_id,diagnosis,likert\n"
        "bone-01,Osteopoikilosis,4\n"
        "bone-01,I don't know,\n"
        "chest-02,Pectus carinatum,1\n"
        "chest-02,PARSE_FAILED,\n"
        "chest-02,Funnel chest,\n"
    )
    out = tmp_path / "graded.csv"
    assert main(["grade", "--key", str(key), str(bare), "--auto-only", "-o", str(out)]) == 0
    assert [r["verdict"] for r in _rows(out.read_text())] == [
        "correct",
        "",
        "pending",
        "",
        "",  # a diagnosis without Likert is invalid (SCORING.md section 1)
    ]


def test_study_grade_memory_is_reused(
    files: tuple[Path, Path],
    session: Session,
    settings: Settings,
    capsys: pytest.CaptureFixture[str],
) -> None:
    key, responses = files
    study = make_key_study(session, settings.asset_dir, slug="radle")
    chest = case_by_source(session, study, "chest-02")
    record_verdict(
        session=session,
        study_id=study.id or 0,
        case_id=chest.id or 0,
        normalized_answer="pectus carinatum",
        correct=0,
        source="adjudicator",
        decided_by="A01",
    )
    session.commit()
    args = ["grade", "--key", str(key), str(responses), "--auto-only", "--study", "radle"]
    assert main(args) == 0
    out, err = capsys.readouterr()
    assert ("R01", "chest-02", "incorrect") in _verdicts(out)
    assert "1 by grade memory" in err
    assert main(["grade", "--key", str(key), str(responses), "--study", "nope"]) == 2
    assert "no study named 'nope'" in capsys.readouterr().err


def test_default_mode_asks_two_judges(
    files: tuple[Path, Path], settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    key, responses = files
    with JudgeServer() as server:
        server.script("judge-a", Say.verdict("incorrect"))
        server.script("judge-b", Say.verdict("incorrect"))
        base = ["grade", "--key", str(key), str(responses)]
        judges = ["--judge", server.base_url, "judge-a", "--judge", server.base_url, "judge-b"]
        assert main([*base, "--auto-only", *judges]) == 0  # auto-only: no network
        assert server.calls == []
        capsys.readouterr()
        assert main([*base, *judges]) == 0
        out, err = capsys.readouterr()
        assert len(server.calls) == 4  # two open answers x two judges
        assert main([*base, *judges]) == 0  # cached in the configured database
        assert len(server.calls) == 4
    assert ("R01", "chest-02", "incorrect") in _verdicts(out)
    assert ("R01", "neuro-03", "incorrect") in _verdicts(out)
    assert "2 by judges" in err and "0 pending" in err


def test_bad_inputs_fail_with_a_message(
    tmp_path: Path, files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    key, responses = files
    bad_key = tmp_path / "bad.csv"
    bad_key.write_text("case_id,diagnosis,synonyms\nbone-01,,\n")
    assert main(["grade", "--key", str(bad_key), str(responses)]) == 2
    assert "line 2" in capsys.readouterr().err
    no_cols = tmp_path / "nocols.csv"
    no_cols.write_text("who,what\nx,y\n")
    assert main(["grade", "--key", str(key), str(no_cols)]) == 2
    assert "case_id" in capsys.readouterr().err
    assert main(["grade", "--key", str(tmp_path / "absent.csv"), str(responses)]) == 2
    three = [a for name in "abc" for a in ("--judge", "http://127.0.0.1:9/v1", name)]
    assert main(["grade", "--key", str(key), str(responses), *three]) == 2
    assert "one or two judges" in capsys.readouterr().err
