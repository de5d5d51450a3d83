"""A ZIP's central directory checked from its end record, before ``zipfile`` parses it.

``zipfile.ZipFile`` reads the whole central directory into memory and builds
one object per entry, so a 235 MB directory of 5,000,000 entries costs a minute
and gigabytes before any count can be checked. ``check_directory`` reads the
end-of-central-directory record (and the ZIP64 one) itself and refuses on the
declared entry count and directory size, then walks the directory's fixed
46-byte headers (skipping names, extras and comments unread) and stops at the
first entry over the cap, whatever the end record claimed. Memory stays a few
kilobytes.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from reader_app.core.errors import ReaderStudyError

EOCD = struct.Struct("<4sHHHHIIH")  # end of central directory, 22 bytes
LOCATOR = struct.Struct("<4sIQI")  # ZIP64 end of central directory locator, 20 bytes
EOCD64 = struct.Struct("<4sQHHIIQQQQ")  # ZIP64 end of central directory, 56 bytes
ENTRY = struct.Struct("<4sHHHHHHIIIHHHHHII")  # a central directory header, 46 bytes
MAX_COMMENT = 0xFFFF
ENTRY_BYTES = 2048  # directory bytes allowed per entry: a 46-byte header, a name, extras


class UnsafeZip(ReaderStudyError, ValueError):
    """The ZIP was refused; the message names the entry and the rule, ``rule`` is its code.

    The code (no names, no paths) is what the audit log keeps.
    """

    def __init__(self, message: str, *, rule: str) -> None:
        super().__init__(message)
        self.rule = rule


@dataclass(frozen=True)
class Directory:
    entries: int  # counted by walking the directory
    size: int  # its bytes


def check_directory(archive: Path, *, max_entries: int) -> Directory:
    """Refuse ``archive`` on its declared or real entry count and directory size."""
    with archive.open("rb") as fh:
        fh.seek(0, 2)
        length = fh.tell()
        tail_at = max(0, length - EOCD.size - MAX_COMMENT)
        fh.seek(tail_at)
        tail = fh.read()
        at = tail.rfind(b"PK\x05\x06")
        if at < 0 or len(tail) - at < EOCD.size:
            raise UnsafeZip(f"{archive.name}: not a ZIP file (no end record)", rule="not-a-zip")
        eocd_at = tail_at + at
        _, disk, cd_disk, _, declared, cd_size, _, _ = EOCD.unpack_from(tail, at)
        end = eocd_at  # the directory ends where its end record (or the ZIP64 one) starts
        if 0xFFFF in (disk, cd_disk, declared) or cd_size == 0xFFFFFFFF:
            declared, cd_size, end = _zip64(fh, eocd_at, archive.name)
        elif disk or cd_disk:
            raise UnsafeZip(f"{archive.name}: a multi-part ZIP; upload one file", rule="multi-part")
        _refuse_declared(declared, cd_size, max_entries)
        start = end - cd_size
        if start < 0:
            raise UnsafeZip(
                f"{archive.name}: its directory claims more bytes than the file has",
                rule="damaged-directory",
            )
        fh.seek(start)
        return Directory(_walk(fh, cd_size, max_entries, archive.name), cd_size)


def _zip64(fh: BinaryIO, eocd_at: int, name: str) -> tuple[int, int, int]:
    if eocd_at < LOCATOR.size:
        raise UnsafeZip(f"{name}: damaged ZIP64 end record", rule="damaged-directory")
    fh.seek(eocd_at - LOCATOR.size)
    sig, _, _, _ = LOCATOR.unpack(fh.read(LOCATOR.size))
    if sig != b"PK\x06\x07":
        raise UnsafeZip(f"{name}: damaged ZIP64 end record", rule="damaged-directory")
    # the record sits just before its locator (data prepended to the ZIP moves both)
    record_at = eocd_at - LOCATOR.size - EOCD64.size
    if record_at < 0:
        raise UnsafeZip(f"{name}: damaged ZIP64 end record", rule="damaged-directory")
    fh.seek(record_at)
    sig, _, _, _, disk, cd_disk, _, declared, cd_size, _ = EOCD64.unpack(fh.read(EOCD64.size))
    if sig != b"PK\x06\x06":
        raise UnsafeZip(f"{name}: damaged ZIP64 end record", rule="damaged-directory")
    if disk or cd_disk:
        raise UnsafeZip(f"{name}: a multi-part ZIP; upload one file", rule="multi-part")
    return declared, cd_size, record_at


def _refuse_declared(declared: int, cd_size: int, max_entries: int) -> None:
    if declared > max_entries:
        raise UnsafeZip(
            f"the ZIP declares {declared:,} entries; at most {max_entries:,} are allowed",
            rule="too-many-entries",
        )
    if cd_size > max_entries * ENTRY_BYTES:
        raise UnsafeZip(
            f"the ZIP's directory is {cd_size:,} bytes; at most "
            f"{max_entries * ENTRY_BYTES:,} are allowed",
            rule="directory-too-large",
        )


def _walk(fh: BinaryIO, cd_size: int, max_entries: int, name: str) -> int:
    """Count the directory's entries from their fixed headers, stopping past the cap."""
    read = entries = 0
    while read < cd_size:
        header = fh.read(ENTRY.size)
        if len(header) < ENTRY.size or header[:4] != b"PK\x01\x02":
            raise UnsafeZip(
                f"{name}: damaged central directory (entry {entries + 1})",
                rule="damaged-directory",
            )
        fields = ENTRY.unpack(header)
        skip = fields[10] + fields[11] + fields[12]  # name, extra field, comment lengths
        fh.seek(skip, 1)
        read += ENTRY.size + skip
        entries += 1
        if entries > max_entries:
            raise UnsafeZip(
                f"the ZIP has more than {max_entries:,} entries; at most {max_entries:,} "
                "are allowed",
                rule="too-many-entries",
            )
    return entries
