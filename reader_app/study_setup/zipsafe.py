"""Extract an uploaded study ZIP without trusting it.

Refused, with a message naming the entry and a rule code (``UnsafeZip.rule``,
what the audit keeps): more than ``max_entries`` entries or an oversized
directory, checked from the end record before ``zipfile`` parses anything
(``zip_directory``); absolute paths and ``..`` (path traversal), names that are
not valid UTF-8 or have a part over 255 bytes, a file and a folder of the same
name, symlinks and other non-regular files, encrypted entries, compression
methods other than stored, deflate, bzip2 and LZMA, and more than ``max_bytes``
uncompressed in total (a zip bomb); while extracting, a bad CRC or a size that
lies. Any other error ``zipfile`` raises becomes a refusal too. The size is
counted while streaming in 1 MiB chunks, so a header that lies about its size
cannot get past the cap, and memory stays flat whatever the ZIP claims. Files
are created with ``open(..., "xb")`` inside ``dest`` only.
A refusal leaves ``dest`` for the caller to remove (see ``workspace``).
"""

from __future__ import annotations

import errno
import hashlib
import lzma
import stat
import struct
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from reader_app.study_setup.zip_directory import UnsafeZip as UnsafeZip  # re-exported
from reader_app.study_setup.zip_directory import check_directory

CHUNK = 1 << 20
MAX_ENTRIES = 20_000
SKIPPED_PREFIXES = ("__MACOSX/",)  # macOS Finder's resource forks: never study files
SKIPPED_NAMES = {".DS_Store", "Thumbs.db"}
MAX_PART = 255  # bytes in one file or folder name: the file system's own limit
METHODS = {zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA}
# what a damaged entry raises while it is read (zipfile's own, and its decompressors')
READ_ERRORS = (zipfile.BadZipFile, zlib.error, lzma.LZMAError, EOFError, OSError, ValueError)
# a full disk or quota, or a file-size limit, while writing: the server's trouble, not a
# damaged ZIP; passed on as the OSError it is (receive_zip says so)
DISK_FULL = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})


@dataclass(frozen=True)
class Extracted:
    files: int
    bytes: int


@dataclass(frozen=True)
class Received:
    """An upload written to disk: what the audit log records about it."""

    path: Path
    name: str
    size: int
    sha256: str


def receive_upload(source: BinaryIO, name: str, dest: Path, *, max_bytes: int) -> Received:
    """Copy an upload to ``dest`` in chunks, hashing it; refuse it above ``max_bytes``."""
    digest = hashlib.sha256()
    size = 0
    with dest.open("xb") as out:
        while chunk := source.read(CHUNK):
            size += len(chunk)
            if size > max_bytes:
                raise UnsafeZip(
                    f"{name}: larger than the upload limit of {_mb(max_bytes)}",
                    rule="upload-too-large",
                )
            digest.update(chunk)
            out.write(chunk)
    return Received(path=dest, name=name, size=size, sha256=digest.hexdigest())


def safe_name(raw: str) -> PurePosixPath:
    """The entry's path inside the extraction folder, or UnsafeZip."""
    name = raw.replace("\\", "/")
    path = PurePosixPath(name)
    if name.startswith("/") or (path.parts and ":" in path.parts[0]):
        raise UnsafeZip(f"{raw}: absolute path in the ZIP; paths must be relative", rule="absolute")
    if any(part == ".." for part in path.parts):
        raise UnsafeZip(f"{raw}: '..' in a ZIP path (path traversal)", rule="traversal")
    if "\x00" in name:
        raise UnsafeZip(f"{raw!r}: NUL byte in a ZIP path", rule="nul-in-name")
    if any(len(part.encode("utf-8", "surrogateescape")) > MAX_PART for part in path.parts):
        raise UnsafeZip(
            f"{raw[:80]}...: a file or folder name over {MAX_PART} bytes", rule="name-too-long"
        )
    return path


def _kind(info: zipfile.ZipInfo) -> str:
    mode = info.external_attr >> 16
    if info.create_system == 3 and stat.S_IFMT(mode):  # Unix: the high bits hold st_mode
        if stat.S_ISLNK(mode):
            return "symlink"
        if stat.S_ISDIR(mode):
            return "dir"
        if not stat.S_ISREG(mode):
            return "special"
    return "dir" if info.is_dir() else "file"


def safe_extract(
    archive: Path, dest: Path, *, max_bytes: int, max_entries: int = MAX_ENTRIES
) -> Extracted:
    """Extract ``archive`` into the existing folder ``dest``; raise UnsafeZip on any rule."""
    root = dest.resolve()
    check_directory(archive, max_entries=max_entries)  # before zipfile parses the directory
    try:
        zf = zipfile.ZipFile(archive)
    except UnicodeDecodeError as exc:
        raise UnsafeZip(
            f"{archive.name}: an entry's name is marked UTF-8 but is not valid UTF-8",
            rule="bad-name-encoding",
        ) from exc
    except (*READ_ERRORS, NotImplementedError, struct.error) as exc:
        raise UnsafeZip(f"{archive.name}: not a ZIP file ({exc})", rule="not-a-zip") from exc
    with zf:
        infos = zf.infolist()
        if len(infos) > max_entries:
            raise UnsafeZip(
                f"the ZIP has {len(infos)} entries; at most {max_entries} are allowed",
                rule="too-many-entries",
            )
        declared = sum(i.file_size for i in infos)
        if declared > max_bytes:
            raise UnsafeZip(
                f"the ZIP would expand to {_mb(declared)}, over the limit of {_mb(max_bytes)}"
                " (a zip bomb?)",
                rule="zip-bomb",
            )
        for info in infos:  # every name checked before a single byte is written
            _check(info)
        _no_file_and_folder_alike(infos)
        total = files = 0
        for info in infos:
            name = info.filename.replace("\\", "/")
            if name.startswith(SKIPPED_PREFIXES) or PurePosixPath(name).name in SKIPPED_NAMES:
                continue
            target = root.joinpath(*safe_name(info.filename).parts)
            if not target.resolve().is_relative_to(root):  # belt and braces
                raise UnsafeZip(f"{info.filename}: leaves the extraction folder", rule="traversal")
            if _kind(info) == "dir":
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                out = target.open("xb")
            except FileExistsError as exc:
                raise UnsafeZip(
                    f"{info.filename}: appears twice in the ZIP", rule="duplicate"
                ) from exc
            with out:
                total = _copy(zf, info, out, total, max_bytes)
            files += 1
    return Extracted(files=files, bytes=total)


def _copy(zf: zipfile.ZipFile, info: zipfile.ZipInfo, out: BinaryIO, total: int, cap: int) -> int:
    """Stream one entry to ``out`` under the cap; a damaged entry is a refusal naming it."""
    try:
        with zf.open(info) as src:
            while chunk := src.read(CHUNK):
                total += len(chunk)
                if total > cap:
                    raise UnsafeZip(
                        f"{info.filename}: the ZIP expands past the limit of "
                        f"{_mb(cap)} (a zip bomb?)",
                        rule="zip-bomb",
                    )
                out.write(chunk)
    except UnsafeZip:
        raise
    except READ_ERRORS as exc:
        if isinstance(exc, OSError) and exc.errno in DISK_FULL:
            raise
        raise UnsafeZip(
            f"{info.filename}: damaged entry ({exc}); its data does not match its header",
            rule="damaged-entry",
        ) from exc
    return total


def _no_file_and_folder_alike(infos: list[zipfile.ZipInfo]) -> None:
    """A path both a file and (a parent) folder cannot be extracted: refuse it by name."""
    files: set[PurePosixPath] = set()
    folders: set[PurePosixPath] = set()
    for info in infos:
        path = safe_name(info.filename)
        folders.update(path.parents)
        (folders if _kind(info) == "dir" else files).add(path)
    both = sorted(files & folders)
    if both:
        raise UnsafeZip(f"{both[0]}: both a file and a folder in the ZIP", rule="file-and-folder")


def _check(info: zipfile.ZipInfo) -> None:
    safe_name(info.filename)
    kind = _kind(info)
    if kind == "symlink":
        raise UnsafeZip(
            f"{info.filename}: symbolic link in the ZIP; links are not allowed", rule="symlink"
        )
    if kind == "special":
        raise UnsafeZip(f"{info.filename}: not a regular file or folder", rule="special-file")
    if info.flag_bits & 0x1:
        raise UnsafeZip(
            f"{info.filename}: encrypted entry; upload an unencrypted ZIP", rule="encrypted"
        )
    if kind == "file" and info.compress_type not in METHODS:
        raise UnsafeZip(
            f"{info.filename}: compression method {info.compress_type} is not supported "
            "(use stored or deflate)",
            rule="unknown-compression",
        )


def _mb(n: int) -> str:
    return f"{n / 1_000_000:,.1f} MB"
