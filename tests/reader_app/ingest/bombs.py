"""Decompression bombs, small on disk, written by streaming (the test process stays small).

Each is one of issue 14's reproductions: what it expands to is in its docstring.
"""

from __future__ import annotations

import gzip
import struct
import zlib
from pathlib import Path

import nibabel as nib
import numpy as np
from pydicom.dataset import Dataset, FileMetaDataset
from pydicom.filebase import DicomBytesIO
from pydicom.filewriter import write_dataset, write_file_meta_info
from pydicom.uid import (
    CTImageStorage,
    DeflatedExplicitVRLittleEndian,
    ExplicitVRLittleEndian,
    generate_uid,
)

CHUNK = 1 << 22  # 4 MiB of zeros at a time


def _encode(ds: Dataset) -> bytes:
    fp = DicomBytesIO()
    fp.is_little_endian, fp.is_implicit_VR = True, False
    write_dataset(fp, ds)
    return fp.getvalue()


def _meta(syntax: str) -> bytes:
    meta = FileMetaDataset()
    meta.MediaStorageSOPClassUID = CTImageStorage
    meta.MediaStorageSOPInstanceUID = generate_uid()
    meta.TransferSyntaxUID = syntax
    fp = DicomBytesIO()
    fp.is_little_endian, fp.is_implicit_VR = True, False
    write_file_meta_info(fp, meta, enforce_standard=True)
    return b"\0" * 128 + b"DICM" + fp.getvalue()


def _image(rows: int, cols: int) -> tuple[Dataset, Dataset]:
    """(elements before group 0009, elements after it) of a 16-bit grey CT image."""
    head = Dataset()
    head.SOPClassUID = CTImageStorage
    head.SOPInstanceUID = generate_uid()
    head.Modality = "CT"
    tail = Dataset()
    tail.SamplesPerPixel = 1
    tail.PhotometricInterpretation = "MONOCHROME2"
    tail.Rows, tail.Columns = rows, cols
    tail.BitsAllocated, tail.BitsStored, tail.HighBit = 16, 16, 15
    tail.PixelRepresentation = 0
    return head, tail


def _zeros(sink: zlib._Compress, n: int) -> bytes:
    out = []
    block = bytes(min(n, CHUNK))
    while n > 0:
        out.append(sink.compress(block[: min(n, CHUNK)]))
        n -= min(n, CHUNK)
    return b"".join(out)


def deflated_dicom_hidden_element(path: Path, hidden: int = 1_500_000_000) -> Path:
    """64x64 image plus a private OB element of ``hidden`` zero bytes, deflated (about 1.5 MB)."""
    head, tail = _image(64, 64)
    sink = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    parts = [sink.compress(_encode(head))]
    creator = Dataset()
    creator.add_new(0x00090010, "LO", "HIDDEN")
    parts.append(sink.compress(_encode(creator)))
    parts.append(sink.compress(struct.pack("<HH2sHI", 0x0009, 0x1010, b"OB", 0, hidden)))
    parts.append(_zeros(sink, hidden))
    pixels = Dataset()
    pixels.PixelData = bytes(64 * 64 * 2)
    pixels["PixelData"].VR = "OW"
    parts.append(sink.compress(_encode(tail) + _encode(pixels)))
    parts.append(sink.flush())
    path.write_bytes(_meta(DeflatedExplicitVRLittleEndian) + b"".join(parts))
    return path


def deflated_dicom_huge_image(path: Path, side: int = 14_000) -> Path:
    """side x side 16-bit image, deflated (about 380 KB; 392 MB of pixels inflated)."""
    head, tail = _image(side, side)
    sink = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    n = side * side * 2
    header = struct.pack("<HH2sHI", 0x7FE0, 0x0010, b"OW", 0, n)
    parts = [sink.compress(_encode(head) + _encode(tail) + header), _zeros(sink, n), sink.flush()]
    path.write_bytes(_meta(DeflatedExplicitVRLittleEndian) + b"".join(parts))
    return path


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def palette_png(path: Path, side: int = 13_000) -> Path:
    """side x side palette PNG of zeros (about 160 KB; 169 M pixels, RGB when decoded)."""
    sink = zlib.compressobj(9)
    row = bytes(side + 1)  # filter byte 0 + one index per pixel
    idat = [sink.compress(row) for _ in range(side)] + [sink.flush()]
    png = b"\x89PNG\r\n\x1a\n"
    png += _chunk(b"IHDR", struct.pack(">IIBBBBB", side, side, 8, 3, 0, 0, 0))
    png += _chunk(b"PLTE", bytes([0, 0, 0, 255, 255, 255]))
    png += _chunk(b"IDAT", b"".join(idat)) + _chunk(b"IEND", b"")
    path.write_bytes(png)
    return path


def nifti_gz(path: Path, shape: tuple[int, int, int] = (512, 512, 700)) -> Path:
    """A float64 .nii.gz of zeros (about 1.4 MB; 1.47 GB decompressed)."""
    header = nib.Nifti1Header()
    header.set_data_shape(shape)
    header.set_data_dtype(np.float64)
    header.set_qform(np.eye(4), code=1)
    n = int(np.prod(shape)) * 8
    with gzip.open(path, "wb", compresslevel=1) as fh:
        fh.write(header.binaryblock + b"\0\0\0\0")  # 348-byte header, empty extension flag
        block = bytes(CHUNK)
        while n > 0:
            fh.write(block[: min(n, CHUNK)])
            n -= min(n, CHUNK)
    return path


def plain_dicom(path: Path, side: int) -> Path:
    """An ordinary uncompressed side x side 16-bit CT image (for the accepted-size baseline)."""
    head, tail = _image(side, side)
    n = side * side * 2
    header = struct.pack("<HH2sHI", 0x7FE0, 0x0010, b"OW", 0, n)
    with path.open("wb") as fh:
        fh.write(_meta(ExplicitVRLittleEndian) + _encode(head) + _encode(tail) + header)
        ramp = (np.arange(side, dtype=np.uint16) * 7).tobytes()
        for _ in range(side):
            fh.write(ramp)
    return path
