"""Versioned prompt files and the chat message a model receives for one case.

Built-in prompts live in ``reader_app/prompts/<version>.txt`` and are never
edited once used: a changed instruction is a new file (``radle_v2.txt``).
A prompt given as a path is versioned by its content, ``<stem>-<sha256[:8]>``,
so an edited file can never pass for the one an earlier run used. Every run
records the version and the full sha256.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PROMPT_DIR = Path(__file__).resolve().parent.parent / "prompts"
DEFAULT_PROMPT = "radle_v1"
# asks for the finding's location too (scoring.io.location_output); the default
# of a study with ``grounding = true``
GROUNDED_PROMPT = "radle_grounded_v1"


@dataclass(frozen=True)
class Prompt:
    version: str
    text: str

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class CaseImageBytes:
    """One image exactly as stored (and served to readers), with its caption."""

    png: bytes
    label: str = ""
    window: str | None = None

    @property
    def caption(self) -> str:
        """What the reader's viewer tells them about this image: its label and window."""
        window = f"{self.window} window" if self.window else ""
        return " · ".join(part for part in (self.label, window) if part)


def builtin_prompts() -> list[str]:
    return sorted(p.stem for p in PROMPT_DIR.glob("*.txt"))


def default_prompt(*, grounding: bool) -> str:
    """The built-in prompt a run gets when none is named: the grounded one for a
    study whose readers mark locations, so models are asked for one too."""
    return GROUNDED_PROMPT if grounding else DEFAULT_PROMPT


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


def png_data_url(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def case_messages(
    prompt: Prompt,
    *,
    history: str | None,
    images: Sequence[CaseImageBytes],
    send_images: bool = True,
    region: str | None = None,
) -> list[dict[str, Any]]:
    """One user message: the instruction, the history a reader sees, then the images.

    What a reader is told about an image (a strip's slice position, the window
    preset it is shown under) goes in a text part right before that image, so
    the model reads it too. ``send_images=False`` (a text-only run) leaves out
    the image parts and nothing else: the text is the same, byte for byte. ``region``
    (a report case's body region from the manifest) is told when known.
    """
    intro = prompt.text
    if region:
        intro += f"\n\nBody region: {region.strip()}."
    if history:
        intro += f"\n\nClinical history: {history.strip()}"
    intro += f"\n\nThe case has {len(images)} image{'s' if len(images) != 1 else ''}."
    parts: list[dict[str, Any]] = [{"type": "text", "text": intro}]
    for i, image in enumerate(images, start=1):
        if image.caption:
            parts.append({"type": "text", "text": f"Image {i}: {image.caption}"})
        if send_images:
            parts.append({"type": "image_url", "image_url": {"url": png_data_url(image.png)}})
    return [{"role": "user", "content": parts}]
