"""Model runs for the analyst: the runs of a study, and importing a file of model outputs.

The import is the runs package's own service (``import_run_file``, the one
behind ``readerstudy import-run``), followed by the same automatic grading
pass; this module adds the role check and a table of runs.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import TYPE_CHECKING

import pandas as pd
from sqlmodel import Session, col, select

from reader_app.core.auth import AuthError, require_role
from reader_app.models import ModelRun, Reader, Response, Study

if TYPE_CHECKING:
    from reader_app.runs.import_writer import ImportSummary

RUN_ROLES = ("analyst", "coordinator")
RUN_COLUMNS = (
    "run",
    "model",
    "group",
    "source",
    "prompt_version",
    "answered",
    "idk",
    "invalid",
    "failure",
    "started",
    "finished",
)


def _study(session: Session, actor: Reader) -> Study:
    require_role(actor, *RUN_ROLES)
    study = session.get(Study, actor.study_id)
    if study is None or study.id is None:
        raise AuthError("This study no longer exists.")
    return study


def list_runs(*, session: Session, actor: Reader) -> pd.DataFrame:
    study = _study(session, actor)
    runs = session.exec(
        select(ModelRun).where(ModelRun.study_id == study.id).order_by(col(ModelRun.name))
    ).all()
    counts: dict[int, Counter[str]] = defaultdict(Counter)
    for run_id, status in session.exec(
        select(Response.model_run_id, Response.status).where(
            Response.study_id == study.id,
            col(Response.model_run_id).is_not(None),
            col(Response.practice).is_(False),
        )
    ).all():
        counts[run_id or 0][status] += 1
    return pd.DataFrame(
        [
            {
                "run": r.name,
                "model": r.model,
                "group": r.group_name,
                "source": r.source,
                "prompt_version": r.prompt_version,
                **{s: counts[r.id or 0][s] for s in ("answered", "idk", "invalid", "failure")},
                "started": r.started_at,
                "finished": r.finished_at,
            }
            for r in runs
        ],
        columns=list(RUN_COLUMNS),
    )


def import_model_file(
    *,
    session: Session,
    actor: Reader,
    data: bytes,
    filename: str,
    name: str | None = None,
    group: str | None = None,
) -> tuple[ImportSummary, str]:
    """Import an uploaded JSONL/CSV/RadLE file (all or nothing), then auto-grade.

    Raises RunImportError with a message for the user; returns the summary and
    the grading line.
    """
    # The importers and the grading pass (the answer matcher, the file parsers) are
    # imported here, on an import: the page that lists the runs needs none of them.
    from reader_app.runs.autograde_hook import autograde_after_run
    from reader_app.runs.importers import import_run_file

    study = _study(session, actor)
    assert study.id is not None
    summary = import_run_file(
        session=session,
        study=study,
        source=data,
        filename=filename,
        name=(name or "").strip() or None,
        group=(group or "").strip() or None,
        actor=actor.code,
    )
    graded = autograde_after_run(session=session, study_id=study.id, actor=actor.code)
    return summary, graded
