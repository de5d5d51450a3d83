"""The adapter: its reading of importer messages (file, line, field, message), the scan
and the staging of the browser's import."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from reader_app.core.settings import Settings
from reader_app.ingest.errors import ImportFailed
from reader_app.ingest.report import Problem
from reader_app.ingest.staging import ImportProgress
from reader_app.study_setup.validation import CLEAR, EXCLUDE, run_import, scan
from tests.reader_app.ingest.helpers import case, copy_sample, write_manifest
from tests.reader_app.ingest.test_import import tiny_ct


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (
            "manifest.csv line 4, field 'kind': must be spot or strip, not 'x'",
            ("manifest.csv", 4, "kind", "must be spot or strip, not 'x'"),
        ),
        (
            "manifest.csv line 7, field 'files', images/a.dcm: file not found",
            ("manifest.csv", 7, "files", "images/a.dcm: file not found"),
        ),
        (
            "manifest.yaml case 2: unknown field(s) colour",
            ("manifest.yaml", 2, None, "unknown field(s) colour"),
        ),
        (
            "manifest.csv line 1: missing column(s) kind; expected case_id,kind",
            ("manifest.csv", 1, None, "missing column(s) kind; expected case_id,kind"),
        ),
        ("manifest.csv: no cases", ("manifest.csv", None, None, "no cases")),
        ("something odd", (None, None, None, "something odd")),
    ],
)
def test_the_setup_reads_importer_messages_with_the_one_problem_type(
    message: str, expected: tuple[str | None, int | None, str | None, str]
) -> None:
    problem = Problem.parse(message)
    assert (problem.file, problem.line, problem.field, problem.message) == expected
    assert problem.text == message  # what the page lists is the importer's own wording


def test_a_problem_placed_by_its_parts_is_worded_as_the_importer_words_it() -> None:
    for message in (
        "manifest.csv line 4, field 'kind': must be spot or strip, not 'x'",
        "manifest.csv: no cases",
        "manifest.csv line 1: missing column(s) kind",
    ):
        p = Problem.parse(message)
        assert p.file is not None
        assert Problem.at(p.file, p.line, p.field, p.message).text == message
    yaml_row = Problem.at_row("manifest.yaml case 3", "files", "x.dcm: file not found")
    assert (yaml_row.file, yaml_row.line, yaml_row.text) == (
        "manifest.yaml",
        3,
        "manifest.yaml case 3, field 'files': x.dcm: file not found",  # YAML: entry 3
    )


def test_scan_names_the_reference_field_a_case_check_refused(
    settings: Settings, tmp_path: Path
) -> None:
    """A box checked against the stored image fails per case: the browser shows its field."""
    folder = tmp_path / "s"
    tiny_ct(folder)
    manifest = write_manifest(folder, [case("c1", "tiny.dcm", reference_region="10,10,7,1")])
    (problem,) = scan(manifest, settings=settings, title="t").problems
    assert (problem.file, problem.line, problem.field) == ("manifest.csv", 2, "reference_region")
    assert "box 10,10,7,1 lies outside the stored image (16x16 pixels" in problem.message


def _us_study(folder: Path) -> Path:
    """ok: a plain CT; us: an ultrasound the guard flags (the CSV names a reviewer);
    bad: a file that is no image."""
    tiny_ct(folder)
    copy_sample("US1_UNCR.dcm", folder / "us.dcm")  # BurnedInAnnotation absent
    (folder / "bad.dcm").write_bytes(b"not an image")
    rows = [case("ok", "tiny.dcm"), case("us", "us.dcm", reviewed_by="Dr Roe")]
    return write_manifest(folder, [*rows, case("bad", "bad.dcm")])


def _left_over(settings: Settings) -> list[str]:
    return [p.name for p in settings.data_dir.iterdir() if p.name.startswith(".")]


def test_scan_renders_flagged_cases_and_puts_case_problems_on_their_row(
    settings: Settings, tmp_path: Path
) -> None:
    """The importer's one staging loop: a flagged case is rendered for the review screen
    (whatever the CSV's reviewed_by), a case's file problem names its manifest row."""
    result = scan(_us_study(tmp_path / "s"), settings=settings, title="t")
    (problem,) = result.problems
    assert (problem.file, problem.line, problem.field) == ("manifest.csv", 4, "files")
    assert problem.message == "case bad: bad.dcm: not a DICOM, NIfTI, PNG or JPEG file"
    (flagged,) = result.flagged
    assert (flagged.case_id, flagged.where, flagged.file) == ("us", "manifest.csv line 3", "us.dcm")
    assert flagged.reason == "BurnedInAnnotation is absent for a US image"
    assert flagged.manifest_reviewed_by == "Dr Roe"  # shown; the screen decides
    assert flagged.images and all(im.png.startswith(b"\x89PNG") for im in flagged.images)
    assert (result.cases, result.strips) == (3, 0)
    assert _left_over(settings) == []  # the staging folder is gone


def test_run_import_applies_decisions_reports_progress_and_leaves_nothing_on_failure(
    settings: Settings, tmp_path: Path
) -> None:
    manifest = _us_study(tmp_path / "s")
    steps: list[ImportProgress] = []
    with pytest.raises(ImportFailed) as failed:  # the bad file still fails the whole import
        run_import(
            manifest,
            settings=settings,
            slug="t",
            decisions={"us": EXCLUDE},
            reviewer="C01",
            progress=steps.append,
        )
    assert failed.value.errors == ["case bad: bad.dcm: not a DICOM, NIfTI, PNG or JPEG file"]
    assert _left_over(settings) == []

    steps.clear()
    shown = {f.case_id: f.digests for f in scan(manifest, settings=settings, title="t").flagged}
    config, staged, report, staging = run_import(
        manifest,
        settings=settings,
        slug="t",
        decisions={"us": CLEAR, "bad": EXCLUDE},
        reviewer="C01",
        progress=steps.append,
        reviewed=shown,
    )
    try:
        assert [s.prepared.entry.case_id for s in staged] == ["ok", "us"]
        assert staged[1].prepared.entry.reviewed_by == "C01"  # the screen's decision
        assert config.title == "t" and report.errors == report.refused == []
        assert [(s.done, s.total, s.message) for s in steps] == [
            (0, 3, "case ok"),
            (1, 3, "case us"),
            (2, 3, "saving"),
        ]
        assert steps[-1].images == sum(len(s.digests) for s in staged)
    finally:
        shutil.rmtree(staging)
