"""Content-addressed PNG store: an asset's name is the sha256 of its bytes.

Names carry no patient, file or case information, and identical renders are
stored once. Writes go through a temporary file and a rename, so a crash never
leaves a half-written asset under a valid name.
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import tempfile
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from reader_app.core.errors import ReaderStudyError

log = logging.getLogger(__name__)


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


class AssetIntegrityError(ReaderStudyError, ValueError):
    """A stored asset's bytes no longer match the sha256 they are filed (and recorded) under."""


def load_asset(asset_dir: Path, sha256: str) -> bytes:
    """The stored bytes, verified against their sha256: the one loader for readers and models.

    A file changed on disk is refused (AssetIntegrityError, logged), never served:
    every response records the sha256 of what was shown, so serving other bytes
    would make that record false.
    """
    data = asset_path(asset_dir, sha256).read_bytes()
    actual = sha256_hex(data)
    if actual != sha256:
        log.error("asset %s failed its integrity check (file hashes to %s)", sha256, actual)
        raise AssetIntegrityError(
            f"image {sha256[:12]} failed its integrity check: the stored file changed "
            f"on disk (it now hashes to {actual[:12]}); it was not shown. "
            "Re-import the study's images or restore the asset store from backup."
        )
    return data


# --- in-flight imports -------------------------------------------------------------
# A failed import removes the assets it added, but only those that no committed
# case and no other import still in flight refers to. An import "claims" its
# digests (a file under .claims/, named by process id) before it stores or relies
# on an asset, and gives the claim up after its commit or its cleanup. Claiming
# and cleaning up both hold an exclusive lock on .claims/.lock, so a cleanup
# never deletes a file between another import's claim and its commit. Claims of
# processes that no longer run are ignored (a crash leaves no lasting claim).

CLAIMS = ".claims"


@contextmanager
def _claims_lock(asset_dir: Path) -> Iterator[Path]:
    folder = asset_dir / CLAIMS
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / ".lock").open("a+") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield folder
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass
class AssetClaim:
    """The digests one in-flight import uses; ``release`` after commit or cleanup."""

    asset_dir: Path
    path: Path

    def release(self) -> None:
        with _claims_lock(self.asset_dir):
            self.path.unlink(missing_ok=True)


def claim_assets(asset_dir: Path, digests: set[str]) -> AssetClaim:
    """Record that this import is about to store or use ``digests``."""
    with _claims_lock(asset_dir) as folder:
        path = folder / f"{os.getpid()}-{uuid.uuid4().hex}.claim"
        path.write_text("\n".join(sorted(digests)), encoding="ascii")
    return AssetClaim(asset_dir, path)


def remove_unclaimed(
    asset_dir: Path,
    digests: set[str],
    claim: AssetClaim,
    committed: Callable[[set[str]], set[str]],
) -> set[str]:
    """Delete those of ``digests`` that neither a committed case nor another claim uses.

    ``committed(digests)`` returns the digests committed cases refer to (a DB
    query); it runs under the lock, after this import's rollback. Returns what
    was deleted, and releases ``claim``.
    """
    with _claims_lock(asset_dir) as folder:
        in_use = set(committed(digests)) if digests else set()
        for other in folder.glob("*.claim"):
            if other == claim.path:
                continue
            pid = int(other.name.split("-", 1)[0])
            if _alive(pid):
                in_use |= set(other.read_text(encoding="ascii").split())
        removed = digests - in_use
        for digest in removed:
            asset_path(asset_dir, digest).unlink(missing_ok=True)
        claim.path.unlink(missing_ok=True)
    return removed
