"""The scored study, computed once per study and data version, shared by every analyst.

An analyst page needs the study's tidy frame (reader_app.analysis.data) and its
scoring (the leaderboard with its bootstrap, the group split, the per-case
matrix). Loading the frame and scoring it costs most of a second on a lab-size
study, in the process that serves the readers; doing it on every page run of
every analyst slowed the readers down (issue 43). Here both are computed once
per *data version* and kept for every session of the server:

- :func:`data_version` reads, in a handful of aggregate queries (counts, largest
  ids, latest timestamps, revision sums), everything the tidy frame and the
  scoring depend on: the study row (state, settings), its cases, answer keys and
  answer modes, readers (code, group), model runs (name, cohort, text-only),
  responses, verdicts, adjudications and rubric grades. A new or revised answer,
  a verdict or a grade changes it; reading it costs milliseconds, loading the
  frame hundreds.
- :class:`SharedScoring` keeps the results by (study id, data version, what,
  parameters): :meth:`SharedScoring.study_data` the tidy frame,
  :meth:`SharedScoring.leaderboard` the scoring with its bootstrap replicates,
  :meth:`SharedScoring.group_split` the reader-group figures. The key always
  starts with the study's id, so one study's figures are never served for
  another's. Two sessions asking for the same key at once compute it once: the
  second waits for the first's result (single flight). Anything else computed
  from a :class:`StudyData` (a new analyst tab, a comparison column) plugs in
  with :meth:`SharedScoring.computed` under a name of its own.

The loading and the scoring run in a worker process when the server has one
(reader_app.analysis.scoring_worker: ``SHARED`` does, unless
``READERSTUDY_SCORING_WORKER=off``), so an analyst's page run waits on a future
instead of holding the GIL the readers' script runs need; results are keyed and
shared here exactly as when computed in-process, and a worker that fails falls
back to computing here.

``SHARED`` is the server's one instance; the UI's analysis_cache calls it.
Nothing here imports Streamlit.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import Future
from dataclasses import asdict, replace
from typing import Any, TypeVar

import pandas as pd
from sqlalchemy import Integer, cast, func
from sqlmodel import Session, col, select

from reader_app.analysis import scoring_worker
from reader_app.analysis.case_matrix import CaseMatrix, case_matrix
from reader_app.analysis.chart_data import groups_from_board, merged_group_split
from reader_app.analysis.data import StudyData, analysed_study, study_data
from reader_app.analysis.leaderboard import Leaderboard, build_leaderboard
from reader_app.analysis.scoring_worker import ScoringWorker
from reader_app.analysis.timing import reading_times
from reader_app.core.errors import ReaderStudyError
from reader_app.models import (
    Adjudication,
    AnswerKey,
    Case,
    CaseReport,
    ModelRun,
    Reader,
    Response,
    RubricGrade,
    Study,
    Verdict,
)
from scoring import ScoringParams

T = TypeVar("T")
Key = tuple[Hashable, ...]


def _row(session: Session, statement: Any) -> tuple[Any, ...]:
    return tuple(session.exec(statement).one())


def _true_count(flag: Any) -> Any:
    """How many rows have the boolean column set (SQLite and PostgreSQL alike)."""
    return func.sum(cast(flag, Integer))


def data_version(*, session: Session, study_id: int) -> str:
    """A short digest of everything the study's tidy frame and scoring read.

    Aggregates only (indexed by study or case), never the rows themselves: a few
    milliseconds where loading the frame takes hundreds.
    """
    study = session.get(Study, study_id)
    if study is None:
        raise ReaderStudyError(f"no study with id {study_id}")
    of_study = Case.study_id == study_id
    parts: list[Any] = [study.slug, study.title, study.state, study.config_json]
    parts.append(
        _row(
            session,
            select(func.count(), func.max(Case.id), _true_count(col(Case.practice))).where(
                of_study
            ),
        )
    )
    parts.append(
        _row(
            session,
            select(func.count(), func.max(AnswerKey.updated_at))
            .join(Case, col(Case.id) == AnswerKey.case_id)
            .where(of_study),
        )
    )
    parts.append(
        _row(
            session,
            select(
                func.count(), func.max(CaseReport.id), _true_count(CaseReport.answer == "report")
            )
            .join(Case, col(Case.id) == CaseReport.case_id)
            .where(of_study),
        )
    )
    # grade memory keeps its history: a change adds a row and deactivates one
    parts.append(
        _row(
            session,
            select(func.count(), func.max(Verdict.id), _true_count(col(Verdict.active)))
            .join(Case, col(Case.id) == Verdict.case_id)
            .where(of_study),
        )
    )
    parts.append(
        _row(
            session,
            select(func.count(), func.max(Adjudication.id), _true_count(col(Adjudication.active)))
            .join(Case, col(Case.id) == Adjudication.case_id)
            .where(of_study),
        )
    )
    parts.append(
        _row(
            session,
            select(
                func.count(),
                func.max(Response.id),
                func.sum(Response.revision),
                func.max(Response.submitted_at),
            ).where(Response.study_id == study_id),
        )
    )
    parts.append(
        _row(
            session,
            select(func.count(), func.max(RubricGrade.id), _true_count(col(RubricGrade.active)))
            .join(Response, col(Response.id) == RubricGrade.response_id)
            .where(Response.study_id == study_id),
        )
    )
    # small tables, whole: a reader's group or a run's cohort can change in place
    parts.append(
        session.exec(
            select(Reader.id, Reader.code, Reader.group_name, Reader.role)
            .where(Reader.study_id == study_id)
            .order_by(col(Reader.id))
        ).all()
    )
    parts.append(
        session.exec(
            select(ModelRun.id, ModelRun.name, ModelRun.cohort, ModelRun.no_images)
            .where(ModelRun.study_id == study_id)
            .order_by(col(ModelRun.id))
        ).all()
    )
    text = repr([repr(p) for p in parts])
    return f"{study_id}:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]


def params_key(params: ScoringParams) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted(asdict(params).items()))


def _database_url(session: Session) -> str | None:
    """The URL a worker process can open, or None (an in-memory SQLite lives in this one)."""
    url = session.get_bind().engine.url
    if url.get_backend_name() == "sqlite" and url.database in (None, "", ":memory:"):
        return None
    return url.render_as_string(hide_password=False)


class SharedScoring:
    """Results by (study id, data version, what, parameters), for every session of a server.

    At most ``max_entries`` results are kept (least recently used go first); when a
    study's data version changes, its results of older versions are dropped.
    """

    def __init__(self, max_entries: int = 48, worker: ScoringWorker | None = None) -> None:
        self._lock = threading.Lock()
        self._entries: OrderedDict[Key, Future[Any]] = OrderedDict()
        self._latest: dict[int, str] = {}
        self._source: dict[str, str] = {}  # data version -> the database URL it was read from
        self.max_entries = max_entries
        self.worker = worker
        self.computations = 0  # how many results were computed (not served from here)

    def _offloaded(
        self, data: StudyData, fn: Callable[..., T], *args: Any, here: Callable[[], T]
    ) -> T:
        """``fn(url, study id, version, *args)`` in the worker, or ``here()`` without one."""
        url = self._source.get(data.version)
        if self.worker is None or url is None:
            return here()
        return self.worker.run(  # type: ignore[no-any-return]
            fn, url, data.study_id, data.version, *args, fallback=here
        )

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._latest.clear()
            self._source.clear()

    def _forget_older(self, study_id: int, version: str) -> None:
        """Drop a study's results of other versions (called under the lock)."""
        if self._latest.get(study_id) == version:
            return
        self._latest[study_id] = version
        for key in [k for k in self._entries if k[0] == study_id and k[1] != version]:
            del self._entries[key]
        prefix = f"{study_id}:"
        for old in [v for v in self._source if v.startswith(prefix) and v != version]:
            del self._source[old]

    def _get(self, key: Key, compute: Callable[[], T]) -> T:
        with self._lock:
            future = self._entries.get(key)
            owner = future is None
            if future is None:
                future = Future()
                self._entries[key] = future
                while len(self._entries) > self.max_entries:
                    self._entries.popitem(last=False)
            else:
                self._entries.move_to_end(key)
        if not owner:
            return future.result()  # type: ignore[no-any-return]
        try:
            value = compute()
        except BaseException as exc:
            with self._lock:
                if self._entries.get(key) is future:
                    del self._entries[key]
            future.set_exception(exc)
            raise
        with self._lock:
            self.computations += 1
        future.set_result(value)
        return value

    def _current(self, session: Session, study_id: int) -> tuple[str, str | None]:
        """The study's data version (older versions' results dropped) and the database
        URL a worker would read it from (None without a worker)."""
        version = data_version(session=session, study_id=study_id)
        with self._lock:
            self._forget_older(study_id, version)
        return version, _database_url(session) if self.worker is not None else None

    def study_data(self, *, session: Session, study: Study) -> StudyData:
        """The study's tidy frame and case set at its current data version."""
        assert study.id is not None
        study_id = study.id
        version, url = self._current(session, study_id)

        def here() -> StudyData:
            return replace(study_data(session=session, study=study), version=version)

        def load() -> StudyData:
            if self.worker is None or url is None:
                return here()
            loaded_here: list[bool] = []

            def fallback() -> StudyData:
                loaded_here.append(True)
                return here()

            data = self.worker.run(scoring_worker.load, url, study_id, version, fallback=fallback)
            if not loaded_here:
                # the worker holds this version's frame: its scorings go there too; a
                # version loaded here (no worker yet, e.g. the first page after a
                # server start) is scored here, not sent to a worker that would load
                # it again
                with self._lock:
                    self._source[version] = url
            return data  # type: ignore[no-any-return]

        return self._get((study.id, version, "data"), load)

    def computed(self, data: StudyData, what: str, key: Hashable, compute: Callable[[], T]) -> T:
        """``compute()`` once per (study, data version, ``what``, ``key``).

        ``data`` must come from :meth:`study_data` (it carries the study id and the
        version); ``compute`` must depend on nothing but ``data`` and ``key``.
        """
        if not data.version:
            raise ValueError("computed() needs StudyData from SharedScoring.study_data")
        return self._get((data.study_id, data.version, what, key), compute)

    def leaderboard(
        self, data: StudyData, cases: Sequence[str], params: ScoringParams
    ) -> Leaderboard:
        chosen = tuple(cases)
        return self.computed(
            data,
            "leaderboard",
            self._board_key(data, chosen, params),
            lambda: self._offloaded(
                data,
                scoring_worker.leaderboard,
                chosen,
                params,
                here=lambda: build_leaderboard(data.frame, chosen, params, data.grounded_case_ids),
            ),
        )

    def has_leaderboard(self, data: StudyData, cases: Sequence[str], params: ScoringParams) -> bool:
        """Whether :meth:`leaderboard` would answer at once (computed, not under way)."""
        key = (data.study_id, data.version, "leaderboard", self._board_key(data, cases, params))
        with self._lock:
            future = self._entries.get(key)
        return future is not None and future.done() and future.exception() is None

    @staticmethod
    def _board_key(data: StudyData, cases: Sequence[str], params: ScoringParams) -> Hashable:
        return (tuple(cases), params_key(params), data.grounded_case_ids)

    def group_split(
        self, data: StudyData, cases: Sequence[str], params: ScoringParams, *, merge: bool
    ) -> pd.DataFrame:
        """chart_data.group_split's figures without a second full scoring.

        Unmerged, the groups are the leaderboard's group pools. Merged (training
        years as one "trainees" group), only the readers are scored again: a pool's
        bootstrap draws depend on the seed and the cases alone, so its figures are
        those of a full scoring.
        """
        chosen = tuple(cases)
        if not merge:
            board = self.leaderboard(data, chosen, params)
            return self.computed(
                data,
                "groups",
                (chosen, params_key(params), False),
                lambda: groups_from_board(board),
            )

        def merged() -> pd.DataFrame:
            return self._offloaded(
                data,
                scoring_worker.merged_groups,
                chosen,
                params,
                here=lambda: merged_group_split(data, chosen, params),
            )

        return self.computed(data, "groups", (chosen, params_key(params), True), merged)

    def case_matrix(
        self, data: StudyData, cases: Sequence[str], params: ScoringParams
    ) -> CaseMatrix:
        chosen = tuple(cases)
        return self.computed(
            data,
            "case_matrix",
            (chosen, params_key(params)),
            lambda: self._offloaded(
                data,
                scoring_worker.case_matrix,
                chosen,
                params,
                here=lambda: case_matrix(data.frame, chosen, params),
            ),
        )

    def reading_times(self, data: StudyData, *, session: Session) -> pd.DataFrame:
        """timing.reading_times once per data version (the responses' times are part of
        what the version reads), in the worker where it holds the version's frame;
        ``session`` reads the times when it does not."""
        return self.computed(
            data,
            "reading_times",
            None,
            lambda: self._offloaded(
                data,
                scoring_worker.reading_times,
                here=lambda: reading_times(
                    session=session, study_id=data.study_id, frame=data.frame
                ),
            ),
        )

    def run_usage(self, *, session: Session, study: Study) -> pd.DataFrame:
        """model_runs.run_usage (the Model runs page's tokens, cost, correct answers)
        once per data version, in the worker when there is one: it reads every run's
        answers and grades."""
        assert study.id is not None
        study_id = study.id
        version, url = self._current(session, study_id)

        def here() -> pd.DataFrame:
            # imported here: the Leaderboard's first page run imports nothing it does not
            # draw (tests/reader_app/ui/test_first_page_imports.py)
            from reader_app.analysis.model_runs import run_usage

            return run_usage(session=session, study_id=study_id)

        def compute() -> pd.DataFrame:
            if self.worker is None or url is None:
                return here()
            return self.worker.run(  # type: ignore[no-any-return]
                scoring_worker.run_usage, url, study_id, fallback=here
            )

        return self._get((study_id, version, "run_usage", None), compute)


SHARED = SharedScoring(worker=ScoringWorker() if scoring_worker.enabled() else None)


def shared_study_data(*, session: Session, actor: Reader) -> StudyData:
    """The actor's study from ``SHARED`` (the shared copy), for analysts and coordinators."""
    return SHARED.study_data(session=session, study=analysed_study(session=session, actor=actor))


def shared_run_usage(*, session: Session, actor: Reader) -> pd.DataFrame:
    """The actor's study's run usage from ``SHARED``, for analysts and coordinators."""
    return SHARED.run_usage(session=session, study=analysed_study(session=session, actor=actor))


__all__ = [
    "SHARED",
    "SharedScoring",
    "data_version",
    "merged_group_split",
    "params_key",
    "shared_run_usage",
    "shared_study_data",
]
