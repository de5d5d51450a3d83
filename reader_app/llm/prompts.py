"""Versioned prompt files, for model runs and judges alike.

Built-in prompts live in ``reader_app/prompts/<version>.txt`` (the judges' in
``reader_app/prompts/judges/``) and are never edited once used: a changed
instruction is a new file (``radle_v2.txt``). A prompt given as a path is
versioned by its content, ``<stem>-<sha256[:8]>``, so an edited file can never
pass for the one an earlier run used. Every run records the version and the
full sha256; every judge call its prompt version.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

PROMPT_DIR = Path(__file__).resolve().parent.parent / "prompts"
JUDGE_PROMPT_DIR = PROMPT_DIR / "judges"
DEFAULT_PROMPT = "radle_v1"


@dataclass(frozen=True)
class Prompt:
    version: str
    text: str

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


def builtin_prompts() -> list[str]:
    return sorted(p.stem for p in PROMPT_DIR.glob("*.txt"))


def load_prompt(spec: str | Path | None = None) -> Prompt:
    """A built-in prompt by version name (default ``radle_v1``) or a prompt file by path."""
    spec = spec or DEFAULT_PROMPT
    builtin = PROMPT_DIR / f"{spec}.txt"
    if isinstance(spec, str) and "/" not in spec and builtin.is_file():
        return Prompt(version=str(spec), text=builtin.read_text(encoding="utf-8").strip())
    path = Path(spec)
    if not path.is_file():
        raise FileNotFoundError(
            f"no prompt file {str(spec)!r} (built-in prompts: {', '.join(builtin_prompts())})"
        )
    text = path.read_text(encoding="utf-8").strip()
    if not text:
        raise ValueError(f"prompt file {path} is empty")
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return Prompt(version=f"{path.stem[:48]}-{digest[:8]}", text=text)


def load_judge_prompt(version: str) -> Prompt:
    """A built-in judge prompt by version name (``reader_app/prompts/judges/``)."""
    path = JUDGE_PROMPT_DIR / f"{version}.txt"
    if "/" in version or not path.is_file():
        known = ", ".join(sorted(p.stem for p in JUDGE_PROMPT_DIR.glob("*.txt")))
        raise FileNotFoundError(f"no judge prompt {version!r} (known: {known})")
    return Prompt(version=version, text=path.read_text(encoding="utf-8").strip())
