"""Request fields besides model and messages, one rule for runs and judges.

``temperature``, ``seed`` and ``max_tokens`` as given (None: left out of the
request), then ``extra`` merged over them: a key of ``extra`` wins, and
``null`` there removes a field, so a reasoning model that refuses
``temperature`` or wants ``max_completion_tokens`` can be asked too.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from reader_app.core.errors import ReaderStudyError


class RequestSettingError(ReaderStudyError, ValueError):
    """A request setting cannot be used; the message names it."""


def request_params(
    *,
    temperature: float | None,
    max_tokens: int | None,
    extra: Mapping[str, Any],
    seed: int | None = None,
) -> dict[str, Any]:
    merged: dict[str, Any] = {
        "temperature": temperature,
        "seed": seed,
        "max_tokens": max_tokens,
        **extra,
    }
    return {k: v for k, v in merged.items() if v is not None}


def optional_temperature(value: Any, where: str) -> float | None:
    """A number 0..2, or ``"none"`` (left out of the request)."""
    if isinstance(value, str) and value.strip().lower() == "none":
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise RequestSettingError(f'{where}: must be a number or "none"')
    if not math.isfinite(value) or not 0 <= value <= 2:
        raise RequestSettingError(f'{where}: must be 0..2 (or "none")')
    return float(value)


def max_tokens_setting(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 1_000_000:
        raise RequestSettingError(f"{where}: must be a whole number 1..1000000")
    return value


def extra_setting(value: Any, where: str) -> dict[str, Any]:
    """A table, or a JSON object in a string; ``model`` and ``messages`` are not request
    settings (the client sets them)."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise RequestSettingError(f"{where}: not JSON ({exc.msg})") from None
    if not isinstance(value, dict):
        raise RequestSettingError(f"{where}: must be a table or a JSON object")
    for key in ("model", "messages"):
        if key in value:
            raise RequestSettingError(f"{where}: {key!r} cannot be set here")
    try:  # sent as JSON and hashed into the judges' cache key
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        raise RequestSettingError(f"{where}: must hold JSON values only") from None
    return {str(k): v for k, v in value.items()}
