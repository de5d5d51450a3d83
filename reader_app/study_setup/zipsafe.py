"""Extract an uploaded study ZIP without trusting it.

Refused, with a message naming the entry: absolute paths and ``..`` (path
traversal), symlinks and other non-regular files, encrypted entries, more than
``max_entries`` entries, and more than ``max_bytes`` uncompressed in total (a zip
bomb). The size is counted while streaming in 1 MiB chunks, so a header that
lies about its size cannot get past the cap, and memory stays flat whatever the
ZIP claims. Files are created with ``open(..., "xb")`` inside ``dest`` only.
A refusal leaves ``dest`` for the caller to remove (see ``workspace``).
"""

from __future__ import annotations

import hashlib
import stat
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from reader_app.errors import ReaderStudyError

CHUNK = 1 << 20
MAX_ENTRIES = 20_000
SKIPPED_PREFIXES = ("__MACOSX/",)  # macOS Finder's resource forks: never study files
SKIPPED_NAMES = {".DS_Store", "Thumbs.db"}


class UnsafeZip(ReaderStudyError, ValueError):
    """The ZIP was refused; the message names the entry and the rule."""


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
                raise UnsafeZip(f"{name}: larger than the upload limit of {_mb(max_bytes)}")
            digest.update(chunk)
            out.write(chunk)
    return Received(path=dest, name=name, size=size, sha256=digest.hexdigest())


def safe_name(raw: str) -> PurePosixPath:
    """The entry's path inside the extraction folder, or UnsafeZip."""
    name = raw.replace("\\", "/")
    path = PurePosixPath(name)
    if name.startswith("/") or (path.parts and ":" in path.parts[0]):
        raise UnsafeZip(f"{raw}: absolute path in the ZIP; paths must be relative")
    if any(part == ".." for part in path.parts):
        raise UnsafeZip(f"{raw}: '..' in a ZIP path (path traversal)")
    if "\x00" in name:
        raise UnsafeZip(f"{raw!r}: NUL byte in a ZIP path")
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
    try:
        zf = zipfile.ZipFile(archive)
    except (zipfile.BadZipFile, OSError) as exc:
        raise UnsafeZip(f"{archive.name}: not a ZIP file ({exc})") from exc
    with zf:
        infos = zf.infolist()
        if len(infos) > max_entries:
            raise UnsafeZip(f"the ZIP has {len(infos)} entries; at most {max_entries} are allowed")
        declared = sum(i.file_size for i in infos)
        if declared > max_bytes:
            raise UnsafeZip(
                f"the ZIP would expand to {_mb(declared)}, over the limit of {_mb(max_bytes)}"
                " (a zip bomb?)"
            )
        for info in infos:  # every name checked before a single byte is written
            _check(info)
        total = files = 0
        for info in infos:
            name = info.filename.replace("\\", "/")
            if name.startswith(SKIPPED_PREFIXES) or PurePosixPath(name).name in SKIPPED_NAMES:
                continue
            target = root.joinpath(*safe_name(info.filename).parts)
            if not target.resolve().is_relative_to(root):  # belt and braces
                raise UnsafeZip(f"{info.filename}: leaves the extraction folder")
            if _kind(info) == "dir":
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                out = target.open("xb")
            except FileExistsError as exc:
                raise UnsafeZip(f"{info.filename}: appears twice in the ZIP") from exc
            with out, zf.open(info) as src:
                while chunk := src.read(CHUNK):
                    total += len(chunk)
                    if total > max_bytes:
                        raise UnsafeZip(
                            f"{info.filename}: the ZIP expands past the limit of "
                            f"{_mb(max_bytes)} (a zip bomb?)"
                        )
                    out.write(chunk)
            files += 1
    return Extracted(files=files, bytes=total)


def _check(info: zipfile.ZipInfo) -> None:
    safe_name(info.filename)
    kind = _kind(info)
    if kind == "symlink":
        raise UnsafeZip(f"{info.filename}: symbolic link in the ZIP; links are not allowed")
    if kind == "special":
        raise UnsafeZip(f"{info.filename}: not a regular file or folder")
    if info.flag_bits & 0x1:
        raise UnsafeZip(f"{info.filename}: encrypted entry; upload an unencrypted ZIP")


def _mb(n: int) -> str:
    return f"{n / 1_000_000:,.1f} MB"
