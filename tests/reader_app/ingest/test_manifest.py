"""Manifest and study.toml parsing: every error names the file, the line and the field."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from reader_app.grading.config import grading_config
from reader_app.ingest.errors import IngestError
from reader_app.ingest.manifest import ManifestInvalid, load_manifest
from reader_app.ingest.study_config import DEFAULT_LIKERT, load_study_config
from reader_app.models import Study
from reader_app.study.config import StudyConfig
from tests.reader_app.ingest.helpers import case, write_manifest


def _touch(folder: Path, *names: str) -> None:
    for name in names:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(b"x")


def test_csv_fields_are_parsed_and_typed(tmp_path: Path) -> None:
    _touch(tmp_path, "a.dcm", "b.dcm", "series/1.dcm")
    path = write_manifest(
        tmp_path,
        [
            case(
                "c1",
                "a.dcm|b.dcm",
                synonyms="one | two||",
                practice="TRUE",
                windows="Lung|bone|lung|Original|file",
                reviewed_by=" Dr A ",
                modality="cr",
                history="cough",
            ),
            case("c2", "series", kind="strip"),
        ],
    )
    manifest = load_manifest(path)
    first, second = manifest.entries
    assert first.files == (tmp_path.resolve() / "a.dcm", tmp_path.resolve() / "b.dcm")
    assert first.synonyms == ("one", "two")
    assert first.practice is True
    # lower-cased, de-duplicated, in order; "original" (or its old name "file") is
    # stored under ingest's own name
    assert first.windows == ("lung", "bone", "file")
    assert first.reviewed_by == "Dr A"
    assert first.modality == "CR"
    assert first.history == "cough"
    assert (second.kind, second.practice, second.windows, second.history) == (
        "strip",
        False,
        (),
        None,
    )
    assert manifest.rel(second.files[0]) == "series"


def test_yaml_manifest_with_lists(tmp_path: Path) -> None:
    _touch(tmp_path, "a.dcm", "b.png")
    (tmp_path / "manifest.yaml").write_text(
        "cases:\n"
        "  - case_id: y1\n    kind: spot\n    files: [a.dcm, b.png]\n"
        "    diagnosis: Pneumothorax\n    synonyms: [PTX]\n    practice: true\n"
        "    region: chest\n"
    )
    (entry,) = load_manifest(tmp_path / "manifest.yaml").entries
    assert [p.name for p in entry.files] == ["a.dcm", "b.png"]
    assert (entry.synonyms, entry.practice, entry.region) == (("PTX",), True, "chest")


def test_all_problems_are_reported_with_line_and_field(tmp_path: Path) -> None:
    _touch(tmp_path, "a.dcm")
    outside = tmp_path.parent / f"{tmp_path.name}-outside.dcm"
    outside.write_bytes(b"x")
    os.symlink(outside, tmp_path / "link.dcm")
    path = write_manifest(
        tmp_path,
        [
            case("ok", "a.dcm"),  # line 2
            case("k", "a.dcm", kind="spto"),  # line 3
            case("m", "missing.dcm"),  # line 4
            case("e", f"../{outside.name}"),  # line 5
            case("l", "link.dcm"),  # line 6: a symlink that leaves the folder
            case("OK", "a.dcm"),  # line 7: case ids are compared case-insensitively
            case("w", "a.dcm", windows="abdomen"),  # line 8
            case("p", "a.dcm", practice="maybe"),  # line 9
            case("abs", "/etc/passwd"),  # line 10
            {"case_id": "d", "kind": "spot", "files": "a.dcm"},  # line 11: no diagnosis
        ],
    )
    with pytest.raises(ManifestInvalid) as info:
        load_manifest(path)
    errors = info.value.errors
    assert errors == [
        "manifest.csv line 3, field 'kind': must be spot or strip, not 'spto'",
        "manifest.csv line 4, field 'files', missing.dcm: file not found",
        f"manifest.csv line 5, field 'files', ../{outside.name}: "
        "path escapes the manifest's folder",
        "manifest.csv line 6, field 'files', link.dcm: path escapes the manifest's folder",
        "manifest.csv line 7, field 'case_id': duplicate case id (first at manifest.csv line 2)",
        "manifest.csv line 8, field 'windows': unknown window 'abdomen'; "
        "use lung, mediastinum, bone, brain, original, per-slice",
        "manifest.csv line 9, field 'practice': must be true or false, not 'maybe'",
        "manifest.csv line 10, field 'files', /etc/passwd: absolute path; "
        "give paths relative to the manifest",
        "manifest.csv line 11, field 'diagnosis': is empty",
    ]


def test_bad_header_names_columns(tmp_path: Path) -> None:
    (tmp_path / "manifest.csv").write_text("case_id,kind,file,diagnosis\n")
    with pytest.raises(ManifestInvalid, match=r"missing column.*files.*unknown column.*file"):
        load_manifest(tmp_path / "manifest.csv")


def test_empty_manifest_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ManifestInvalid, match="no cases"):
        load_manifest(write_manifest(tmp_path, []))


def test_study_toml_defaults_fill_every_key(tmp_path: Path) -> None:
    config = load_study_config(tmp_path / "study.toml", title="s1", practice_cases=2)
    assert config.to_json() == {
        "title": "s1",
        "consent": "",
        "practice_count": 2,
        "allow_revisions": False,
        "likert_labels": list(DEFAULT_LIKERT),
        "report_fields": [],
        "default_windows": [],
        "original_values": False,
        "theme": "dark",
        "answer": "diagnosis",
        "grounding": False,
        "grounding_required": True,
        "grounding_tolerance_px": 0.0,
        "grading": {"adjudication": "single", "judges": [], "rubric_gap": 8},
        "report_prompt": None,
        "model_slices": "as-shown",
        "aid": None,
    }


@pytest.mark.parametrize(
    ("toml", "key"),
    [
        ("grounding = 1", "grounding"),
        ("original_values = 'yes'", "original_values"),
        ("report_prompt = 'radle_v1'", "report_prompt"),
        ("model_slices = 'per_slice'", "model_slices"),
        ("grounding_required = 'yes'", "grounding_required"),
        ("grounding_tolerance_px = -1", "grounding_tolerance_px"),
        ("grounding_tolerance_px = nan", "grounding_tolerance_px"),
        ("grounding_tolerance_px = true", "grounding_tolerance_px"),
    ],
)
def test_bad_grounding_settings_are_refused_by_name(tmp_path: Path, toml: str, key: str) -> None:
    (tmp_path / "study.toml").write_text(toml + "\n")
    with pytest.raises(IngestError, match=f"key '{key}'"):
        load_study_config(tmp_path / "study.toml", title="s1", practice_cases=0)


def test_grounding_settings_are_read(tmp_path: Path) -> None:
    (tmp_path / "study.toml").write_text(
        "grounding = true\ngrounding_required = false\ngrounding_tolerance_px = 2.5\n"
    )
    config = load_study_config(tmp_path / "study.toml", title="s1", practice_cases=0)
    assert (config.grounding, config.grounding_required) == (True, False)
    assert config.grounding_tolerance_px == 2.5


def test_study_toml_values(tmp_path: Path) -> None:
    (tmp_path / "study.toml").write_text(
        'title = "Chest study"\nconsent = "I agree"\npractice_count = 1\n'
        "allow_revisions = true\nlikert_labels = ['a','b','c','d','e']\n"
        "report_fields = true\ndefault_windows = ['lung', 'mediastinum']\ntheme = 'light'\n"
    )
    config = load_study_config(tmp_path / "study.toml", title="x", practice_cases=3)
    assert config.title == "Chest study"
    assert config.practice_count == 1
    assert config.allow_revisions is True
    assert config.likert_labels == ("a", "b", "c", "d", "e")
    assert config.report_fields == ("findings", "impression")
    assert config.default_windows == ("lung", "mediastinum")
    assert config.theme == "light"


def test_study_toml_grading_table_is_accepted(tmp_path: Path) -> None:
    """docs/grading.md's [grading] table: the importer, exam and grading read one schema."""
    (tmp_path / "study.toml").write_text(
        'report_fields = ["findings"]\n[grading]\nadjudication = "double"\n'
        '[[grading.judges]]\nname = "a"\n'
        '[[grading.judges]]\nname = "b"\n'
    )
    config = load_study_config(tmp_path / "study.toml", title="x", practice_cases=0)
    assert config.grading.adjudication == "double"
    stored = json.loads(json.dumps(config.to_json()))  # what Study.config_json holds
    graded = grading_config(Study(slug="x", title="x", config_json=json.dumps(stored)))
    assert graded.grading.double and graded.report_fields == ("findings",)
    # the study names judges; what they are is the server's (READERSTUDY_JUDGES)
    assert graded.grading.judges == ("a", "b")
    assert StudyConfig.from_stored(stored, title="x") == config


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("titel = 'x'", "unknown key.*titel"),
        ("practice_count = 2", "practice_count.*is 2 but the manifest marks 1"),
        ("likert_labels = ['a']", "likert_labels.*5 non-empty"),
        ("report_fields = ['summary']", "report_fields"),
        ("default_windows = ['abdomen']", "default_windows"),
        ("allow_revisions = 'yes'", "allow_revisions.*true or false"),
        ("theme = 'sepia'", "theme.*dark, light"),
        ("title = ", "not valid TOML"),
        ("title = '" + "t" * 201 + "'", "'title'.*201 characters long; the limit is 200"),
        ('title = "a\\u0000b"', "'title'.*control character U\\+0000"),
        ("[grading]\nadjudication = 'triple'", "grading.adjudication"),
        ("[grading]\njudges = [{url = 'http://x', model = 'm'}]", "grading.judges.0..url"),
        ("[grading]\njudges = [{name = 'a', api_key_env = 'X'}]", "grading.judges.0..api_key_env"),
        ("[grading]\njudges = [{name = 'a', model = 'm'}]", "grading.judges.0..model.*unknown"),
        ("[grading]\njudges = ['a', 'a']", "grading.judges.*same judge twice"),
        ("[grading]\njudges = ['a', 'b', 'c']", "grading.judges.*one or two judges"),
        ("[grading]\njudges = [{name = 'a b'}]", "grading.judges.0..name"),
        ("[grading]\nmode = 'x'", "grading.mode"),
    ],
)
def test_study_toml_errors_name_file_and_key(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "study.toml").write_text(text)
    with pytest.raises(IngestError, match=f"^study.toml: .*{message}"):
        load_study_config(tmp_path / "study.toml", title="x", practice_cases=1)
