"""requirements.lock pins, with hashes, every dependency pyproject.toml names, inside its range.

`make setup` installs from the lock with ``--require-hashes`` (pip then refuses anything
unpinned or unhashed), so a dependency added to pyproject.toml without `make lock` would
break every fresh install; this test says which one, before a fresh machine does.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements.lock"
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)")


def parse_lock(text: str) -> dict[str, tuple[str, int]]:
    """Each pinned package -> (version, number of hashes); continuation lines joined."""
    entries: dict[str, tuple[str, int]] = {}
    for line in text.replace("\\\n", " ").splitlines():
        if match := PIN.match(line.strip()):
            name, version = canonicalize_name(match[1]), match[2]
            entries[name] = (version, line.count("--hash=sha256:"))
    return entries


def lock_problems(pyproject: dict[str, Any], lock_text: str) -> list[str]:
    """What keeps the lock from installing pyproject.toml's dependencies with hashes."""
    wanted = [
        *pyproject["project"]["dependencies"],
        *(req for reqs in pyproject["project"]["optional-dependencies"].values() for req in reqs),
        *pyproject["build-system"]["requires"],  # `pip install --no-build-isolation -e .`
    ]
    locked = parse_lock(lock_text)
    problems = [f"{name}=={version} has no hash" for name, (version, n) in locked.items() if not n]
    for spec in wanted:
        req = Requirement(spec)
        name = canonicalize_name(req.name)
        if name not in locked:
            problems.append(f"{req.name} (pyproject.toml) is not in the lock")
        elif not req.specifier.contains(Version(locked[name][0]), prereleases=True):
            problems.append(f"{req.name}=={locked[name][0]} (lock) is outside {req.specifier}")
    return problems


def _pyproject() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_the_lock_pins_every_dependency_with_hashes_inside_its_range() -> None:
    locked = parse_lock(LOCK.read_text())
    assert len(locked) > 50  # the parser read the file
    assert lock_problems(_pyproject(), LOCK.read_text()) == []


def test_streamlit_is_held_to_one_minor_version() -> None:
    (spec,) = [s for s in _pyproject()["project"]["dependencies"] if s.startswith("streamlit")]
    req = Requirement(spec)
    major, minor = Version(parse_lock(LOCK.read_text())["streamlit"][0]).release[:2]
    assert req.specifier.contains(f"{major}.{minor}.99")
    assert not req.specifier.contains(f"{major}.{minor + 1}.0")


def test_make_setup_installs_from_the_lock_with_hashes() -> None:
    makefile = (ROOT / "Makefile").read_text()
    assert "$(STAMP): $(LOCK) pyproject.toml" in makefile
    assert "pip install --require-hashes -r $(LOCK)" in makefile
    assert "pip install -q --no-deps --no-build-isolation -e ." in makefile
    assert "LOCK   := requirements.lock" in makefile


def test_the_check_can_fail() -> None:
    pyproject = {
        "project": {
            "dependencies": ["streamlit>=1.67,<1.68", "httpx>=0.27"],
            "optional-dependencies": {"dev": ["pytest>=8"]},
        },
        "build-system": {"requires": ["setuptools>=77"]},
    }
    lock = (
        "# a comment\n"
        "streamlit==1.68.0 \\\n    --hash=sha256:aa \\\n    --hash=sha256:bb\n    # via x\n"
        "pytest==9.2.0\n"
        "setuptools==84.2.1 \\\n    --hash=sha256:cc\n"
    )
    assert lock_problems(pyproject, lock) == [
        "pytest==9.2.0 has no hash",
        "streamlit==1.68.0 (lock) is outside <1.68,>=1.67",
        "httpx (pyproject.toml) is not in the lock",
    ]
