"""ZIP safety: traversal, symlinks, bombs, entry caps; memory stays flat while extracting."""

from __future__ import annotations

import hashlib
import io
import re
import stat
import tracemalloc
import zipfile
from pathlib import Path

import pytest

from reader_app.study_setup.zip_directory import UnsafeZip
from reader_app.study_setup.zipsafe import receive_upload, safe_extract

MB = 1_000_000


def _zip(path: Path, entries: list[tuple[zipfile.ZipInfo | str, bytes]]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for info, data in entries:
            zf.writestr(info, data)
    return path


def _dest(tmp_path: Path) -> Path:
    dest = tmp_path / "box" / "files"
    dest.mkdir(parents=True)
    return dest


def _everything(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


@pytest.mark.parametrize(
    ("name", "rule"),
    [
        ("../evil.txt", "path traversal"),
        ("images/../../evil.txt", "path traversal"),
        ("..\\evil.txt", "path traversal"),
        ("/tmp/evil.txt", "absolute path"),
        ("C:/evil.txt", "absolute path"),
    ],
)
def test_traversal_and_absolute_names_refused_before_any_write(
    tmp_path: Path, name: str, rule: str
) -> None:
    archive = _zip(tmp_path / "t.zip", [("manifest.csv", b"ok"), (name, b"pwned")])
    dest = _dest(tmp_path)
    with pytest.raises(UnsafeZip, match=rule):
        safe_extract(archive, dest, max_bytes=MB)
    assert _everything(dest) == []  # every name is checked before the first byte is written
    assert _everything(tmp_path / "box") == ["files"]
    assert not (tmp_path / "evil.txt").exists()


def test_symlink_entry_refused(tmp_path: Path) -> None:
    link = zipfile.ZipInfo("images/passwd")
    link.create_system = 3  # Unix
    link.external_attr = (stat.S_IFLNK | 0o777) << 16
    archive = _zip(tmp_path / "s.zip", [("manifest.csv", b"ok"), (link, b"/etc/passwd")])
    dest = _dest(tmp_path)
    with pytest.raises(UnsafeZip, match="images/passwd: symbolic link"):
        safe_extract(archive, dest, max_bytes=MB)
    assert _everything(dest) == []


def test_device_file_entry_refused(tmp_path: Path) -> None:
    fifo = zipfile.ZipInfo("pipe")
    fifo.create_system = 3
    fifo.external_attr = (stat.S_IFIFO | 0o644) << 16
    archive = _zip(tmp_path / "f.zip", [(fifo, b"")])
    with pytest.raises(UnsafeZip, match="pipe: not a regular file"):
        safe_extract(archive, _dest(tmp_path), max_bytes=MB)


def test_zip_bomb_refused_with_memory_bounded(tmp_path: Path) -> None:
    # 300 MB of zeros deflates to ~0.3 MB: the cap is 50 MB
    archive = tmp_path / "bomb.zip"
    with (
        zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf,
        zf.open("bomb.bin", "w", force_zip64=True) as fh,
    ):
        for _ in range(300):
            fh.write(bytes(MB))
    assert archive.stat().st_size < 2 * MB
    dest = _dest(tmp_path)
    tracemalloc.start()
    try:
        with pytest.raises(
            UnsafeZip, match=re.escape("expand to 300.0 MB, over the limit of 50.0 MB")
        ):
            safe_extract(archive, dest, max_bytes=50 * MB)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 5 * MB
    assert _everything(dest) == []


def test_streaming_cap_holds_even_when_the_total_is_allowed_per_entry(tmp_path: Path) -> None:
    # extracting a 120 MB entry under a 200 MB cap streams in 1 MiB chunks: memory stays flat
    archive = tmp_path / "big.zip"
    with (
        zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf,
        zf.open("big.bin", "w", force_zip64=True) as fh,
    ):
        for _ in range(120):
            fh.write(bytes(MB))
    dest = _dest(tmp_path)
    tracemalloc.start()
    try:
        extracted = safe_extract(archive, dest, max_bytes=200 * MB)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert (extracted.files, extracted.bytes) == (1, 120 * MB)
    assert (dest / "big.bin").stat().st_size == 120 * MB
    assert peak < 5 * MB  # a read of the whole entry would have needed 120 MB


def test_too_many_entries_refused(tmp_path: Path) -> None:
    archive = _zip(tmp_path / "many.zip", [(f"f{i}.txt", b"x") for i in range(30)])
    with pytest.raises(UnsafeZip, match="the ZIP declares 30 entries; at most 20 are allowed"):
        safe_extract(archive, _dest(tmp_path), max_bytes=MB, max_entries=20)


def test_duplicate_entry_refused(tmp_path: Path) -> None:
    archive = tmp_path / "dup.zip"
    with zipfile.ZipFile(archive, "w") as zf, pytest.warns(UserWarning, match="Duplicate"):
        zf.writestr("manifest.csv", b"one")
        zf.writestr("manifest.csv", b"two")
    with pytest.raises(UnsafeZip, match=re.escape("manifest.csv: appears twice")):
        safe_extract(archive, _dest(tmp_path), max_bytes=MB)


def test_not_a_zip_refused(tmp_path: Path) -> None:
    archive = tmp_path / "x.zip"
    archive.write_bytes(b"PK but not really")
    with pytest.raises(UnsafeZip, match=re.escape("x.zip: not a ZIP file")):
        safe_extract(archive, _dest(tmp_path), max_bytes=MB)


def test_good_zip_extracts_and_skips_finder_litter(tmp_path: Path) -> None:
    archive = _zip(
        tmp_path / "ok.zip",
        [
            ("study/manifest.csv", b"case_id"),
            ("study/images/a.dcm", b"DICM" * 10),
            ("__MACOSX/study/._a.dcm", b"junk"),
            ("study/.DS_Store", b"junk"),
        ],
    )
    dest = _dest(tmp_path)
    extracted = safe_extract(archive, dest, max_bytes=MB)
    assert (extracted.files, extracted.bytes) == (2, 7 + 40)
    assert _everything(dest) == [
        "study",
        "study/images",
        "study/images/a.dcm",
        "study/manifest.csv",
    ]


def test_upload_over_the_limit_refused_and_hash_is_of_the_bytes(tmp_path: Path) -> None:
    data = b"abc" * 1000
    got = receive_upload(io.BytesIO(data), "s.zip", tmp_path / "a.zip", max_bytes=3000)
    # sha256("abc" * 1000), computed independently with hashlib's one-shot call
    assert (got.size, got.sha256) == (3000, hashlib.sha256(data).hexdigest())
    with pytest.raises(UnsafeZip, match=re.escape("s.zip: larger than the upload limit of 0.0 MB")):
        receive_upload(io.BytesIO(data), "s.zip", tmp_path / "b.zip", max_bytes=2999)
