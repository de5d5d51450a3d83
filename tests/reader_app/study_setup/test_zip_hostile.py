"""Issue 32 items 5 and 10: crafted ZIPs refused by name, before zipfile parses a directory.

Item 5 was a 235 MB upload of 5,000,000 directory entries: 51 s and 2 GB of the
server's memory before the 20,000-entry check. Here the same declaration (a
ZIP64 end record saying 5,000,000 entries of 47 bytes) and a real directory of
200,000 entries whose end record says 1 are each refused in a child process
whose peak RSS (``os.wait4``'s ru_maxrss) is compared with the same child doing
nothing. Item 10: each malformed ZIP is a named refusal, with a rule code.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import select as sa_select
from sqlmodel import Session, SQLModel, col, select

from reader_app.core.settings import PROJECT_ROOT, Settings
from reader_app.models import AuditEvent
from reader_app.study_setup.service import SetupError, receive_zip
from reader_app.study_setup.workspace import file_sha256
from reader_app.study_setup.zip_directory import UnsafeZip
from reader_app.study_setup.zipsafe import safe_extract
from tests.factories import make_reader, make_study
from tests.reader_app.study_setup import hostile_zips

MB = 1_000_000
CHILD = """
import sys, zipfile
from pathlib import Path
from reader_app.study_setup.zipsafe import UnsafeZip, safe_extract
if sys.argv[1] != "-":
    dest = Path(sys.argv[2]); dest.mkdir()
    try:
        safe_extract(Path(sys.argv[1]), dest, max_bytes=500_000_000)
    except UnsafeZip as exc:
        print(exc.rule, exc)
"""


def _child(archive: str, dest: Path) -> tuple[int, str]:
    """(peak RSS in bytes, output) of a fresh interpreter refusing ``archive``."""
    cmd = [sys.executable, "-c", CHILD, archive, str(dest)]
    out = dest.parent / f"{dest.name}.log"
    with out.open("w") as fh:
        child = subprocess.Popen(cmd, cwd=PROJECT_ROOT, stdout=fh, stderr=fh)
        _, status, usage = os.wait4(child.pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, out.read_text()
    return usage.ru_maxrss * 1024, out.read_text()


def test_a_declared_five_million_entries_is_refused_from_the_end_record(tmp_path: Path) -> None:
    archive = hostile_zips.declares_entries(tmp_path / "many.zip", 5_000_000)
    assert archive.stat().st_size == 98  # the declaration alone, not 235 MB
    baseline, _ = _child("-", tmp_path / "idle")
    peak, out = _child(str(archive), tmp_path / "dest")
    assert out.strip() == (
        "too-many-entries the ZIP declares 5,000,000 entries; at most 20,000 are allowed"
    )
    assert peak - baseline < 10 * MB, f"{peak / MB:.0f} MB against {baseline / MB:.0f} MB idle"


def test_a_real_directory_of_200000_entries_declaring_one_is_refused_unparsed(
    tmp_path: Path,
) -> None:
    archive = hostile_zips.real_directory(tmp_path / "lying.zip", 200_000, declared=1)
    assert archive.stat().st_size == 200_000 * 47 + 22
    baseline, _ = _child("-", tmp_path / "idle")
    peak, out = _child(str(archive), tmp_path / "dest")
    assert out.strip() == (
        "too-many-entries the ZIP has more than 20,000 entries; at most 20,000 are allowed"
    )
    # zipfile would read the 9.4 MB directory whole and build 200,000 ZipInfo objects
    assert peak - baseline < 10 * MB, f"{peak / MB:.0f} MB against {baseline / MB:.0f} MB idle"
    assert not any((tmp_path / "dest").iterdir())


def test_a_directory_larger_than_the_entries_allow_is_refused(tmp_path: Path) -> None:
    # 10 declared entries, but a directory of 10 * 2048 + 1 bytes
    archive = hostile_zips.declares_entries(tmp_path / "big.zip", 10)
    data = bytearray(archive.read_bytes())
    data[40:48] = (10 * 2048 + 1).to_bytes(8, "little")  # the ZIP64 record's directory size
    archive.write_bytes(bytes(data))
    dest = tmp_path / "d"
    dest.mkdir()
    with pytest.raises(UnsafeZip, match="directory is 20,481 bytes; at most 20,480") as caught:
        safe_extract(archive, dest, max_bytes=MB, max_entries=10)
    assert caught.value.rule == "directory-too-large"


MALFORMED: list[tuple[Callable[[Path], Path], str, str]] = [
    (hostile_zips.bad_crc, "damaged-entry", "manifest.csv: damaged entry (Bad CRC-32"),
    (hostile_zips.lying_size, "damaged-entry", "images/a.dcm: damaged entry"),
    (hostile_zips.file_then_folder, "file-and-folder", "images: both a file and a folder"),
    (hostile_zips.invalid_utf8_name, "bad-name-encoding", "is marked UTF-8 but is not valid"),
    (hostile_zips.long_name, "name-too-long", "a file or folder name over 255 bytes"),
    (hostile_zips.unknown_method, "unknown-compression", "compression method 99 is not"),
]


@pytest.mark.parametrize(("build", "rule", "message"), MALFORMED, ids=[m[1] for m in MALFORMED])
def test_a_malformed_zip_is_a_named_refusal(
    tmp_path: Path, build: Callable[[Path], Path], rule: str, message: str
) -> None:
    archive = build(tmp_path / "bad.zip")
    dest = tmp_path / "d"
    dest.mkdir()
    with pytest.raises(UnsafeZip) as caught:
        safe_extract(archive, dest, max_bytes=MB)
    assert caught.value.rule == rule
    assert message in str(caught.value)


def test_the_crafted_zips_are_what_they_claim(tmp_path: Path) -> None:
    """Without the checks, zipfile itself fails on each (the finding's uncaught errors)."""
    with (
        zipfile.ZipFile(hostile_zips.bad_crc(tmp_path / "a.zip")) as zf,
        pytest.raises(zipfile.BadZipFile, match="Bad CRC-32"),
    ):
        zf.read("manifest.csv")
    with pytest.raises(UnicodeDecodeError):
        zipfile.ZipFile(hostile_zips.invalid_utf8_name(tmp_path / "b.zip"))
    with (
        zipfile.ZipFile(hostile_zips.unknown_method(tmp_path / "c.zip")) as zf,
        pytest.raises(NotImplementedError),
    ):
        zf.read("manifest.csv")
    with zipfile.ZipFile(hostile_zips.real_directory(tmp_path / "d.zip", 300)) as zf:
        assert len(zf.infolist()) == 300  # the end record said 1


@pytest.mark.parametrize(("build", "rule", "message"), MALFORMED, ids=[m[1] for m in MALFORMED])
def test_a_malformed_upload_is_refused_audited_and_nothing_else_written(
    session: Session,
    settings: Settings,
    tmp_path: Path,
    build: Callable[[Path], Path],
    rule: str,
    message: str,
) -> None:
    home = make_study(session, settings.asset_dir, n_cases=1, slug="home")
    coordinator = make_reader(session, home, code="C01", role="coordinator").reader
    session.commit()
    before = _rows(session)
    archive = build(tmp_path / "bad.zip")
    with archive.open("rb") as fh, pytest.raises(SetupError) as refused:
        receive_zip(session=session, settings=settings, actor=coordinator, upload=fh, name="x.zip")
    assert message in str(refused.value)
    session.expire_all()
    events = session.exec(select(AuditEvent).order_by(col(AuditEvent.id))).all()
    assert [e.action for e in events[-2:]] == ["setup.upload", "setup.refused"]
    assert json.loads(events[-1].detail_json) == {"rule": rule, "sha256": file_sha256(archive)}
    assert _rows(session) == before  # no table but the audit log changed
    assert list((settings.data_dir / ".setup").glob("import-*")) == []


def _rows(session: Session) -> dict[str, list[tuple[object, ...]]]:
    session.expire_all()
    return {
        table.name: [tuple(row) for row in session.execute(sa_select(table)).all()]
        for table in SQLModel.metadata.sorted_tables
        if table.name != "audit_events"
    }
