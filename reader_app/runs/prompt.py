"""The chat message a model receives for one case, and which built-in prompt a run gets.

Prompt files and their loading live in ``reader_app.llm.prompts`` (runs and
judges share them); import ``Prompt`` and ``load_prompt`` from there.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from reader_app.llm.prompts import DEFAULT_PROMPT, Prompt

__all__ = [
    "GROUNDED_PROMPT",
    "CaseImageBytes",
    "case_messages",
    "default_prompt",
    "png_data_url",
]

# asks for the finding's location too (scoring.io.location_output); the default
# of a study with ``grounding = true``
GROUNDED_PROMPT = "radle_grounded_v1"


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


def default_prompt(*, grounding: bool) -> str:
    """The built-in prompt a run gets when none is named: the grounded one for a
    study whose readers mark locations, so models are asked for one too."""
    return GROUNDED_PROMPT if grounding else DEFAULT_PROMPT


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
