"""Issue 39, not re-run in round 3, re-run on the current code: hostile study ZIPs.

1. A central directory of a million entries (round 3: 2 GB of the server before
   the entry cap). A real directory of 1,000,000 headers declaring 1,000,000
   (47 MB on disk) goes through ``receive_zip`` (the New study page's path) in
   a child process; its peak RSS (``VmHWM``) is compared with an
   idle child's.
2. ZIP errors that escaped as Streamlit's error box: the page catches only
   ``SetupError`` (and ``AuthError``), so every malformed ZIP must come out of
   ``receive_zip`` as a ``SetupError`` with our message, audited, nothing kept.
"""

from __future__ import annotations

import os
import stat
import struct
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlmodel import Session

from reader_app.core.settings import PROJECT_ROOT, Settings
from reader_app.models import Reader
from reader_app.study_setup.service import SetupError, receive_zip
from tests.factories import make_reader, make_study
from tests.reader_app.study_setup import hostile_zips

MB = 1_000_000

CHILD = """
import sys
from pathlib import Path
from sqlmodel import Session
from reader_app.core.db import make_engine
from reader_app.core.settings import load_settings
from reader_app.models import Reader
from reader_app.study_setup.service import SetupError, receive_zip
from sqlmodel import select
settings = load_settings()
with Session(make_engine(settings.database_url, pooled=False)) as session:
    # the idle child ("-") does all but the upload: the same imports, connection and query
    actor = session.exec(select(Reader).where(Reader.code == "C01")).one()
    if sys.argv[1] != "-":
        try:
            with open(sys.argv[1], "rb") as fh:
                receive_zip(
                    session=session, settings=settings, actor=actor, upload=fh, name="x.zip"
                )
        except SetupError as exc:
            print("SetupError", exc)
# VmHWM: this process's peak resident set since exec (ru_maxrss from wait4 also counts
# the forked parent's pages before exec, which hides a child's own growth)
status = Path("/proc/self/status").read_text()
print("VmHWM", next(l.split()[1] for l in status.splitlines() if l.startswith("VmHWM")))
"""


def _child(archive: str, settings: Settings, log: Path) -> tuple[int, str]:
    env = {
        **os.environ,
        "READERSTUDY_DATABASE_URL": settings.database_url,
        "READERSTUDY_DATA_DIR": str(settings.data_dir),
    }
    with log.open("w") as fh:
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, archive], cwd=PROJECT_ROOT, env=env, stdout=fh, stderr=fh
        )
        status = child.wait()
    out = log.read_text()
    assert status == 0, out
    lines = out.strip().splitlines()
    assert lines[-1].startswith("VmHWM "), out
    return int(lines[-1].split()[1]) * 1024, "\n".join(lines[:-1])


def _million(path: Path) -> Path:
    """1,000,000 real central directory headers (47 bytes each), a ZIP64 end record and
    locator declaring all of them, and an end record pointing to the ZIP64 one."""
    real = hostile_zips.real_directory(path, 1_000_000, declared=0xFFFF).read_bytes()
    directory = real[:-22]
    size = len(directory)
    record = struct.pack(
        "<4sQHHIIQQQQ", b"PK\x06\x06", 44, 45, 45, 0, 0, 1_000_000, 1_000_000, size, 0
    )
    locator = struct.pack("<4sIQI", b"PK\x06\x07", 0, size, 1)
    eocd = struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    path.write_bytes(directory + record + locator + eocd)
    return path


def _coordinator(session: Session, settings: Settings) -> Reader:
    home = make_study(session, settings.asset_dir, n_cases=1, slug="home")
    coordinator = make_reader(session, home, code="C01", role="coordinator").reader
    session.commit()
    return coordinator


def test_a_real_million_entry_directory_is_refused_in_bounded_memory(
    session: Session, settings: Settings, tmp_path: Path
) -> None:
    _coordinator(session, settings)
    archive = _million(tmp_path / "million.zip")
    assert archive.stat().st_size == 1_000_000 * 47 + 56 + 20 + 22  # 47 MB of real headers
    baseline, _ = _child("-", settings, tmp_path / "idle.log")
    peak, out = _child(str(archive), settings, tmp_path / "refuse.log")
    assert out.strip().splitlines()[-1] == (
        "SetupError the ZIP declares 1,000,000 entries; at most 20,000 are allowed"
    )
    # measured: +2 MB over the idle child on SQLite and on PostgreSQL; zipfile itself would read
    # the 47 MB directory whole and build 1,000,000 ZipInfo objects (round 3: 2 GB)
    assert peak - baseline < 16 * MB, f"{peak / MB:.0f} MB against {baseline / MB:.0f} MB idle"
    print(f"peak RSS {peak / MB:.1f} MB, idle {baseline / MB:.1f} MB")
    assert list((settings.data_dir / ".setup").glob("import-*")) == []


# --- item 2: every malformed ZIP is a SetupError (the page's clear message) ---------------


def _good(path: Path) -> bytes:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("manifest.csv", "case_id,file\nc1,images/a.png\n")
        zf.writestr("images/a.png", b"x" * 4000)
    return path.read_bytes()


def truncated_tail(path: Path) -> Path:
    """The last 30 bytes (the end record) cut off, as an interrupted copy leaves it."""
    path.write_bytes(_good(path)[:-30])
    return path


def truncated_entry(path: Path) -> Path:
    """The directory kept, but 2,000 bytes of the image's data cut out of the middle."""
    data = _good(path)
    cd = data.index(hostile_zips.CD)
    cut = cd - 2000
    body = data[:cut] + data[cd:]
    # the directory's offsets now point 2,000 bytes past its real start
    path.write_bytes(body)
    return path


def encrypted(path: Path) -> Path:
    """Bit 0 (traditional PKWARE encryption) set in the local and central headers."""
    data = _good(path)
    cd = hostile_zips._cd(data, b"images/a.png")
    flags = struct.unpack_from("<H", data, cd + 8)[0]
    data = hostile_zips._patch(data, cd + 8, "<H", flags | 1)
    local = data.index(hostile_zips.LOCAL + b"", data.index(b"images/a.png") - 30)
    data = hostile_zips._patch(data, local + 6, "<H", flags | 1)
    path.write_bytes(data)
    return path


def zip64_lies(path: Path) -> Path:
    """A ZIP64 end record declaring 1,000,000 entries of a directory that is not there."""
    return hostile_zips.declares_entries(path, 1_000_000)


def zip64_offset_lies(path: Path) -> Path:
    """A ZIP64 end record declaring 3 entries at an offset 2**40 bytes into a 98-byte file."""
    data = bytearray(hostile_zips.declares_entries(path, 3).read_bytes())
    data[48:56] = (2**40).to_bytes(8, "little")  # the record's directory offset
    path.write_bytes(bytes(data))
    return path


def traversal(path: Path) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("manifest.csv", "case_id\n")
        zf.writestr("../../evil.txt", "x")
    return path


def symlink(path: Path) -> Path:
    link = zipfile.ZipInfo("images/a.png")
    link.external_attr = (stat.S_IFLNK | 0o777) << 16
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("manifest.csv", "case_id\n")
        zf.writestr(link, "/etc/passwd")
    return path


MALFORMED: list[tuple[Callable[[Path], Path], str]] = [
    (truncated_tail, "not a ZIP"),
    (truncated_entry, "damaged entry"),
    (hostile_zips.bad_crc, "damaged entry (Bad CRC-32"),
    (encrypted, "encrypted entry"),
    (zip64_lies, "declares 1,000,000 entries"),
    (zip64_offset_lies, "directory claims more bytes than the file has"),
    (traversal, "path traversal"),
    (symlink, "symbolic link in the ZIP"),
]


@pytest.mark.parametrize(("build", "message"), MALFORMED, ids=[m[0].__name__ for m in MALFORMED])
def test_every_malformed_zip_is_a_setup_error_with_our_message(
    session: Session,
    settings: Settings,
    tmp_path: Path,
    build: Callable[[Path], Path],
    message: str,
) -> None:
    coordinator = _coordinator(session, settings)
    archive = build(tmp_path / "bad.zip")
    with archive.open("rb") as fh, pytest.raises(SetupError) as refused:
        receive_zip(session=session, settings=settings, actor=coordinator, upload=fh, name="x.zip")
    assert message in str(refused.value)
    assert "Traceback" not in str(refused.value)
    assert list((settings.data_dir / ".setup").glob("import-*")) == []
