"""Column headers people read: ``completion_pct`` is shown as "Completion %".

Frames keep their snake_case names (CSV exports, tests and automation depend
on them); only what a staff page draws is relabelled, through ``column_label``
here, so every table speaks the same words. Names already written for people
("ICC(2,1)", "RadLE-C") pass through unchanged.
"""

from __future__ import annotations

from typing import Final

from reader_app.analysis.leaderboard import GROUNDING_LABELS, LABELS

# where the plain rule below would read badly or say the wrong thing
KNOWN: Final = {
    **LABELS,
    **GROUNDING_LABELS,
    "case_id": "Case",
    "source_id": "Case",
    "completion_pct": "Completion %",
    "median_s_per_case": "Median s per case",
    "median_s": "Median s per case",
    "profile_group": "Profile says",
    "s_per_case": "s/case",  # the median (the Progress page's narrow table)
    "last_activity": "Last activity (UTC)",
    "invited_at": "Invited (UTC)",
    "pool_gets": "Pool gets it",
    "n": "N",
    "idk": "I don't know",
    "ci_low": "CI low",
    "ci_high": "CI high",
    "accuracy_ci_low": "Accuracy CI low",
    "accuracy_ci_high": "Accuracy CI high",
    "keep_n": "Keep N",
    # a p-value is a lower-case p, as beside them in "p (C)" and "p (A)"
    "p (sign-flip, points)": "p (sign-flip, points)",
    "p (sign-flip, hits)": "p (sign-flip, hits)",
}
_WORDS: Final = {"pct": "%", "ci": "CI", "id": "ID", "idk": "IDK", "n": "N", "s": "s"}


def column_label(name: object) -> str:
    """The header for a frame column: a known label, else words from its snake_case name."""
    text = str(name)
    if text in KNOWN:
        return KNOWN[text]
    if "_" not in text and not text.islower():
        return text  # already written for people: "ICC(2,1)", "N", "RadLE-C"
    words = [_WORDS.get(w, w) for w in text.replace("_", " ").split()]
    if not words:
        return text
    first = words[0]
    return " ".join([first[:1].upper() + first[1:], *words[1:]])
