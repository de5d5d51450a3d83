"""Content-addressed PNG store: an asset's name is the sha256 of its bytes.

Names carry no patient, file or case information, and identical renders are
stored once. Writes go through a temporary file and a rename, so a crash never
leaves a half-written asset under a valid name.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def asset_path(asset_dir: Path, sha256: str) -> Path:
    if len(sha256) != 64 or any(c not in "0123456789abcdef" for c in sha256):
        raise ValueError("not a sha256 hex digest")
    return asset_dir / sha256[:2] / f"{sha256}.png"


def store_asset(asset_dir: Path, data: bytes) -> str:
    """Store bytes under their sha256 (idempotent) and return the digest."""
    digest = sha256_hex(data)
    path = asset_path(asset_dir, digest)
    if path.exists():
        return digest
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return digest


def load_asset(asset_dir: Path, sha256: str) -> bytes:
    return asset_path(asset_dir, sha256).read_bytes()
