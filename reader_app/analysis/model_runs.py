"""Model runs for the analyst: the runs of a study, and importing a file of model outputs.

The import is the runs package's own service (``import_run_file``, the one
behind ``readerstudy import-run``), followed by the same automatic grading
pass; this module adds the role check and a table of runs: per run its
tokens, cost, cost per correct answer and latency p50/p95 (runs/usage.py),
and per group of repeat runs (``run-model --repeats N``) each repeat's scores,
their mean and SD and run-to-run agreement (scoring/repeats.py). The same
frames are the ``runs``, ``run-replies`` and ``repeats`` exports.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pandas as pd
from sqlalchemy import select as sa_select
from sqlmodel import Session, col, select

from reader_app.analysis.data import analysed_study, has_repeat_runs
from reader_app.models import Case, ModelRun, Reader, Response, Study
from reader_app.results import tidy_responses
from reader_app.runs.record import recorded_price
from reader_app.runs.usage import TOKEN_KEYS, Price, call_cost, usage_summary
from scoring import REPEAT_METRICS, ScoringParams, repeat_groups, score_responses

if TYPE_CHECKING:
    from pathlib import Path

    from reader_app.runs.import_writer import ImportSummary

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
USAGE_COLUMNS = (
    "run",
    "model",
    "run_group",
    "repeat",
    "cohort",
    "responses",
    "correct",
    *TOKEN_KEYS,
    "cost",
    "cost_source",
    "cost_per_correct",
    "latency_p50_s",
    "latency_p95_s",
)
REPLY_COLUMNS = (
    "run",
    "case_id",
    "status",
    *TOKEN_KEYS,
    "cost",
    "cost_source",
    "latency_s",
    "batch",
    "reasoning_text",
    "raw_reply",
)
REPEAT_COLUMNS = (
    "run_group",
    "n_repeats",
    "repeats",
    *(f"{m}_{s}" for m in REPEAT_METRICS for s in ("mean", "sd")),
    "outcome_kappa",
    "identical_share",
    "cases_rated_by_all",
    "likert_identical_share",
    "likert_icc",
    "cases_answered_by_all",
)


def list_runs(
    *, session: Session, actor: Reader, usage: pd.DataFrame | None = None
) -> pd.DataFrame:
    """The runs (counts by status, when) followed by their usage (``USAGE_COLUMNS``):
    ``usage`` when the caller has it (the analyst page: the shared scoring's, once per
    data version), else :func:`run_usage` computed here."""
    study = analysed_study(session=session, actor=actor)
    assert study.id is not None
    base = _run_counts(session=session, study=study)
    if base.empty:
        return base
    if usage is None:
        usage = run_usage(session=session, study_id=study.id)
    return base.merge(usage.drop(columns=["model"]), on="run", how="left")


def _run_counts(*, session: Session, study: Study) -> pd.DataFrame:
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
    data: bytes | Path,
    filename: str,
    name: str | None = None,
    group: str | None = None,
) -> tuple[ImportSummary, str]:
    """Import an uploaded JSONL/CSV/RadLE file (all or nothing), then auto-grade.

    ``data``: the file on disk (the browser's upload) or its bytes.

    Raises RunImportError with a message for the user; returns the summary and
    the grading line.
    """
    # The importers and the grading pass (the answer matcher, the file parsers) are
    # imported here, on an import: the page that lists the runs needs none of them.
    from reader_app.runs.autograde_hook import autograde_after_run
    from reader_app.runs.importers import import_run_file

    study = analysed_study(session=session, actor=actor)
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


def _run_prices(
    runs: list[ModelRun], prices: Mapping[str, Price] | None
) -> dict[int, Price | None]:
    """Each run's price: the prices file's row for its model, else the one recorded
    with its totals (``run-model --price-in/--price-out``), else none."""
    return {r.id or 0: (prices or {}).get(r.model) or recorded_price(r) for r in runs}


def _model_rows(session: Session, study_id: int) -> list[tuple[Any, ...]]:
    return list(
        session.execute(
            sa_select(
                col(Response.model_run_id),
                col(Case.source_id),
                col(Response.status),
                col(Response.meta_json),
                col(Response.reasoning_text),
                col(Response.raw_reply),
            )
            .join(Case, col(Case.id) == Response.case_id)
            .where(
                col(Response.study_id) == study_id,
                col(Response.model_run_id).is_not(None),
                col(Response.practice).is_(False),
            )
            .order_by(col(Response.id))
        ).all()
    )


def run_usage(
    *, session: Session, study_id: int, prices: Mapping[str, Price] | None = None
) -> pd.DataFrame:
    """One row per run: tokens, cost (the provider's, else priced), cost per correct
    answer (graded answers only) and latency p50/p95; the ``runs`` export."""
    runs = list(
        session.exec(
            select(ModelRun).where(ModelRun.study_id == study_id).order_by(col(ModelRun.name))
        ).all()
    )
    price = _run_prices(runs, prices)
    metas: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for run_id, _case, _status, meta_json, _r, _raw in _model_rows(session, study_id):
        metas[run_id or 0].append(json.loads(meta_json or "{}"))
    # the runs' rows alone: the readers' (most of a study's answers) are not counted here
    tidy = tidy_responses(session=session, study_id=study_id, models_only=True)
    models = tidy[tidy["kind"] == "model"]
    correct = models[models["correct"] == 1].groupby("responder").size().to_dict()
    rows = []
    for r in runs:
        summary = usage_summary(
            metas[r.id or 0], price=price[r.id or 0], correct=int(correct.get(r.name, 0))
        )
        rows.append(
            {
                "run": r.name,
                "model": r.model,
                "run_group": r.run_group,
                "repeat": r.repeat_index,
                "cohort": r.cohort,
                "responses": len(metas[r.id or 0]),
                **summary,
            }
        )
    frame = pd.DataFrame(rows, columns=list(USAGE_COLUMNS))
    frame["repeat"] = frame["repeat"].astype("Int64")
    return frame


def run_replies(
    *, session: Session, study_id: int, prices: Mapping[str, Price] | None = None
) -> pd.DataFrame:
    """One row per model reply: its tokens, cost, latency, reasoning text and raw reply;
    the ``run-replies`` export (an analyst's file: never shown to a reader)."""
    runs = list(session.exec(select(ModelRun).where(ModelRun.study_id == study_id)).all())
    names = {r.id: r.name for r in runs}
    price = _run_prices(runs, prices)
    rows = []
    for run_id, case, status, meta_json, reasoning, raw in _model_rows(session, study_id):
        meta = json.loads(meta_json or "{}")
        cost, source = call_cost(meta, price[run_id or 0])
        rows.append(
            {
                "run": names.get(run_id),
                "case_id": case,
                "status": status,
                **{k: meta.get(k) for k in TOKEN_KEYS},
                "cost": cost,
                "cost_source": source,
                "latency_s": meta.get("latency_s"),
                "batch": bool(meta.get("batch", False)),
                "reasoning_text": reasoning,
                "raw_reply": raw,
            }
        )
    frame = pd.DataFrame(rows, columns=list(REPLY_COLUMNS))
    for key in TOKEN_KEYS:
        frame[key] = frame[key].astype("Int64")
    return frame


def repeat_frame(frame: pd.DataFrame, *, session: Session, study_id: int) -> pd.DataFrame:
    """``run_group`` and ``repeat`` after the columns of a frame with a ``responder``
    column, on the rows of repeat runs: what ``score`` reads to find the repeats."""
    runs = session.exec(
        select(ModelRun).where(ModelRun.study_id == study_id, col(ModelRun.run_group).is_not(None))
    ).all()
    by_name = {r.name: (r.run_group, r.repeat_index) for r in runs}
    out = frame.copy()
    model = out["kind"] == "model" if "kind" in out.columns else True
    pairs = [
        by_name.get(n) if m else None
        for n, m in zip(out["responder"], pd.Series(model, index=out.index), strict=True)
    ]
    out["run_group"] = pd.Series(
        [p[0] if p else None for p in pairs], index=out.index, dtype=object
    )
    out["repeat"] = pd.Series([p[1] if p else None for p in pairs], index=out.index, dtype="Int64")
    return out


def repeat_summary(
    *, session: Session, study_id: int, case_ids: tuple[str, ...] | None = None
) -> pd.DataFrame:
    """One row per group of repeat runs (``REPEAT_COLUMNS``): the scores' mean and SD and
    run-to-run agreement, as ``readerstudy score`` gives them; answers not graded yet
    count as not rated (left out), so the figures are final once grading is done."""
    if not has_repeat_runs(session=session, study_id=study_id):  # one indexed look, no frame
        return pd.DataFrame(columns=list(REPEAT_COLUMNS))
    # the runs' rows alone: the readers' (most of a study's answers) are not counted here
    tidy = tidy_responses(session=session, study_id=study_id, models_only=True)
    tidy = repeat_frame(tidy, session=session, study_id=study_id)
    tidy = tidy[tidy["run_group"].notna()]
    if tidy.empty:
        return pd.DataFrame(columns=list(REPEAT_COLUMNS))
    graded = tidy[~((tidy["status"] == "answered") & tidy["correct"].isna())]
    report = score_responses(
        graded.drop(columns=["run_group", "repeat"]), ScoringParams(n_boot=0), case_ids=case_ids
    )
    groups = repeat_groups(graded, report["responders"], case_ids=case_ids)
    rows = [
        {
            **{k: g.get(k) for k in REPEAT_COLUMNS if k != "repeats"},
            "repeats": ", ".join(r["responder"] for r in g["repeats"]),
        }
        for g in groups
    ]
    return pd.DataFrame(rows, columns=list(REPEAT_COLUMNS))
