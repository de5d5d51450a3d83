"""The cases a stopped import had rendered, taken up again by the next run of it.

``readerstudy import`` stages into a folder named by its manifest and study
slug (``.import-resume-<key>`` in the data directory) rather than a fresh one,
and records each case there once its PNGs are written
(``cases/<fingerprint>.pickle``: the staged case and its part of the report,
written to a temporary name and renamed, so a record is whole or absent). A
later run of the same manifest and slug takes a case's record instead of
rendering it when the fingerprint matches: the manifest row, the study
settings, the limits, every file's size and modification time, and the
importer's own code. The import that follows is the same, all or nothing.

One run at a time holds the folder (a lock); a second one meanwhile stages
privately. A run that ends (imported, or refused with its problems) removes
the folder; one that is killed or interrupted leaves it for the next run, and
``readerstudy serve``'s sweep removes it once it has been idle for an hour.
The records are pickles of our own dataclasses in the data directory, which
only this application writes (folder mode 0700).
"""

from __future__ import annotations

import dataclasses
import fcntl
import hashlib
import logging
import os
import pickle
import shutil
from functools import lru_cache
from pathlib import Path
from typing import IO, Any

from reader_app.core.settings import Settings
from reader_app.ingest.manifest import ManifestEntry
from reader_app.ingest.report import IngestionReport

log = logging.getLogger(__name__)

PREFIX = ".import-resume-"  # under the data dir; ".import-": the sweep's own prefix
RENDER_PACKAGES = ("ingest", "study")  # the code a staged case depends on


@lru_cache(maxsize=1)
def code_digest() -> str:
    """The importer's source: a change to how cases are read or rendered makes every
    earlier record stale."""
    root = Path(__file__).resolve().parent.parent
    h = hashlib.sha256()
    for package in RENDER_PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            h.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def _files(entry: ManifestEntry) -> list[Path]:
    paths: list[Path] = []
    for f in dataclasses.fields(entry):
        value = getattr(entry, f.name)
        if isinstance(value, Path):
            paths.append(value)
        elif isinstance(value, tuple) and value and all(isinstance(v, Path) for v in value):
            paths.extend(value)
    return paths


def _stat(path: Path) -> tuple[str, int, int] | tuple[str, str]:
    """A file's size and modification time; a folder (a DICOM series) by its files'."""
    try:
        if path.is_dir():
            parts = sorted(
                (p.relative_to(path).as_posix(), p.stat().st_size, p.stat().st_mtime_ns)
                for p in path.rglob("*")
                if p.is_file()
            )
            return (str(path), hashlib.sha256(repr(parts).encode()).hexdigest())
        st = path.stat()
        return (str(path), st.st_size, st.st_mtime_ns)
    except OSError as exc:
        return (str(path), f"unreadable: {exc.errno}")


def fingerprint(entry: ManifestEntry, config: Any, limits: Any) -> str:
    """What a staged case depends on: its row (its line number too, which the staged
    case quotes), settings, limits, files, and the code."""
    parts = (repr(entry), repr(config), repr(limits), [_stat(p) for p in _files(entry)])
    return hashlib.sha256(repr((*parts, code_digest())).encode()).hexdigest()[:32]


class ResumeFolder:
    """The staging folder of one manifest and slug, with its case records; ``None``
    from ``open`` when another run holds it."""

    def __init__(self, folder: Path, lock: IO[bytes]) -> None:
        self.folder = folder
        self._lock = lock
        self._cases = folder / "cases"
        self.reused = 0  # cases taken from an earlier run's records

    @classmethod
    def open(cls, settings: Settings, manifest: Path, slug: str) -> ResumeFolder | None:
        key = hashlib.sha256(f"{manifest.resolve()}\0{slug}".encode()).hexdigest()[:16]
        folder = settings.data_dir / f"{PREFIX}{key}"
        folder.mkdir(mode=0o700, exist_ok=True)
        (folder / "cases").mkdir(mode=0o700, exist_ok=True)
        lock = open(folder / ".lock", "ab")  # noqa: SIM115 - held until close()
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            lock.close()
            log.info("another import of this manifest holds %s: staging privately", folder.name)
            return None
        os.utime(folder)  # fresh for the sweep, which leaves a folder in use alone
        return cls(folder, lock)

    def get(self, entry: ManifestEntry, config: Any, limits: Any) -> Any | None:
        """The (StagedCase, IngestionReport) an earlier run recorded, when still valid
        and all its PNGs are in the folder."""
        record = self._cases / f"{fingerprint(entry, config, limits)}.pickle"
        try:
            staged, report = pickle.loads(record.read_bytes())
        except FileNotFoundError:
            return None
        except Exception as exc:  # a record from another version of the classes
            log.warning("case %s: an unreadable earlier record (%s)", entry.case_id, exc)
            return None
        if not isinstance(report, IngestionReport) or any(
            not (self.folder / f"{d}.png").is_file() for d in staged.all_digests
        ):
            return None
        self.reused += 1
        return staged, report

    def put(self, entry: ManifestEntry, config: Any, limits: Any, result: Any) -> None:
        """Record a staged case (``None`` cases, refused or failed, are not kept)."""
        if result[0] is None:
            return
        name = fingerprint(entry, config, limits)
        part = self._cases / f".{name}.part"
        part.write_bytes(pickle.dumps(result))
        part.replace(self._cases / f"{name}.pickle")

    def close(self, *, keep: bool) -> None:
        """Release the folder; ``keep``: leave it for the next run (a stop midway)."""
        if not keep:
            shutil.rmtree(self.folder, ignore_errors=True)
        self._lock.close()
