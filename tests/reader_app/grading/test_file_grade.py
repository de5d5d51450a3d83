"""grade_rows: the CLI's order of key, memory, judges; one verdict per distinct answer."""

from __future__ import annotations

from collections.abc import Sequence

from reader_app.grading.diagnosis_judge import JudgeReply, JudgeRequest, PanelOutcome
from reader_app.grading.file_grade import grade_rows
from reader_app.grading.key import KeyEntry

KEY = {"c1": KeyEntry("c1", "Pectus excavatum", ("Funnel chest",))}


def test_key_memory_judges_pending_in_that_order() -> None:
    asked: list[str] = []

    def panel(requests: Sequence[JudgeRequest]) -> list[PanelOutcome]:
        asked.extend(r.normalized_answer for r in requests)
        ok = JudgeReply(correct=1)
        return [
            PanelOutcome(1, "agree", (ok, ok))
            if r.normalized_answer == "pectus excavatum deformity"
            else PanelOutcome(None, "disagree", (ok, JudgeReply(correct=0)))
            for r in requests
        ]

    verdicts, report = grade_rows(
        ["c1", "c1", "c1", "c1", "c1", "c9", "c1"],
        [
            "funnel-chest",
            "Pectus carinatum",
            "Pectus excavatum deformity",
            "Haller index 4",
            "PECTUS CARINATUM",
            "Anything",
            None,
        ],
        [True, True, True, True, True, True, False],
        KEY,
        memory={("c1", "pectus carinatum"): 0},
        panel=panel,
    )
    assert verdicts == ["correct", "incorrect", "correct", "pending", "incorrect", "pending", ""]
    # the judges only saw what key and memory could not grade, once per distinct answer
    assert asked == ["haller index 4", "pectus excavatum deformity"]
    assert (report.by_key, report.by_memory, report.by_judge, report.pending) == (1, 2, 1, 2)
    assert report.judge_disagreements == 1 and report.cases_without_key == ["c9"]
    assert "no key for case(s) c9" in report.summary()
