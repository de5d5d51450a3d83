"""Report-mode cases through import, on SQLite and PostgreSQL: study.toml ``answer``,
the manifest's ``answer`` override and reference reports (stored apart from the case)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from reader_app.core.db import make_engine
from reader_app.core.settings import Settings
from reader_app.ingest.errors import ImportFailed
from reader_app.ingest.importer import import_manifest
from reader_app.models import AnswerKey, Case, CaseReport, Study
from reader_app.study.case_reports import answer_mode, reference_reports, report_case_ids
from tests.reader_app.ingest.helpers import case, phantom, write_manifest, write_nifti

FINDINGS = "Spiculated 22 mm nodule in the right upper lobe. No effusion."
IMPRESSION = "Right upper lobe carcinoma.\nNo metastasis seen."


@pytest.fixture
def db(settings: Settings) -> Iterator[Engine]:
    engine = make_engine(settings.database_url, pooled=False)
    yield engine
    engine.dispose()


def _folder(tmp_path: Path, toml: str) -> Path:
    folder = tmp_path / "bench2"
    folder.mkdir()
    write_nifti(folder / "ct1.nii.gz", phantom())
    write_nifti(folder / "ct2.nii.gz", phantom(n=18))
    (folder / "study.toml").write_text(toml)
    return folder


def test_report_study_imports_modes_and_references(
    settings: Settings, db: Engine, tmp_path: Path
) -> None:
    folder = _folder(tmp_path, 'answer = "report"\n')
    manifest = write_manifest(
        folder,
        [
            case("ct1", "ct1.nii.gz", kind="strip", diagnosis="",
                 reference_findings=FINDINGS, reference_impression=IMPRESSION),
            case("ct2", "ct2.nii.gz", kind="strip", answer="diagnosis", diagnosis="Normal chest"),
        ],
    )  # fmt: skip
    result = import_manifest(manifest, settings=settings)
    with Session(db) as s:
        study = s.exec(select(Study).where(Study.id == result.study_id)).one()
        config = json.loads(study.config_json)
        assert config["answer"] == "report"
        assert config["report_fields"] == ["findings", "impression"]  # turned on by report cases
        cases = {c.source_id: c for c in s.exec(select(Case).where(Case.study_id == study.id))}
        assert answer_mode(session=s, case_public_id=cases["ct1"].public_id) == "report"
        assert answer_mode(session=s, case_public_id=cases["ct2"].public_id) == "diagnosis"
        assert report_case_ids(session=s, study_id=study.id or 0) == {cases["ct1"].id}
        refs = reference_reports(session=s, study_id=study.id or 0)
        assert refs[cases["ct1"].id or 0].findings == FINDINGS
        assert refs[cases["ct1"].id or 0].impression == IMPRESSION
        # an empty diagnosis takes the impression's first line as the key
        key = s.exec(select(AnswerKey).where(AnswerKey.case_id == cases["ct1"].id)).one()
        assert key.diagnosis == "Right upper lobe carcinoma."
        assert len(s.exec(select(CaseReport)).all()) == 1
        # the case row itself carries no reference text
        assert FINDINGS not in json.dumps(cases["ct1"].model_dump(), default=str)


def test_report_case_without_reference_is_refused_naming_the_line(
    settings: Settings, db: Engine, tmp_path: Path
) -> None:
    folder = _folder(tmp_path, "")
    manifest = write_manifest(
        folder,
        [
            case("ct1", "ct1.nii.gz", kind="strip", answer="report", reference_findings=""),
            case("ct2", "ct2.nii.gz", kind="strip", answer="Report "),
        ],
    )
    with pytest.raises(ImportFailed) as err:
        import_manifest(manifest, settings=settings)
    assert "manifest.csv line 2" in str(err.value)
    assert "a report case needs a reference report" in str(err.value)
    assert "line 3" in str(err.value)  # the mode is case-insensitive, still no reference
    with Session(db) as s:
        assert s.exec(select(Study)).all() == []


def test_bad_answer_values_name_the_place(settings: Settings, tmp_path: Path) -> None:
    folder = _folder(tmp_path, "")
    manifest = write_manifest(folder, [case("ct1", "ct1.nii.gz", kind="strip", answer="essay")])
    with pytest.raises(ImportFailed, match=r"line 2, field 'answer'.*diagnosis or report"):
        import_manifest(manifest, settings=settings)
    (folder / "study.toml").write_text('answer = "essay"\n')
    manifest = write_manifest(folder, [case("ct1", "ct1.nii.gz", kind="strip")])
    with pytest.raises(ImportFailed, match=r"study.toml.*'answer'"):
        import_manifest(manifest, settings=settings)
