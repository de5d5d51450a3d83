"""What an analysis starts from: the study's tidy frame, its scored case set, a fingerprint.

The frame carries the grounding columns (where each response points and
whether that is a hit, reader_app.grounding.hits) and ``cohort`` (a model
run's cohort, which scoring pools); ``grounded_case_ids`` are
the scored cases with a reference region, the N_g of SCORING.md section 8.

The scored case set is every non-practice case of the study, sorted by case
id: the order ``readerstudy score`` uses for the cases of a file, so the
bootstrap draws the same resamples in the app and on the command line. A case
nobody answered is still in N (every responder scores it as missing); on the
command line ``--cases`` reproduces that.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cached_property

import pandas as pd
from sqlmodel import Session, col, select

from reader_app.core.auth import AuthError, require_role
from reader_app.core.errors import ReaderStudyError
from reader_app.grounding.hits import grounded_case_ids
from reader_app.models import AuditArm, Case, ModelRun, Reader, Study
from reader_app.results import tidy_responses
from reader_app.study.case_reports import report_case_ids
from scoring import split_arms

ANALYSIS_ROLES = ("analyst", "coordinator")


class NotScorable(ReaderStudyError, ValueError):
    """There is nothing (yet) to score; the message says why, for the page."""


@dataclass(frozen=True)
class StudyData:
    slug: str
    title: str
    state: str
    frame: pd.DataFrame  # the tidy frame of SCORING.md section 1
    case_ids: tuple[str, ...]  # every scored case of the study, sorted
    fingerprint: str  # changes whenever an answer, a verdict or the case set does
    grounded_case_ids: tuple[str, ...] = ()  # scored cases with a reference region, sorted
    text_only_runs: frozenset[str] = frozenset()  # model runs sent no image (no_images)
    study_id: int = 0  # the study's row id
    version: str = ""  # its data version when loaded through analysis.scored_study, else ""
    # the AI-aided arm's rows (SCORING.md section 10; ``arm`` = aided), kept out of
    # ``frame`` so every view of one row per (responder, case) stays as it was;
    # ``scoring.score_with_aid`` takes both (``with_aided``)
    aided_frame: pd.DataFrame | None = None
    # the runs of a grounding audit's arms ("<model> [occlude_relevant]", its "(text only)"
    # twin...): interventions on one model, not models, so kept out of ``frame`` (the
    # leaderboard, charts, matrix); the audit's own section shows them (issue 42)
    audit_runs: frozenset[str] = frozenset()

    @property
    def with_aided(self) -> pd.DataFrame:
        """``frame`` and the aided rows together (what ``score_with_aid`` scores)."""
        if self.aided_frame is None or len(self.aided_frame) == 0:
            return self.frame
        return pd.concat([self.frame, self.aided_frame], ignore_index=True)

    @property
    def pending(self) -> pd.DataFrame:
        """Answered rows without a verdict (scoring refuses them)."""
        f = self.frame
        return f[(f["status"] == "answered") & f["correct"].isna()]

    @property
    def n_pending(self) -> int:
        return len(self.pending)

    @property
    def n_verdicts(self) -> int:
        return int(self.frame["correct"].notna().sum())

    def responders(self, kind: str) -> list[str]:
        return list(self._responders.get(kind, ()))

    @cached_property
    def _responders(self) -> dict[str, tuple[str, ...]]:
        """Each kind's responders, sorted: once per frame, not per page run's call."""
        pairs = self.frame[["kind", "responder"]].drop_duplicates().astype(str)
        return {
            str(kind): tuple(sorted(group["responder"]))
            for kind, group in pairs.groupby("kind", sort=False)
        }

    def graded_cases(self) -> tuple[str, ...]:
        """Cases without an ungraded answer (sorted): what can be scored right now."""
        waiting = set(self.pending["case_id"])
        return tuple(c for c in self.case_ids if c not in waiting)


def fingerprint(
    frame: pd.DataFrame, case_ids: tuple[str, ...], grounded: tuple[str, ...] = ()
) -> str:
    digest = hashlib.sha256(frame.to_csv(index=False).encode("utf-8"))
    digest.update("\x1f".join(case_ids).encode("utf-8"))
    if grounded:  # a region added to an unanswered case changes N_g
        digest.update(("\x1e" + "\x1f".join(grounded)).encode("utf-8"))
    return digest.hexdigest()[:24]


def run_cohorts(*, session: Session, study_id: int) -> dict[str, str | None]:
    """Each model run's cohort by run name (None when it has none)."""
    runs = session.exec(select(ModelRun).where(ModelRun.study_id == study_id)).all()
    return {r.name: r.cohort for r in runs}


def has_repeat_runs(*, session: Session, study_id: int) -> bool:
    """Whether the study has a group of repeat runs (``run-model --repeats N``): one
    indexed look, so a page draws the repeats' section, and imports what it needs,
    only when there is one."""
    return (
        session.exec(
            select(ModelRun.id).where(
                ModelRun.study_id == study_id, col(ModelRun.run_group).is_not(None)
            )
        ).first()
        is not None
    )


def with_cohort(frame: pd.DataFrame, cohorts: dict[str, str | None], who: str) -> pd.DataFrame:
    """``cohort`` after the data columns: the run's cohort on a model row, else empty."""
    out = frame.copy()
    names = out[who] if who in out.columns else pd.Series([], dtype=object)
    kinds = out["kind"] if "kind" in out.columns else pd.Series(["model"] * len(out))
    out["cohort"] = pd.Series(
        [cohorts.get(n) if k == "model" else None for n, k in zip(names, kinds, strict=True)],
        index=out.index,
        dtype=object,
    )
    return out


def scored_case_ids(*, session: Session, study_id: int) -> tuple[str, ...]:
    """Non-practice diagnosis cases (report-mode cases are scored by the rubric)."""
    reports = report_case_ids(session=session, study_id=study_id)
    rows = session.exec(
        select(Case.id, Case.source_id).where(
            Case.study_id == study_id, col(Case.practice).is_(False)
        )
    ).all()
    return tuple(sorted(str(source) for cid, source in rows if cid not in reports))


def audit_arm_runs(*, session: Session, study_id: int) -> frozenset[str]:
    """Names of the runs that hold a grounding audit's arms other than ``original`` (which
    is the model's ordinary run, ranked like any other)."""
    names = session.exec(
        select(ModelRun.name)
        .join(AuditArm, col(AuditArm.model_run_id) == ModelRun.id)
        .where(AuditArm.study_id == study_id, AuditArm.arm != "original")
    ).all()
    return frozenset(names)


def without_runs(frame: pd.DataFrame, runs: frozenset[str]) -> pd.DataFrame:
    """``frame`` without the model rows of ``runs``."""
    if not runs or frame.empty:
        return frame
    drop = (frame["kind"] == "model") & frame["responder"].isin(runs)
    return frame[~drop].reset_index(drop=True)


def study_data(*, session: Session, study: Study) -> StudyData:
    """The tidy frame and case set of a study (no role check: the CLI's entry)."""
    assert study.id is not None
    frame = with_cohort(
        tidy_responses(session=session, study_id=study.id, with_grounding=True),
        run_cohorts(session=session, study_id=study.id),
        "responder",
    )
    cases = scored_case_ids(session=session, study_id=study.id)
    whole = frame
    frame, aided = split_arms(frame)
    audit_runs = audit_arm_runs(session=session, study_id=study.id)
    frame = without_runs(frame, audit_runs)
    scored = set(cases)
    grounded = tuple(
        c for c in grounded_case_ids(session=session, study_id=study.id) if c in scored
    )
    text_only = session.exec(
        select(ModelRun.name).where(ModelRun.study_id == study.id, col(ModelRun.no_images))
    ).all()
    return StudyData(
        slug=study.slug,
        title=study.title,
        state=study.state,
        frame=frame,
        case_ids=cases,
        fingerprint=fingerprint(whole, cases, grounded),
        grounded_case_ids=grounded,
        text_only_runs=frozenset(text_only) - audit_runs,
        study_id=study.id,
        aided_frame=aided if len(aided) else None,
        audit_runs=audit_runs,
    )


def analysed_study(*, session: Session, actor: Reader) -> Study:
    """The actor's study, for analysts and coordinators only."""
    require_role(actor, *ANALYSIS_ROLES)
    study = session.get(Study, actor.study_id)
    if study is None or study.id is None:
        raise AuthError("This study no longer exists.")
    return study


def load_study_data(*, session: Session, actor: Reader) -> StudyData:
    """The actor's study's data, for analysts and coordinators only."""
    return study_data(session=session, study=analysed_study(session=session, actor=actor))


def check_scorable(data: StudyData, case_ids: tuple[str, ...] | None = None) -> tuple[str, ...]:
    """The case set to score, or NotScorable with a message for an empty or ungraded study."""
    cases = data.case_ids if case_ids is None else case_ids
    if not data.case_ids:
        raise NotScorable("This study has no scored cases yet: import a case set first.")
    if data.frame.empty:
        raise NotScorable(
            "No answers yet: nothing to score until readers answer or a model run is imported."
        )
    if data.n_verdicts == 0 and data.n_pending > 0:
        raise NotScorable(
            f"No verdicts yet: all {data.n_pending} answers wait for grading "
            "(answer key, adjudication or judges). The leaderboard appears once they are graded."
        )
    if not cases:
        raise NotScorable("Every case still has an answer waiting for grading.")
    waiting = data.pending[data.pending["case_id"].isin(cases)]
    if not waiting.empty:
        raise NotScorable(
            f"{len(waiting)} answer(s) on {waiting['case_id'].nunique()} case(s) are not graded "
            f"yet; scoring never guesses a verdict. {how_to_grade(data.slug)} Or score only the "
            f"{len(data.graded_cases())} fully graded case(s)."
        )
    return cases


def how_to_grade(slug: str) -> str:
    """Who can grade a study's pending answers, and where (issue 42): said wherever a
    page or an export stops at ungraded answers."""
    return (
        "Pending answers are graded by an adjudicator on the Adjudication page (a "
        "coordinator invites one on the Invites page with the role adjudicator), or on the "
        f"server with `readerstudy grade {slug}` (answer key and earlier grades; add "
        "`--judge URL MODEL` for LLM judges)."
    )
