"""Per-import temporary folders under ``<data dir>/.setup``, and where a study's files are.

A workspace holds one upload and what was extracted from it, nothing else. It is
removed when the import job ends (done or failed), when the coordinator starts
over or is refused, and, should a browser tab be closed mid-review, by the sweep
that runs before each new workspace is made (folders older than ``STALE_AFTER``).
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
import time
from pathlib import Path

from reader_app.core.errors import ReaderStudyError
from reader_app.core.settings import Settings

STALE_AFTER_S = 24 * 3600
MANIFEST_NAMES = ("manifest.csv", "manifest.yaml", "manifest.yml")


class SourceRefused(ReaderStudyError, ValueError):
    """The chosen source (ZIP or server folder) cannot be used; the message says why."""


def setup_root(settings: Settings) -> Path:
    root = settings.data_dir / ".setup"
    root.mkdir(parents=True, exist_ok=True)
    return root


def new_workspace(settings: Settings) -> Path:
    sweep_stale(settings)
    return Path(tempfile.mkdtemp(prefix="import-", dir=setup_root(settings)))


def remove_workspace(settings: Settings, folder: Path | None) -> None:
    """Remove a workspace; refuses (silently) anything that is not one of ours."""
    if folder is None:
        return
    folder = Path(folder)
    if folder.parent.resolve() == setup_root(settings).resolve() and folder.name.startswith(
        "import-"
    ):
        shutil.rmtree(folder, ignore_errors=True)


def sweep_stale(settings: Settings, *, now: float | None = None) -> int:
    cutoff = (now or time.time()) - STALE_AFTER_S
    removed = 0
    for folder in setup_root(settings).glob("import-*"):
        try:
            if folder.stat().st_mtime < cutoff:
                shutil.rmtree(folder, ignore_errors=True)
                removed += 1
        except FileNotFoundError:
            continue
    return removed


def file_sha256(path: Path) -> str:
    """A file's sha256, read in 1 MiB chunks: what the audit keeps instead of its name."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def find_manifest(folder: Path) -> Path:
    """The manifest at the top of ``folder`` or of its single sub-folder (a zipped folder)."""
    for name in MANIFEST_NAMES:
        if (folder / name).is_file():
            return folder / name
    subs = [p for p in folder.iterdir() if p.is_dir() and not p.name.startswith((".", "__"))]
    if len(subs) == 1:
        for name in MANIFEST_NAMES:
            if (subs[0] / name).is_file():
                return subs[0] / name
    raise SourceRefused(
        "no manifest.csv (or manifest.yaml) at the top of the ZIP or folder, "
        "nor in its one sub-folder"
    )


def server_folder(settings: Settings, raw: str) -> Path:
    """A folder under READERSTUDY_IMPORT_ROOT; anything outside it (or no root) is refused."""
    root = settings.import_root
    if root is None:
        raise SourceRefused(
            "server-folder import is off: the operator sets READERSTUDY_IMPORT_ROOT to enable it"
        )
    raw = raw.strip()
    if not raw:
        raise SourceRefused("give a folder under the import root")
    candidate = Path(raw)
    path = (candidate if candidate.is_absolute() else root / candidate).resolve()
    if not path.is_relative_to(root.resolve()):
        raise SourceRefused(f"{raw}: outside the import root {root}; paths outside are refused")
    if not path.is_dir():
        raise SourceRefused(f"{raw}: no such folder under the import root")
    return path
