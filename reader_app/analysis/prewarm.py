"""The scored study computed before the first analyst asks for it (issue 43).

An analyst's sign-in lands on the Leaderboard, whose first page run after a
server start loaded the tidy frame and scored it twice (point estimates, then
the bootstrap): about a second of the sign-in. :func:`prewarm_scored_studies`
does the same work once, at server start (reader_app/web/prewarm.py calls it in
a background thread), through ``SHARED`` and with the parameters the analyst
pages start with (``ScoringParams()``: B = 2000, seed 0; the sidebar's
defaults), so the sign-in's page run finds the board computed and draws it at
once. What it computes is keyed by study and data version as any page run's
result: an answer or a grade that arrives later changes the version, and the
next page run scores again, as without a prewarm.

Only the few most recently created studies with answers are scored, and a study
that cannot be scored yet (no answers, ungraded) is skipped. Where there was one,
the shared scoring's worker process is started at the end (it scores the
versions that come later, off the readers' process). Nothing here
imports Streamlit.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from sqlmodel import Session, col, select

from reader_app.analysis.data import NotScorable, check_scorable
from reader_app.analysis.scored_study import SHARED, SharedScoring
from reader_app.models import Response, Study
from scoring import ScoringParams

log = logging.getLogger(__name__)

MAX_STUDIES = 3  # the most recent studies with answers: a server holds one or two


@dataclass(frozen=True)
class Prewarmed:
    slug: str
    seconds: float
    scored: bool  # False: not scorable yet (nothing computed beyond the tidy frame)


def studies_to_prewarm(*, session: Session, limit: int = MAX_STUDIES) -> list[Study]:
    """The ``limit`` most recently created studies that have at least one answer."""
    answered = select(Response.study_id).distinct()
    return list(
        session.exec(
            select(Study)
            .where(col(Study.id).in_(answered))
            .order_by(col(Study.id).desc())
            .limit(limit)
        ).all()
    )


def prewarm_scored_studies(
    *, session: Session, shared: SharedScoring = SHARED, limit: int = MAX_STUDIES
) -> list[Prewarmed]:
    """Load and score (the Leaderboard's default parameters) the studies an analyst is
    likely to open first, into ``shared``; returns what was done, study by study."""
    done = []
    params = ScoringParams()  # the analyst pages' defaults (analysis_cache.DEFAULTS)
    for study in studies_to_prewarm(session=session, limit=limit):
        t0 = time.perf_counter()
        data = shared.study_data(session=session, study=study)
        try:
            cases = check_scorable(data)
        except NotScorable:
            done.append(Prewarmed(study.slug, time.perf_counter() - t0, scored=False))
            continue
        shared.leaderboard(data, cases, params)
        done.append(Prewarmed(study.slug, time.perf_counter() - t0, scored=True))
    if done and shared.worker is not None:
        # a study with answers: analysts will come, and readers are answering; the scoring
        # worker warms up now, not on the first page that would need it
        shared.worker.start()
    return done


__all__ = ["MAX_STUDIES", "Prewarmed", "prewarm_scored_studies", "studies_to_prewarm"]
