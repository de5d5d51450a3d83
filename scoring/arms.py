"""The two arms of an AI-aided study (SCORING.md section 10): split the rows.

A tidy frame may carry ``arm`` (``unaided`` / ``aided``; blank or absent =
unaided) and ``aid_run`` (the model run whose answer the reader was shown).
Unaided rows score as before; aided rows belong to a second responder per
reader, ``<reader> [aided]`` (scoring/aid.py). This module only splits and
checks the rows, so ``scoring.score`` can leave aided rows to ``scoring.aid``.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np
import pandas as pd

from scoring.frame import FrameError
from scoring.status import BoolArray, text_codes

ARMS: Final = ("unaided", "aided")
AID_COLUMNS: Final = ("arm", "aid_run")
AIDED_SUFFIX: Final = " [aided]"
_MAX_LISTED = 20


def aided_name(reader: str) -> str:
    """The responder name of a reader's aided arm: ``<reader> [aided]``."""
    return f"{reader}{AIDED_SUFFIX}"


def aided_mask(raw: pd.DataFrame) -> BoolArray:
    """True on the aided rows; FrameError on an unknown ``arm`` value."""
    if "arm" not in raw.columns or len(raw) == 0:
        return np.zeros(len(raw), dtype=bool)
    codes, names = text_codes(raw["arm"], lambda v: str(v).strip().lower())
    unknown = sorted(set(names) - set(ARMS))
    if unknown:
        raise FrameError(f"unknown arm value(s) {unknown}; expected one of {ARMS} or blank")
    aided = names.index("aided") if "aided" in names else -2
    out: BoolArray = codes == aided
    return out


def split_arms(data: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(unaided rows, aided rows) of a raw frame, each with a fresh index.

    Aided rows must be human rows naming their ``aid_run``; the message lists
    the offending rows otherwise. A frame without aided rows comes back whole.
    """
    mask = aided_mask(data)
    if not mask.any():
        return data, data.iloc[0:0]
    aided = data[mask].reset_index(drop=True)
    kinds = aided["kind"].astype(str).str.strip().str.lower() if "kind" in aided else None
    if kinds is None or (kinds != "human").any():
        bad = [] if kinds is None else list(np.flatnonzero((kinds != "human").to_numpy()))
        raise FrameError(f"aided rows must be human rows (kind human); rows {_first(bad)}")
    runs = aided["aid_run"] if "aid_run" in aided.columns else pd.Series([""] * len(aided))
    blank = runs.isna().to_numpy() | (runs.astype(str).str.strip() == "").to_numpy()
    if blank.any():
        pairs = [
            f"{aided['responder'].iloc[i]}/{aided['case_id'].iloc[i]}"
            for i in np.flatnonzero(blank)
        ]
        raise FrameError(
            f"aided rows need an aid_run (the model run shown); responder/case_id: {_first(pairs)}"
        )
    return data[~mask].reset_index(drop=True), aided


def _first(items: list[Any]) -> str:
    shown = ", ".join(str(i) for i in items[:_MAX_LISTED])
    more = len(items) - _MAX_LISTED
    return shown + (f", ... and {more} more" if more > 0 else "")
