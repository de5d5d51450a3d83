"""Crafted ZIPs (issue 32 items 5 and 10), built byte by byte where zipfile would refuse to.

Each patches a ZIP written by ``zipfile`` at the documented offsets of its
central directory header (APPNOTE 4.3.12): flags +8, method +10, CRC +16,
compressed size +20, uncompressed size +24, name +46.
"""

from __future__ import annotations

import struct
import zipfile
from pathlib import Path

CD = b"PK\x01\x02"
LOCAL = b"PK\x03\x04"


def _write(path: Path, entries: list[tuple[str, bytes]], method: int = zipfile.ZIP_STORED) -> bytes:
    with zipfile.ZipFile(path, "w", method) as zf:
        for name, data in entries:
            zf.writestr(name, data)
    return path.read_bytes()


def _patch(data: bytes, at: int, fmt: str, value: int) -> bytes:
    return data[:at] + struct.pack(fmt, value) + data[at + struct.calcsize(fmt) :]


def _cd(data: bytes, name: bytes) -> int:
    """The offset of ``name``'s central directory header."""
    at = data.index(CD)
    while data[at + 46 : at + 46 + len(name)] != name:
        at = data.index(CD, at + 1)
    return at


def bad_crc(path: Path) -> Path:
    """manifest.csv stored with "hello"; its bytes changed after the CRC was written."""
    data = _write(path, [("manifest.csv", b"hello")])
    path.write_bytes(data.replace(b"hello", b"jello"))
    return path


def lying_size(path: Path) -> Path:
    """A deflated entry whose header says 3 bytes; its data inflates to 5,000."""
    data = _write(path, [("images/a.dcm", b"x" * 5000)], zipfile.ZIP_DEFLATED)
    cd = _cd(data, b"images/a.dcm")
    data = _patch(data, cd + 24, "<I", 3)
    local = data.index(LOCAL)
    path.write_bytes(_patch(data, local + 22, "<I", 3))
    return path


def file_then_folder(path: Path) -> Path:
    """``images`` a file, then ``images/a.dcm`` inside a folder of the same name."""
    _write(path, [("manifest.csv", b"case_id"), ("images", b"file"), ("images/a.dcm", b"x")])
    return path


def invalid_utf8_name(path: Path) -> Path:
    """An entry flagged UTF-8 (bit 11) whose name bytes are not UTF-8."""
    data = _write(path, [("manifest.csv", b"case_id"), ("XX.dcm", b"x")])
    cd = _cd(data, b"XX.dcm")
    flags = struct.unpack_from("<H", data, cd + 8)[0]
    data = _patch(data, cd + 8, "<H", flags | 0x800)
    data = data[: cd + 46] + b"\xff\xfe" + data[cd + 48 :]
    path.write_bytes(data)
    return path


def long_name(path: Path) -> Path:
    """A 300-character file name (Linux allows 255 bytes a name)."""
    _write(path, [("manifest.csv", b"case_id"), ("images/" + "a" * 296 + ".dcm", b"x")])
    return path


def unknown_method(path: Path) -> Path:
    """An entry whose compression method is 99 (AE-x encryption, unknown here)."""
    data = _write(path, [("manifest.csv", b"case_id")])
    cd = _cd(data, b"manifest.csv")
    path.write_bytes(_patch(data, cd + 10, "<H", 99))
    return path


def declares_entries(path: Path, entries: int) -> Path:
    """A ZIP64 end record declaring ``entries`` entries and 47 bytes each (the attack's
    235 MB of 5,000,000 one-letter names), the directory itself left out: 98 bytes."""
    cd_size = entries * 47
    record = struct.pack(
        "<4sQHHIIQQQQ", b"PK\x06\x06", 44, 45, 45, 0, 0, entries, entries, cd_size, 0
    )
    locator = struct.pack("<4sIQI", b"PK\x06\x07", 0, cd_size, 1)
    eocd = struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    path.write_bytes(record + locator + eocd)
    return path


def real_directory(path: Path, entries: int, *, declared: int = 1) -> Path:
    """``entries`` real central directory headers (one-letter names, 47 bytes each) whose
    end record declares ``declared`` entries: zipfile ignores the count and parses all."""
    header = struct.pack(
        "<4sHHHHHHIIIHHHHHII", CD, 20, 20, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0
    )
    directory = (header + b"a") * entries
    eocd = struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, declared, declared, len(directory), 0, 0)
    path.write_bytes(directory + eocd)
    return path
