"""How much grading a set of answers needs: key, grade memory, human.

Answers are taken in arrival order. An answer the key accepts is graded by
the key. The first answer of any other (case, normalized answer) item needs a
human decision; every later identical answer reuses it from grade memory.
This is exactly what the app does (one queue item per distinct answer), so
the figures are the app's workload, before any LLM judges.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from reader_app.grading.key import KeyEntry
from reader_app.grading.matcher import matches_normalized
from reader_app.grading.normalize import normalize_answer


@dataclass(frozen=True)
class Workload:
    rows: int
    answered: int  # rows that need a verdict
    by_key: int
    by_memory: int
    to_human: int  # = distinct items a human decides (one decision grades the item)

    def share(self, part: int) -> float:
        return 100.0 * part / self.answered if self.answered else float("nan")

    @property
    def auto_share(self) -> float:
        return self.share(self.by_key + self.by_memory)


def grading_workload(
    rows: Iterable[tuple[str, str | None, bool]], key: Mapping[str, KeyEntry]
) -> Workload:
    """``rows``: (case id, diagnosis, is an answer) in arrival order."""
    n = answered = by_key = by_memory = to_human = 0
    seen: set[tuple[str, str]] = set()
    for case_id, diagnosis, is_answer in rows:
        n += 1
        norm = normalize_answer(diagnosis)
        if not is_answer or not norm:
            continue
        answered += 1
        entry = key.get(case_id)
        if entry is not None and matches_normalized(norm, entry):
            by_key += 1
        elif (case_id, norm) in seen:
            by_memory += 1
        else:
            seen.add((case_id, norm))
            to_human += 1
    return Workload(n, answered, by_key, by_memory, to_human)
