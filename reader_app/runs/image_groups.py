"""Bench 2's open-source protocol: a strip's slices in labelled groups, one request each.

Models limited in images per prompt get the 16 slices as 4 sequential groups
of 4, labelled Entry, Upper, Lower and Exit, in the strip's order: from the
most superior slice (Entry: the apex on a chest CT) to the most inferior
(Exit: the base); the four replies are joined into
one report before judging. ``--images-per-request N`` turns this on for
report cases; it is recorded in the run record (``images_per_request``).
Other counts give "Part k of n" labels.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from reader_app.llm.prompts import Prompt
from reader_app.runs.prompt import CaseImageBytes, case_messages
from scoring.io import MAX_FIELD_CHARS, ParsedReport

FOUR_LABELS = ("Entry", "Upper", "Lower", "Exit")
T = TypeVar("T")


@dataclass(frozen=True)
class ImageGroup:
    label: str
    first: int  # 1-based position of the group's first image in the case
    items: tuple[Any, ...]


def group_images(images: Sequence[T], per_request: int) -> list[ImageGroup]:
    """Consecutive groups of ``per_request`` images (the last may be shorter)."""
    if per_request < 1:
        raise ValueError("images per request must be at least 1")
    chunks = [tuple(images[i : i + per_request]) for i in range(0, len(images), per_request)]
    n = len(chunks)
    labels = FOUR_LABELS if n == 4 else tuple(f"Part {k} of {n}" for k in range(1, n + 1))
    return [
        ImageGroup(label, 1 + k * per_request, chunk)
        for k, (label, chunk) in enumerate(zip(labels, chunks, strict=True))
    ]


def group_messages(
    prompt: Prompt,
    *,
    history: str | None,
    group: ImageGroup,
    total: int,
    groups: int,
    send_images: bool = True,
    region: str | None = None,
) -> list[dict[str, Any]]:
    """The case's message for one group, told which part of the volume it shows."""
    last = group.first + len(group.items) - 1
    note = (
        f"These are the {group.label} slices ({group.first}-{last} of {total}), one of "
        f"{groups} sequential groups in order from the most superior slice to the most "
        "inferior. Report on these slices only."
    )
    images: list[CaseImageBytes] = list(group.items)
    messages = case_messages(
        prompt, history=history, images=images, send_images=send_images, region=region
    )
    messages[0]["content"].insert(1, {"type": "text", "text": note})
    return messages


def concatenate(parts: Sequence[tuple[str, ParsedReport]]) -> ParsedReport:
    """One report from the groups' reports, each part under its label, in order."""
    bad = [f"{label}: {p.error}" for label, p in parts if p.status != "answered"]
    if bad:
        return ParsedReport(None, None, "failure", "; ".join(bad))

    def join(key: str) -> str | None:
        texts = [(label, getattr(p, key)) for label, p in parts if getattr(p, key)]
        text = "\n\n".join(f"{label}: {t}" for label, t in texts)
        return text[: 4 * MAX_FIELD_CHARS] or None

    return ParsedReport(join("findings"), join("impression"), "answered")
