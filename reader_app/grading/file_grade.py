"""Grade rows of a responses file (the tidy frame) against a key file.

Used by ``readerstudy grade``. The order is the app's order: the key (exact
match after normalization), then grade memory (human and judge verdicts of a
study, when one is named), then the judges (when configured and not
``--auto-only``). Whatever is left is ``pending``. Rows that are not answers
(idk, failure, invalid) get an empty verdict: scoring gives them their points
by status, and there is nothing to judge.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from sqlmodel import Session, col, select

from reader_app.grading.diagnosis_judge import JudgeRequest, PanelOutcome
from reader_app.grading.key import KeyEntry
from reader_app.grading.matcher import matches_normalized
from reader_app.grading.normalize import normalize_answer
from reader_app.models import Case, Verdict

CORRECT, INCORRECT, PENDING, NOT_GRADED = "correct", "incorrect", "pending", ""
# grade-memory sources the CLI reuses: decisions, not the study's own key matches
MEMORY_SOURCES = ("adjudicator", "judge", "import")

Panel = Callable[[Sequence[JudgeRequest]], list[PanelOutcome]]


@dataclass
class FileGradeReport:
    rows: int = 0
    answered: int = 0
    by_key: int = 0
    by_memory: int = 0
    by_judge: int = 0
    pending: int = 0
    pending_items: int = 0
    judge_disagreements: int = 0
    judge_errors: int = 0
    cases_without_key: list[str] = field(default_factory=list)

    def summary(self) -> str:
        parts = [
            f"{self.answered} answered of {self.rows} rows",
            f"{self.by_key} by key",
            f"{self.by_memory} by grade memory",
            f"{self.by_judge} by judges",
            f"{self.pending} pending ({self.pending_items} distinct answers)",
        ]
        if self.judge_disagreements or self.judge_errors:
            parts.append(
                f"judges split on {self.judge_disagreements}, failed on {self.judge_errors}"
            )
        if self.cases_without_key:
            parts.append(f"no key for case(s) {', '.join(self.cases_without_key[:10])}")
        return "; ".join(parts)


def study_memory(*, session: Session, study_id: int) -> dict[tuple[str, str], int]:
    """Active adjudicator, judge and import verdicts of a study by (case id, normalized answer)."""
    rows = session.exec(
        select(Case.source_id, Verdict.normalized_answer, Verdict.correct)
        .join(Case, col(Case.id) == Verdict.case_id)
        .where(
            Case.study_id == study_id,
            col(Verdict.active).is_(True),
            col(Verdict.source).in_(MEMORY_SOURCES),
        )
    ).all()
    return {(case_id, norm): correct for case_id, norm, correct in rows}


def grade_rows(
    case_ids: Sequence[str],
    diagnoses: Sequence[str | None],
    answered: Sequence[bool],
    key: Mapping[str, KeyEntry],
    *,
    memory: Mapping[tuple[str, str], int] | None = None,
    panel: Panel | None = None,
) -> tuple[list[str], FileGradeReport]:
    """One verdict per row: correct / incorrect / pending, or '' for a non-answer."""
    report = FileGradeReport(rows=len(case_ids))
    verdicts = [NOT_GRADED] * len(case_ids)
    decided: dict[tuple[str, str], tuple[str, str]] = {}  # item -> (verdict, source)
    open_items: dict[tuple[str, str], str] = {}  # item -> a spelling to show the judges
    missing_key: set[str] = set()
    for case_id, diagnosis, is_answer in zip(case_ids, diagnoses, answered, strict=True):
        if not is_answer:
            continue
        norm = normalize_answer(diagnosis)
        item = (case_id, norm)
        entry = key.get(case_id)
        if entry is None:
            missing_key.add(case_id)
        if item in decided or item in open_items:
            continue
        if entry is not None and matches_normalized(norm, entry):
            decided[item] = (CORRECT, "key")
        elif memory and item in memory:
            decided[item] = (CORRECT if memory[item] else INCORRECT, "memory")
        elif entry is not None and norm:
            open_items[item] = " ".join((diagnosis or "").split())
    if panel is not None and open_items:
        items = sorted(open_items)
        requests = [
            JudgeRequest(
                reference=key[c].diagnosis,
                synonyms=key[c].synonyms,
                candidate=open_items[(c, n)],
                normalized_answer=n,
            )
            for c, n in items
        ]
        for item, outcome in zip(items, panel(requests), strict=True):
            if outcome.correct is not None:
                decided[item] = (CORRECT if outcome.correct else INCORRECT, "judge")
            elif outcome.status == "disagree":
                report.judge_disagreements += 1
            else:
                report.judge_errors += 1
    pending_items: set[tuple[str, str]] = set()
    for i, (case_id, diagnosis, is_answer) in enumerate(
        zip(case_ids, diagnoses, answered, strict=True)
    ):
        if not is_answer:
            continue
        report.answered += 1
        item = (case_id, normalize_answer(diagnosis))
        verdict, source = decided.get(item, (PENDING, ""))
        verdicts[i] = verdict
        if source == "key":
            report.by_key += 1
        elif source == "memory":
            report.by_memory += 1
        elif source == "judge":
            report.by_judge += 1
        else:
            report.pending += 1
            pending_items.add(item)
    report.pending_items = len(pending_items)
    report.cases_without_key = sorted(missing_key)
    return verdicts, report
