"""Status derivation (SCORING.md section 1) and lenient parsing of cell values.

Functions here work on unique values where they can: a million rows carry a
few thousand distinct diagnoses, so the string work is done once per value.
"""

from __future__ import annotations

import math
import re
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import pandas as pd

from scoring.categories import STATUSES

BoolArray = npt.NDArray[np.bool_]

IDK_FORMS: Final = frozenset({"i dont know", "idont know", "idontknow", "idk", "i do not know"})
PARSE_FAILED: Final = "parse_failed"
_APOSTROPHES = re.compile(r"[\'\u2019\u2018`\u00b4]")
_PUNCT = re.compile(r"[\s.!;:,\"()\[\]]+")

_TRUE_TEXT: Final = frozenset({"1", "1.0", "true", "t", "yes", "y", "correct"})
_FALSE_TEXT: Final = frozenset({"0", "0.0", "false", "f", "no", "n", "incorrect", "wrong"})
_PENDING_TEXT: Final = frozenset({"", "nan", "none", "null", "na", "n/a", "pending"})


def _normalise(text: str) -> str:
    text = _APOSTROPHES.sub("", text.strip().lower())
    return _PUNCT.sub(" ", text).strip()


def is_idk_text(value: object) -> bool:
    """True for "I don't know" and its imported spellings (case/apostrophe-insensitive)."""
    return isinstance(value, str) and _normalise(value) in IDK_FORMS


def is_parse_failed(value: object) -> bool:
    """True for the ``PARSE_FAILED`` marker that model runners write."""
    return isinstance(value, str) and value.strip().lower() == PARSE_FAILED


def is_missing_value(value: object) -> bool:
    """None, NaN, pd.NA or a blank string."""
    if value is None or value is pd.NA:
        return True
    if isinstance(value, float):
        return math.isnan(value)
    return isinstance(value, str) and value.strip() == ""


def parse_flag(value: object) -> bool | None:
    """A boolean-ish cell (``True``, ``"1"``, ``"correct"``...); None when blank/pending.

    Raises ValueError for anything else: a verdict is never guessed.
    """
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if is_missing_value(value):
        return None
    if isinstance(value, int | float | np.integer | np.floating):
        if value in (0, 1):
            return bool(value)
        raise ValueError(f"not a 0/1 value: {value!r}")
    text = str(value).strip().lower()
    if text in _TRUE_TEXT:
        return True
    if text in _FALSE_TEXT:
        return False
    if text in _PENDING_TEXT:
        return None
    raise ValueError(f"not a verdict: {value!r}")


def parse_likert(value: object) -> float:
    """The Likert level as a float (NaN when blank or not a number).

    Range is not checked here: an out-of-range level makes the row ``invalid``.
    """
    if is_missing_value(value) or isinstance(value, bool):
        return math.nan
    try:
        return float(str(value).strip()) if isinstance(value, str) else float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return math.nan


def map_unique(series: pd.Series[Any], fn: Any, dtype: Any = object) -> npt.NDArray[Any]:
    """Apply ``fn`` to each distinct value of ``series`` (None for NA) and broadcast back.

    A typed ``dtype`` (bool, float, int8) keeps the broadcast a C-level gather.
    """
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    table = np.array([*(fn(u) for u in uniques), fn(None)], dtype=dtype)
    out: npt.NDArray[Any] = table[codes]  # code -1 (NA) picks the last entry
    return out


def text_codes(series: pd.Series[Any], clean: Any) -> tuple[npt.NDArray[np.int64], list[str]]:
    """Factorize a text column after ``clean`` (value -> str, or None for blank).

    Returns codes into the list of distinct cleaned values, -1 where blank.
    Values that clean to the same text ("a" and " a") share a code.
    """
    raw_codes, raw_uniques = pd.factorize(series, use_na_sentinel=True)
    names: dict[str, int] = {}
    remap = [-1] * (len(raw_uniques) + 1)
    for i, value in enumerate(raw_uniques):
        text = None if is_missing_value(value) else clean(value)
        if text:
            remap[i] = names.setdefault(text, len(names))
    codes: npt.NDArray[np.int64] = np.asarray(remap, dtype=np.int64)[raw_codes]
    return codes, list(names)


def status_codes(
    diagnosis_codes: npt.NDArray[np.int64],
    diagnoses: list[str],
    likert: npt.NDArray[np.float64],
    failed: BoolArray,
) -> npt.NDArray[np.int8]:
    """Index into STATUSES of each row, in the order of SCORING.md section 1.

    failure > idk > answered (diagnosis + Likert 0..4) > invalid. A row with an
    empty diagnosis (code -1) that is neither failure nor idk is ``invalid``:
    the row exists, so it is not ``missing``, and it carries no answer.
    """
    idk = np.array([*(is_idk_text(d) for d in diagnoses), False])[diagnosis_codes]
    parse_failed = np.array([*(is_parse_failed(d) for d in diagnoses), False])[diagnosis_codes]
    has_text = diagnosis_codes >= 0
    out: npt.NDArray[np.int8] = np.select(
        [failed | parse_failed, idk, has_text & likert_is_valid(likert)],
        [STATUSES.index("failure"), STATUSES.index("idk"), STATUSES.index("answered")],
        default=STATUSES.index("invalid"),
    ).astype(np.int8)
    return out


def derive_status(
    diagnosis: pd.Series[Any], likert: npt.NDArray[np.float64], failed: BoolArray
) -> npt.NDArray[np.str_]:
    """Status name of each row (see ``status_codes``)."""
    codes, names = text_codes(diagnosis, str)
    out: npt.NDArray[np.str_] = np.array(STATUSES)[status_codes(codes, names, likert, failed)]
    return out


def likert_is_valid(likert: npt.NDArray[np.float64]) -> BoolArray:
    """Likert is an integer 0..4 (NaN and 2.5 are not)."""
    with np.errstate(invalid="ignore"):
        valid: BoolArray = (likert >= 0) & (likert <= 4) & (np.floor(likert) == likert)
    return valid
