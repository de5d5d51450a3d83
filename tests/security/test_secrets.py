"""No secret is ever committed: secrets.toml is ignored, examples hold placeholders only."""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / ".streamlit" / "secrets.toml.example"

SECRET_PATTERNS = {
    "private key": re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
    "AWS access key": re.compile(r"\bAKIA[0-9A-Z]{16}\b"),
    "GitHub token": re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36,}\b"),
    "OpenAI-style key": re.compile(r"\bsk-[A-Za-z0-9_-]{32,}\b"),
    "Slack token": re.compile(r"\bxox[baprs]-[A-Za-z0-9-]{10,}\b"),
    "Google API key": re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"),
    "password in a URL": re.compile(
        r"\b(?:postgres(?:ql)?(?:\+\w+)?|mysql|redis)://[^:/\s]+:[^@/\s]{6,}@"
    ),
}
# values that are obviously not real secrets
PLACEHOLDER = re.compile(r"^(|change-?me.*|<.*>|\.\.\.|x+|your[-_ ].*|example.*|replace.*)$", re.I)
SECRET_KEYS = re.compile(r"(secret|password|token|api_key|client_secret|cookie)", re.I)


def _tracked_files() -> list[str]:
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True, timeout=30
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [f for f in out.decode().split("\0") if f]


def test_secrets_toml_is_ignored_and_not_tracked() -> None:
    tracked = _tracked_files()
    assert ".streamlit/secrets.toml" not in tracked
    assert not [f for f in tracked if Path(f).name in {".env", "secrets.toml", "id_rsa"}]
    assert not [f for f in tracked if Path(f).suffix in {".pem", ".key", ".p12", ".pfx"}]
    ignored = subprocess.run(
        ["git", "check-ignore", "-q", ".streamlit/secrets.toml"], cwd=ROOT, timeout=30
    )
    assert ignored.returncode == 0, ".streamlit/secrets.toml must be git-ignored"


def test_no_tracked_file_contains_a_credential() -> None:
    found = []
    for name in _tracked_files():
        path = ROOT / name
        if not path.is_file() or path.stat().st_size > 2_000_000:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for what, pattern in SECRET_PATTERNS.items():
            if name == "tests/security/test_secrets.py":
                continue
            found += [f"{name}: {what}" for _ in pattern.finditer(text)]
    assert found == []


def _leaves(data: dict[str, object], prefix: str = "") -> list[tuple[str, object]]:
    out: list[tuple[str, object]] = []
    for key, value in data.items():
        if isinstance(value, dict):
            out += _leaves(value, f"{prefix}{key}.")
        else:
            out.append((f"{prefix}{key}", value))
    return out


def test_the_secrets_example_holds_placeholders_only() -> None:
    if not EXAMPLE.exists():
        pytest.skip("no .streamlit/secrets.toml.example yet")
    data = tomllib.loads(EXAMPLE.read_text())
    for key, value in _leaves(data):
        if SECRET_KEYS.search(key.rsplit(".", 1)[-1]) and isinstance(value, str):
            assert PLACEHOLDER.match(value), f"{key} in the example looks like a real secret"


def test_the_credential_scan_finds_what_it_looks_for() -> None:
    # negative control, assembled at run time so this file itself holds no such string
    samples = [
        "-----BEGIN " + "RSA PRIVATE KEY-----",
        "AKIA" + "ABCDEFGHIJKLMNOP",
        "postgresql+psycopg://app:" + "s3cretpass@db/x",
        "sk-" + "a" * 40,
    ]
    for sample in samples:
        assert any(p.search(sample) for p in SECRET_PATTERNS.values()), sample
    assert not SECRET_PATTERNS["password in a URL"].search("postgresql://postgres@127.0.0.1/x")
