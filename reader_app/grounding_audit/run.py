"""Run the audit's five arms as ordinary, resumable model runs of the study.

Each arm is one run (``arm_run_name``): ``original`` is the run ``run-model``
would make under the same name, ``text_only`` its ``--no-images`` twin, the
others ``<name> [<arm>]``. An arm's run and its ``audit_arms`` record are
made before anything is asked, so a call after a kill resumes the same run;
a record with other intervention parameters is refused (another ``--name``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, select

from reader_app.core.errors import ReaderStudyError
from reader_app.grounding_audit.arms import ArmPlan, AuditSettings, audited_jobs, plan_arm
from reader_app.llm import ChatClient
from reader_app.llm.prompts import Prompt
from reader_app.models import AuditArm, Study
from reader_app.runs import lease
from reader_app.runs.record import RunSpec, open_run, text_only_name
from reader_app.runs.runner import ProgressFn, RunSummary, run_model
from scoring import AUDIT_ARMS as ARMS


class AuditConflict(ReaderStudyError, ValueError):
    """The audit exists under this name with other intervention parameters."""


def arm_run_name(name: str, arm: str) -> str:
    if arm == "original":
        return name
    if arm == "text_only":
        return text_only_name(name)
    return f"{name} [{arm}]"


def arm_spec(base: RunSpec, name: str, arm: str) -> RunSpec:
    return replace(base, name=arm_run_name(name, arm), no_images=arm == "text_only")


@dataclass(frozen=True)
class ArmResult:
    arm: str
    summary: RunSummary
    left_out: dict[str, str]


def _check_arm(
    *, session: Session, study: Study, name: str, arm: str, params: dict[str, object]
) -> None:
    text = json.dumps(params, sort_keys=True)
    found = session.exec(
        select(AuditArm).where(
            AuditArm.study_id == study.id, AuditArm.name == name, AuditArm.arm == arm
        )
    ).first()
    if found is not None and found.params_json != text:
        raise AuditConflict(
            f"audit {name!r}, arm {arm}: recorded with {found.params_json}, asked with {text}; "
            "use the same --fill and --intervention-seed, or choose another --name"
        )


def _open_arms(
    *,
    session: Session,
    study: Study,
    name: str,
    base: RunSpec,
    prompt: Prompt,
    host: str,
    settings: AuditSettings,
) -> None:
    """Every arm's run and record, in one commit: a conflict anywhere writes nothing."""
    for arm in ARMS:
        params = settings.of_arm(arm)
        _check_arm(session=session, study=study, name=name, arm=arm, params=params)
        run, _ = open_run(
            session=session, study=study, spec=arm_spec(base, name, arm), prompt=prompt, host=host
        )
        assert run.id is not None
        found = session.exec(
            select(AuditArm).where(
                AuditArm.study_id == study.id, AuditArm.name == name, AuditArm.arm == arm
            )
        ).first()
        if found is None:
            text = json.dumps(params, sort_keys=True)
            session.add(
                AuditArm(
                    study_id=study.id or 0,
                    name=name,
                    arm=arm,
                    model_run_id=run.id,
                    params_json=text,
                )
            )
            session.flush()
    session.commit()


def run_audit(
    *,
    session: Session,
    study: Study,
    name: str,
    base: RunSpec,
    prompt: Prompt,
    client: ChatClient,
    asset_dir: Path,
    host: str,
    settings: AuditSettings,
    concurrency: int = 4,
    retry_failures: bool = False,
    lease_s: float = lease.DEFAULT_LEASE_S,
    progress: Callable[[str], ProgressFn | None] = lambda _arm: None,
) -> list[ArmResult]:
    """Every arm, in the order of SCORING.md section 9; each commits as answers arrive."""
    if base.strip_mode != "slices":
        raise ValueError("the audit sends slices: a montage shows every slice's region at once")
    if not audited_jobs(session=session, study=study)[0]:
        raise ValueError("no scored case of the study carries a reference region: nothing to audit")
    for arm in ARMS:  # refuse changed parameters before anything is written
        _check_arm(session=session, study=study, name=name, arm=arm, params=settings.of_arm(arm))

    def open_arms() -> None:
        _open_arms(
            session=session,
            study=study,
            name=name,
            base=base,
            prompt=prompt,
            host=host,
            settings=settings,
        )

    try:
        open_arms()
    except IntegrityError:  # another process opened them a moment ago: join them
        session.rollback()
        open_arms()
    plans: list[tuple[ArmPlan, RunSpec]] = []
    for arm in ARMS:
        plan = plan_arm(
            session=session, study=study, arm=arm, settings=settings, asset_dir=asset_dir
        )
        session.commit()
        plans.append((plan, arm_spec(base, name, arm)))
    results = []
    for plan, spec in plans:
        summary = run_model(
            session=session,
            study=study,
            spec=spec,
            prompt=prompt,
            client=client,
            asset_dir=plan.asset_dir,
            host=host,
            concurrency=concurrency,
            retry_failures=retry_failures,
            progress=progress(plan.arm),
            actor=f"cli:audit-grounding:{plan.arm}",
            lease_s=lease_s,
            jobs=plan.jobs,
        )
        results.append(ArmResult(plan.arm, summary, plan.left_out))
    return results
