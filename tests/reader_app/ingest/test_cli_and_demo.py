"""`readerstudy import` and the demo study, on SQLite and PostgreSQL."""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

import pytest
from sqlmodel import Session, col, select

from reader_app.commands import import_study
from reader_app.core.db import make_engine
from reader_app.core.settings import Settings
from reader_app.ingest.demo import (
    CASE_SOURCES,
    DEMO_DIR,
    DEMO_SLUG,
    SERIES_DIR,
    SERIES_SOURCE,
    SOURCES,
    ensure_demo_study,
)
from reader_app.models import AnswerKey, Case, CaseImage, Study
from reader_app.study.case_reports import answer_mode, reference_reports
from tests.reader_app.ingest.helpers import case, copy_sample, write_manifest


def run_cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="readerstudy")
    import_study.add_parser(parser.add_subparsers())
    args = parser.parse_args(argv)
    code: int = args.func(args)
    return code


def test_cli_imports_and_reports(
    settings: Settings, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "knee-study"
    copy_sample("CT_small.dcm", folder / "a.dcm")
    manifest = write_manifest(folder, [case("k1", "a.dcm", windows="bone")])
    assert run_cli(["import", str(manifest)]) == 0
    out, err = capsys.readouterr()
    assert "Ingestion report: manifest.csv -> study 'knee-study'" in out
    assert "case k1 (spot): a.dcm: DICOM CT 128x128" in out
    assert out.strip().endswith("imported study 'knee-study': 1 case(s), 1 image(s)")
    assert "import: 100%|##########| 2/2 [" in err and ", done]" in err  # the progress bar

    assert run_cli(["import", str(manifest), "--study", "knee-study"]) == 2
    out, err = capsys.readouterr()
    assert "readerstudy: import refused" in err and "already exists" in err


def test_cli_error_names_file_and_exits_nonzero(
    settings: Settings, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = write_manifest(tmp_path, [case("k1", "missing.dcm")])
    assert run_cli(["import", str(manifest), "--study", "x", "--quiet"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert "manifest.csv line 2, field 'files', missing.dcm: file not found" in err


def test_demo_study_is_built_once(settings: Settings) -> None:
    assert ensure_demo_study(settings) == DEMO_SLUG
    assert ensure_demo_study(settings) == DEMO_SLUG  # present: not built again
    engine = make_engine(settings.database_url, pooled=False)
    with Session(engine) as s:
        (study,) = s.exec(select(Study)).all()
        assert '"practice_count": 1' in study.config_json
        cases = s.exec(select(Case).order_by(col(Case.position))).all()
        kinds = {c.source_id: (c.kind, c.modality, c.practice) for c in cases}
        assert kinds == {
            "practice-thorax-ct": ("spot", "CT", True),
            "chest-cr": ("spot", "CR", False),
            "shoulder-mr": ("spot", "MR", False),
            "tibia-cr": ("spot", "CR", False),
            "head-ct-strip": ("strip", "CT", False),
            "head-ct-report": ("strip", "CT", False),
        }
        # the report-mode strip case, with its reference report stored apart from the case
        report = next(c for c in cases if c.source_id == "head-ct-report")
        assert answer_mode(session=s, case_public_id=report.public_id) == "report"
        refs = reference_reports(session=s, study_id=study.id)
        assert refs[report.id].impression == "Bilateral chronic subdural haematomas."
        assert '"report_fields": ["findings", "impression"]' in study.config_json
        strip = next(c for c in cases if c.kind == "strip")
        images = s.exec(select(CaseImage).where(CaseImage.case_id == strip.id)).all()
        assert sorted({(i.role, i.window) for i in images}) == [
            ("montage", "bone"), ("montage", "brain"), ("slice", "bone"), ("slice", "brain"),
        ]  # fmt: skip
        assert len(images) == 2 * 17
        mr = next(c for c in cases if c.source_id == "shoulder-mr")
        (image,) = s.exec(select(CaseImage).where(CaseImage.case_id == mr.id)).all()
        assert image.window == "file"  # the file's own window
        # grounding: on, with reference regions on a spot and a strip case (data/demo/README.md)
        assert '"grounding": true' in study.config_json
        keys = s.exec(select(Case.source_id, AnswerKey).join(AnswerKey)).all()
        regions = {source_id: key.reference_region for source_id, key in keys}
        assert regions.pop("tibia-cr") == "650,820,120,200"
        assert regions.pop("head-ct-strip", "").split(";")[2:4] == [
            "7:145,160,70,240",  # the real slice: the right and left convexity collections
            "7:285,130,100,250",
        ]
        assert set(regions.values()) == {None}
    engine.dispose()


def test_demo_manifest_is_valid_on_its_own() -> None:
    text = (DEMO_DIR / "manifest.csv").read_text()
    # the fixed contract's columns first, then the report-mode extension columns
    assert text.startswith(
        "case_id,kind,files,diagnosis,synonyms,history,modality,practice,windows,reviewed_by,"
        "answer,reference_findings,reference_impression,reference_region,region\n"
    )
    assert (DEMO_DIR / "README.md").exists()


def test_every_demo_case_comes_from_its_own_source_image() -> None:
    """Only the head-CT strip and its report-mode twin share a source picture (issue 16:
    the head CT was shown twice, back to back); the order keeps those two apart."""
    rows = list(csv.DictReader((DEMO_DIR / "manifest.csv").open()))
    assert {r["case_id"] for r in rows} == set(CASE_SOURCES)
    # each manifest path resolves to exactly one source: a copied file or the built series
    by_path = {**SOURCES, SERIES_DIR: SERIES_SOURCE}
    assert {r["case_id"]: by_path[r["files"]] for r in rows} == CASE_SOURCES
    shared = [c for c, src in CASE_SOURCES.items() if src == SERIES_SOURCE]
    assert sorted(shared) == ["head-ct-report", "head-ct-strip"]
    assert len(set(CASE_SOURCES.values())) == len(rows) - 1


def test_the_cli_lists_200_problems_and_counts_the_rest(
    settings: Settings, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 32 item 15: 250 missing files are 250 problems, printed as 200 and a count."""
    manifest = write_manifest(tmp_path, [case(f"k{i}", f"missing{i}.dcm") for i in range(250)])
    assert run_cli(["import", str(manifest), "--study", "x", "--quiet"]) == 2
    _, err = capsys.readouterr()
    assert "(250 problem(s))" in err
    listed = [line for line in err.splitlines() if line.startswith("  - ")]
    assert len(listed) == 201 and listed[-1] == "  - ... and 50 more"
    assert "missing199.dcm: file not found" in err and "missing200.dcm" not in err
    assert run_cli(["import", str(manifest), "--study", "x"]) == 2
    _, err = capsys.readouterr()
    assert "Errors (250):" in err and "\n  ... and 50 more\n" in err
