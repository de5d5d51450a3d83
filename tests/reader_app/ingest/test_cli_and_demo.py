"""`readerstudy import` and the demo study, on SQLite and PostgreSQL."""

from __future__ import annotations

import argparse
import io
from pathlib import Path

import pytest
from sqlmodel import Session, col, select

from reader_app.commands import import_study
from reader_app.db import make_engine
from reader_app.ingest.demo import DEMO_DIR, DEMO_SLUG, ensure_demo_study
from reader_app.models import Case, CaseImage, Study
from reader_app.settings import Settings
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
    assert "[##############################] 2/2 done" in err  # the progress bar

    assert run_cli(["import", str(manifest), "--study", "knee-study"]) == 1
    out, err = capsys.readouterr()
    assert "readerstudy: import refused" in err and "already exists" in err


def test_cli_error_names_file_and_exits_nonzero(
    settings: Settings, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = write_manifest(tmp_path, [case("k1", "missing.dcm")])
    assert run_cli(["import", str(manifest), "--study", "x", "--quiet"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert "manifest.csv line 2, field 'files', missing.dcm: file not found" in err


def test_progress_bar_redraws_on_a_terminal() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Tty()
    bar = import_study.TextProgress(stream, width=4)
    bar(1, 2, "case a")
    bar(2, 2, "done")
    assert stream.getvalue().startswith("\r[##..] 1/2 case a")
    assert stream.getvalue().rstrip().endswith("[####] 2/2 done")


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
            "head-ct": ("spot", "CT", False),
            "shoulder-mr": ("spot", "MR", False),
            "tibia-cr": ("spot", "CR", False),
            "head-ct-strip": ("strip", "CT", False),
        }
        strip = next(c for c in cases if c.kind == "strip")
        images = s.exec(select(CaseImage).where(CaseImage.case_id == strip.id)).all()
        assert sorted({(i.role, i.window) for i in images}) == [
            ("montage", "bone"), ("montage", "brain"), ("slice", "bone"), ("slice", "brain"),
        ]  # fmt: skip
        assert len(images) == 2 * 17
        head = next(c for c in cases if c.source_id == "head-ct")
        (image,) = s.exec(select(CaseImage).where(CaseImage.case_id == head.id)).all()
        assert (image.window, image.width) == ("file", 512)  # the file's own W/L 100/40
    engine.dispose()


def test_demo_manifest_is_valid_on_its_own() -> None:
    text = (DEMO_DIR / "manifest.csv").read_text()
    assert text.startswith(
        "case_id,kind,files,diagnosis,synonyms,history,modality,practice,windows,reviewed_by\n"
    )
    assert (DEMO_DIR / "README.md").exists()
