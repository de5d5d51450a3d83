"""An audit's figures from the database: the arms' graded answers into ``scoring.audit``.

Verdicts come from grade memory through ``results.tidy_responses``, the frame
the leaderboard scores, so an arm's accuracy is its run's leaderboard accuracy
on these cases. An answer still waiting for a verdict counts as not correct
and is reported (``ungraded``), as are the cases an arm leaves out.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from sqlmodel import Session, col, select

from reader_app.grounding.hits import case_references
from reader_app.models import AuditArm, AuditImage, Case, ModelRun
from reader_app.results import tidy_responses
from reader_app.study.case_reports import report_case_ids
from scoring import AUDIT_ARMS as ARMS
from scoring import AuditParams, audit_report


@dataclass(frozen=True)
class AuditRuns:
    name: str
    model: str
    runs: dict[str, ModelRun]  # arm -> run
    params: dict[str, dict[str, Any]]  # arm -> intervention parameters

    @property
    def complete(self) -> bool:
        return set(self.runs) == set(ARMS)


def audits(*, session: Session, study_id: int) -> list[AuditRuns]:
    """The study's audits by name, each with the runs of the arms it has so far."""
    rows = session.exec(
        select(AuditArm, ModelRun)
        .join(ModelRun, col(ModelRun.id) == AuditArm.model_run_id)
        .where(AuditArm.study_id == study_id)
        .order_by(col(AuditArm.name), col(AuditArm.id))
    ).all()
    found: dict[str, AuditRuns] = {}
    for arm, run in rows:
        entry = found.setdefault(arm.name, AuditRuns(arm.name, run.model, {}, {}))
        entry.runs[arm.arm] = run
        entry.params[arm.arm] = json.loads(arm.params_json or "{}")
    return list(found.values())


def has_audit(*, session: Session, study_id: int) -> bool:
    """Whether the study has any audit arm: one indexed look, so a page without an audit
    imports and computes nothing for it."""
    found = session.exec(select(AuditArm.id).where(AuditArm.study_id == study_id)).first()
    return found is not None


def audited_case_ids(*, session: Session, study_id: int) -> dict[int, str]:
    """Case id -> source id of the scored diagnosis cases with a reference region."""
    refs = case_references(session=session, study_id=study_id)
    reports = report_case_ids(session=session, study_id=study_id)
    rows = session.exec(
        select(Case.id, Case.source_id)
        .where(Case.study_id == study_id, col(Case.practice).is_(False))
        .order_by(col(Case.source_id))
    ).all()
    return {cid: src for cid, src in rows if cid in refs and cid not in reports}


def _held(*, session: Session, study_id: int, arm: str, cases: dict[int, str]) -> set[str]:
    if arm in ("original", "text_only"):
        return set(cases.values())
    with_images = session.exec(
        select(AuditImage.case_id).where(AuditImage.study_id == study_id, AuditImage.arm == arm)
    ).all()
    return {cases[c] for c in set(with_images) if c in cases}


def audit_figures(
    *, session: Session, study_id: int, audit: AuditRuns, params: AuditParams | None = None
) -> dict[str, Any]:
    """The audit's report (``scoring.audit.audit_report``) with its name, runs and notes."""
    params = params or AuditParams()
    cases = audited_case_ids(session=session, study_id=study_id)
    frame = tidy_responses(session=session, study_id=study_id)
    rows: list[dict[str, Any]] = []
    ungraded: dict[str, int] = {}
    left_out: dict[str, list[str]] = {}
    for arm in ARMS:
        run = audit.runs.get(arm)
        held = _held(session=session, study_id=study_id, arm=arm, cases=cases)
        left_out[arm] = sorted(set(cases.values()) - held)
        answers = frame[frame["responder"] == run.name] if run is not None else frame.iloc[0:0]
        by_case = {str(r.case_id): r for r in answers.itertuples(index=False)}
        ungraded[arm] = 0
        for case in sorted(held):
            row = by_case.get(case)
            correct = None if row is None or row.correct is None else row.correct
            if row is not None and row.status == "answered" and _blank(correct):
                ungraded[arm] += 1
            rows.append(
                {
                    "arm": arm,
                    "case_id": case,
                    "correct": 0 if _blank(correct) else int(str(correct)),
                    "likert": None if row is None or _blank(row.likert) else int(str(row.likert)),
                }
            )
    report = audit_report(rows, sorted(cases.values()), params)
    report["params"] = {
        **report["params"],
        **{k: v for arm_params in audit.params.values() for k, v in arm_params.items()},
    }
    first = next(iter(audit.runs.values()), None)
    if first is not None:
        report["params"]["run"] = json.loads(first.params_json or "{}")
    return {
        "name": audit.name,
        "model": audit.model,
        **report,
        "runs": {arm: run.name for arm, run in audit.runs.items()},
        "left_out": {arm: ids for arm, ids in left_out.items() if ids},
        "ungraded": {arm: n for arm, n in ungraded.items() if n},
    }


def _blank(value: object) -> bool:
    try:
        return value is None or bool(value != value)  # None, NaN, pd.NA
    except TypeError:
        return True
