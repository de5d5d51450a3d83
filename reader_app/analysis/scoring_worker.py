"""The shared scoring's worker process: the tidy frame and the scoring, off the readers' path.

Loading a study's tidy frame (SQLAlchemy rows into pandas) and scoring it with
the bootstrap hold the GIL for hundreds of milliseconds. Done in the process that
serves the readers, they starved the readers' script runs while an analyst
browsed (issue 43: reader transitions p95 67 -> 127 ms). Here they run in one
worker process at a lower CPU priority (nice 10 in a session and scheduler autogroup of
its own, once its imports are done: :func:`own_autogroup`):
the server's analyst script thread waits on a future (which releases the GIL) and
only unpickles the result.

- :class:`ScoringWorker` (server side) starts the process on its second request,
  with ``spawn`` (a fork of the threaded server is unsafe; see docs/ingestion.md
  on the staging pool). The first request (the first analyst page after a server
  start: its study data, whose scorings then stay in the server) is computed in
  the caller's process with no worker importing beside it: on 2 busy cores, a
  worker warming up (a CPU second or two) competes with that page run, which it
  cannot serve anyway (issue 43, docs/performance.md, Analyst pages). Until the
  worker has answered a first ping (which also makes its imports),
  :meth:`ScoringWorker.run` computes in the caller's process, so no page waits
  for it. A version whose frame was loaded in the server is scored there too
  (reader_app.analysis.scored_study). The server's prewarm starts the worker once
  it has scored the latest studies (reader_app.analysis.prewarm): without it, the
  pages of the first analyst after a start were computed in the server, among the
  readers, for the seconds the worker took to warm up on a busy machine. A worker
  that dies (``BrokenProcessPool``)
  is dropped, the request is computed in-process, and a new worker starts on the
  next request.
- The functions below run in the worker. It keeps the study data it loaded by
  (database URL, study id, data version), so a leaderboard after the data costs
  no second load; the version is the server's (reader_app.analysis.scored_study),
  part of every request, so one study's or one version's figures never answer
  for another.

``READERSTUDY_SCORING_WORKER=off`` keeps everything in the serving process.
Nothing here imports Streamlit.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import pickle
import sys
import threading
import time
import types
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from reader_app.core.parent_watch import watch_parent

if TYPE_CHECKING:  # at run time imported where used: the worker imports this module
    # on start (it holds the ping), so this module stays stdlib-only
    import pandas as pd

    from reader_app.analysis.case_matrix import CaseMatrix
    from reader_app.analysis.data import StudyData
    from reader_app.analysis.leaderboard import Leaderboard
    from scoring import ScoringParams

log = logging.getLogger(__name__)

ENV = "READERSTUDY_SCORING_WORKER"
NICE = 10  # the worker yields the CPU to the serving process on a busy machine
KEEP_DATA = 4  # study data versions a worker keeps

# ----------------------------------------------------------------- in the worker

_DATA: OrderedDict[tuple[str, int, str], StudyData] = OrderedDict()


def ping() -> int:
    """Warm the worker (the imports every request needs), lower its priority, and say
    who it is: until this has answered, the server computes in its own process. The
    imports run at the server's priority: once, and a worker starved of CPU while it
    warms (a busy machine) would leave every page to the server for as long."""
    import reader_app.analysis.case_matrix
    import reader_app.analysis.chart_data
    import reader_app.analysis.data
    import reader_app.core.db  # noqa: F401

    with contextlib.suppress(OSError):  # not permitted: run at the same priority
        # NICE itself, not NICE more: a worker started by the prewarm's thread (nice 10
        # for its scoring) is already there
        os.setpriority(os.PRIO_PROCESS, 0, max(NICE, os.getpriority(os.PRIO_PROCESS, 0)))
    own_autogroup(NICE)
    return os.getpid()


def group_nice() -> int | None:
    """The niceness of this process's scheduler autogroup ("/autogroup-85 nice 0"), if
    any. Only this process's own: in a PID namespace whose /proc is the host's (CI
    runners, containers), /proc/<a pid of ours> is another process or none."""
    try:
        with open("/proc/self/autogroup") as fh:
            return int(fh.read().split()[-1])
    except (OSError, ValueError, IndexError):
        return None


def _autogroups_on() -> bool:
    try:
        with open("/proc/sys/kernel/sched_autogroup_enabled") as fh:
            return fh.read().strip() == "1"
    except OSError:
        return False


def own_autogroup(below: int) -> bool:
    """A session of this process's own, its scheduler autogroup ``below`` steps of
    niceness under the group it started in (its server's; at most 19); whether the
    kernel took the group's niceness. Called once, in a process its server spawned.

    With Linux's autogroups (``kernel.sched_autogroup_enabled``, on by default in
    Debian's and most distributions' kernels) the scheduler first shares the CPU
    between sessions and only then, by niceness, between a session's processes: the
    worker's nice 10 weighed only against the server that started it (same session),
    and against any other session on the machine (a reader's browser on the same
    workstation, a second server, a shell) its scoring counted as much as they did.
    In a session of its own whose group is under the server's, it yields to them all
    (and never outranks a server whose session was niced as a whole). The worker
    needs no terminal: it ends with its server (reader_app/core/parent_watch.py).
    """
    server = group_nice()  # still in the server's session: the server's group
    if server is None or not _autogroups_on():  # the process's niceness is what counts
        return False
    if os.getsid(0) != os.getpid():
        try:
            os.setsid()
        except OSError:  # a process group leader: writing the group would renice the
            # server's whole session
            log.warning("the scoring worker could not leave its server's session")
            return False
    for _ in range(20):  # raising a group's niceness needs no privilege, but the
        # kernel takes one change every 100 ms from unprivileged processes (EAGAIN)
        try:
            with open("/proc/self/autogroup", "w") as fh:
                fh.write(str(min(19, server + below)))
            return True
        except BlockingIOError:
            time.sleep(0.1)
        except OSError:
            break
    log.warning("the scoring worker's scheduler group kept the server's priority")
    return False


class WorkerError(RuntimeError):
    """An error of the worker that could not cross the pipe as it was (not picklable)."""


def call(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)``; an exception that would not unpickle in the server (which would
    break the pool) comes back as a WorkerError with its type and message."""
    try:
        return fn(*args)
    except Exception as exc:
        try:
            pickle.loads(pickle.dumps(exc))
        except Exception:
            raise WorkerError(f"{type(exc).__name__}: {exc}") from None
        raise


def load(database_url: str, study_id: int, version: str) -> StudyData:
    """The study's tidy frame, loaded here once per (database, study, data version)."""
    from sqlmodel import Session

    from reader_app.analysis.data import study_data
    from reader_app.core.db import get_engine
    from reader_app.core.errors import ReaderStudyError
    from reader_app.models import Study

    key = (database_url, study_id, version)
    if key in _DATA:
        _DATA.move_to_end(key)
        return _DATA[key]
    with Session(get_engine(database_url)) as session:
        study = session.get(Study, study_id)
        if study is None:
            raise ReaderStudyError(f"no study with id {study_id}")
        data = replace(study_data(session=session, study=study), version=version)
    _DATA[key] = data
    while len(_DATA) > KEEP_DATA:
        _DATA.popitem(last=False)
    return data


def leaderboard(
    database_url: str, study_id: int, version: str, cases: Sequence[str], params: ScoringParams
) -> Leaderboard:
    from reader_app.analysis.leaderboard import build_leaderboard

    data = load(database_url, study_id, version)
    return build_leaderboard(data.frame, cases, params, data.grounded_case_ids)


def merged_groups(
    database_url: str, study_id: int, version: str, cases: Sequence[str], params: ScoringParams
) -> pd.DataFrame:
    from reader_app.analysis.chart_data import merged_group_split

    return merged_group_split(load(database_url, study_id, version), cases, params)


def case_matrix(
    database_url: str, study_id: int, version: str, cases: Sequence[str], params: ScoringParams
) -> CaseMatrix:
    from reader_app.analysis.case_matrix import case_matrix as build

    return build(load(database_url, study_id, version).frame, tuple(cases), params)


def reading_times(database_url: str, study_id: int, version: str) -> pd.DataFrame:
    from sqlmodel import Session

    from reader_app.analysis.timing import reading_times as compute
    from reader_app.core.db import get_engine

    frame = load(database_url, study_id, version).frame
    with Session(get_engine(database_url)) as session:
        return compute(session=session, study_id=study_id, frame=frame)


def run_usage(database_url: str, study_id: int) -> pd.DataFrame:
    from sqlmodel import Session

    from reader_app.analysis.model_runs import run_usage as compute
    from reader_app.core.db import get_engine

    with Session(get_engine(database_url)) as session:
        return compute(session=session, study_id=study_id)


# ----------------------------------------------------------------- in the server

_MAIN_LOCK = threading.Lock()


@contextlib.contextmanager
def _bare_main() -> Iterator[None]:
    """``__main__`` without a file while a worker is spawned.

    A spawned child runs the parent's ``__main__`` file again (multiprocessing's
    "main fixup"); in a Streamlit server ``__main__`` is the app script
    (reader_app/main.py), whose page code must not run in a worker. A script
    run that sets ``__main__`` meanwhile only makes that worker fail its ping:
    it is dropped and the next request starts another.
    """
    with _MAIN_LOCK:
        main = sys.modules.get("__main__")
        sys.modules["__main__"] = types.ModuleType("__main__")
        try:
            yield
        finally:
            if main is not None:
                sys.modules["__main__"] = main


def enabled() -> bool:
    return os.environ.get(ENV, "on").strip().lower() not in {"off", "0", "false", "no"}


class ScoringWorker:
    """One worker process for the server's shared scoring (see the module's docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pool: ProcessPoolExecutor | None = None
        self._ready: Future[int] | None = None
        self._announced = False
        self.offloaded = 0  # requests answered by the worker
        self.fallbacks = 0  # requests computed in-process after the worker broke
        self.requests = 0  # requests made through run(); the first starts no process

    @property
    def started(self) -> bool:
        """Whether a worker process was started (and not dropped since)."""
        return self._pool is not None

    def _ensure(self, *, start: bool = True) -> ProcessPoolExecutor | None:
        """The pool once its worker answered the ping; starts it when there is none
        (unless ``start`` is false)."""
        with self._lock:
            if self._pool is None:
                if not start:
                    return None
                context = multiprocessing.get_context("spawn")
                self._pool = ProcessPoolExecutor(
                    1, mp_context=context, initializer=watch_parent, initargs=(os.getpid(),)
                )
                with _bare_main():  # the process starts on this first submit
                    self._ready = self._pool.submit(ping)
                return None
            ready = self._ready
            if ready is None or not ready.done():
                return None
            if ready.exception() is not None:
                log.warning("the scoring worker did not start: %s", ready.exception())
                self._drop(self._pool)
                return None
            if not self._announced:
                self._announced = True
                log.info("scoring worker process %d answers the analyst pages", ready.result())
            return self._pool

    def _drop(self, pool: ProcessPoolExecutor) -> None:
        """Forget a broken pool (called with or without the lock: only swaps references)."""
        if self._pool is pool:
            self._pool, self._ready = None, None
        pool.shutdown(wait=False, cancel_futures=True)

    def run(self, fn: Callable[..., Any], *args: Any, fallback: Callable[[], Any]) -> Any:
        """``fn(*args)`` in the worker when it is up, else ``fallback()`` here; the
        first request starts no worker (see the module's docstring)."""
        with self._lock:
            self.requests += 1
            first = self.requests == 1
        pool = self._ensure(start=not first)
        if pool is None:
            return fallback()
        try:
            future = pool.submit(call, fn, *args)
        except (BrokenProcessPool, RuntimeError):  # broken, or shut down meanwhile
            with self._lock:
                self._drop(pool)
            self.fallbacks += 1
            return fallback()
        try:
            value = future.result()
        except BrokenProcessPool:
            log.warning("the scoring worker ended abruptly; computing in the server instead")
            with self._lock:
                self._drop(pool)
            self.fallbacks += 1
            return fallback()
        self.offloaded += 1
        return value

    def start(self) -> None:
        """Start the worker now (the prewarm, once the studies are scored), so that the
        first analyst pages after a start find it warm rather than computing here."""
        self._ensure()

    def wait_ready(self, timeout: float = 60) -> bool:
        """Start the worker and wait until it answers (tests, benchmarks)."""
        self._ensure()
        ready = self._ready
        if ready is None:
            return False
        ready.result(timeout=timeout)
        return self._ensure() is not None

    def pid(self) -> int | None:
        ready = self._ready
        return ready.result() if ready is not None and ready.done() else None

    def close(self) -> None:
        with self._lock:
            pool, self._pool, self._ready = self._pool, None, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)


__all__ = ["ENV", "ScoringWorker", "WorkerError", "enabled"]
