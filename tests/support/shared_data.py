"""The shared reference data beside the clone: ``../shared/data`` from the repo root.

CI has ``shared/`` beside the clone. In a git worktree (``.git`` is a file naming
the main checkout's ``.git/worktrees/NAME``) the folder beside the main checkout
is used too, so a worktree's tests see the same files. Tests that need it skip
with a clear reason when neither exists.
"""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _candidates() -> list[Path]:
    out = [ROOT.parent / "shared" / "data"]
    git = ROOT / ".git"
    if git.is_file():
        text = git.read_text(encoding="utf-8").strip()
        if text.startswith("gitdir:"):
            gitdir = Path(text.removeprefix("gitdir:").strip())
            if gitdir.parent.name == "worktrees":  # <main>/.git/worktrees/NAME
                out.append(gitdir.parents[2].parent / "shared" / "data")
    return out


def shared_data(*parts: str) -> Path:
    """The path under the shared data folder, or skip the test naming where it looked."""
    for base in _candidates():
        path = base.joinpath(*parts)
        if path.exists():
            return path
    looked = ", ".join(str(b.joinpath(*parts)) for b in _candidates())
    pytest.skip(f"the shared reference data is absent (looked in {looked})")
