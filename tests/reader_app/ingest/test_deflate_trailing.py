"""A deflated DICOM with bytes after the end of its deflate stream (issue 39, the decoder
sweep: every inflating path checked for the multi-member flaw).

``_read_deflated`` fed the inflater its ``unconsumed_tail`` until it was empty. Past the
stream's end zlib keeps the leftover in ``unconsumed_tail`` and appends it to
``unused_data`` on every further call, so the loop never ended and ``unused_data`` grew
without bound (a coordinator's study ZIP could hang an import and fill the memory).
The file is read in a subprocess under ``RLIMIT_AS`` with a timeout: unfixed, it is
killed by the timeout or ends in a MemoryError.
"""

from __future__ import annotations

import json
import struct
import subprocess
import sys
import textwrap
import zlib
from pathlib import Path

from pydicom.uid import DeflatedExplicitVRLittleEndian

from tests.e2e.conftest import ROOT
from tests.reader_app.ingest.bombs import _encode, _image, _meta

_CHILD = textwrap.dedent(
    """
    import json, resource, sys
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
    from pathlib import Path
    from reader_app.ingest.dicom_reader import read_dataset
    ds = read_dataset(Path(sys.argv[1]), "trailing.dcm")
    print(json.dumps({"rows": int(ds.Rows), "pixels": len(ds.PixelData)}))
    """
)


def _deflated_with_trailing_bytes(path: Path, side: int = 1024) -> Path:
    """A side x side 16-bit image (2 MiB inflated: more than one inflate slice), deflated,
    then 4 KB of bytes after the stream's end."""
    head, tail = _image(side, side)
    sink = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    n = side * side * 2
    header = struct.pack("<HH2sHI", 0x7FE0, 0x0010, b"OW", 0, n)
    body = sink.compress(_encode(head) + _encode(tail) + header + bytes(n)) + sink.flush()
    path.write_bytes(_meta(DeflatedExplicitVRLittleEndian) + body + b"\x00trailing" * 455)
    return path


def test_bytes_after_the_deflate_stream_end_the_read(tmp_path: Path) -> None:
    path = _deflated_with_trailing_bytes(tmp_path / "trailing.dcm")
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,  # unfixed: the loop never ends
    )
    assert done.returncode == 0, done.stderr[-2000:]
    # the image as written: 1024 rows, 2 MiB of pixels; the bytes after the end ignored
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"rows": 1024, "pixels": 2 << 20}
