"""The server's first page run made ready at start, in a background thread (issue 43).

A page run right after a server start paid the app's own imports (pandas,
SQLAlchemy, SQLModel, the models, the pages' modules: most of a second) and, for
an analyst's sign-in, loading and scoring the study (about another second). At
start, nothing is being served yet: :func:`start_prewarm` runs one thread that

1. imports what the app's script (reader_app/main.py) and the first pages of a
   reader and of an analyst (the exam, the Leaderboard) import, read from their
   ``import`` statements, so the list follows the code; a page run that starts
   meanwhile waits on Python's import lock for a module being imported, never
   imports it twice; then hides what the imports made from the garbage collector
   (``gc.freeze``, as main.py's ``freeze_startup_heap`` does on the first page run,
   whose collection then walks only what came after: 0.1 s less on that run);
2. loads and scores the most recent studies into the shared scored study
   (reader_app/analysis/prewarm.py), with the Leaderboard's default parameters, at a
   lower CPU priority (nice 10 for this thread alone, Linux; the imports before it run
   at the server's, since the threads they start, numpy's BLAS pool among them, would
   inherit it).

``READERSTUDY_PREWARM=off`` turns it off (the test suite's servers, which start
by the hundred and mostly never show a leaderboard). A failure is logged and
changes nothing: the page runs then do the work as without a prewarm.
"""

from __future__ import annotations

import ast
import contextlib
import gc
import importlib
import logging
import os
import threading
import time
from pathlib import Path

log = logging.getLogger(__name__)

ENV = "READERSTUDY_PREWARM"
NICE = 10
APP_DIR = Path(__file__).resolve().parent.parent
# the script, then the first page of a reader and of an analyst (the sign-in's)
SCRIPTS = (APP_DIR / "main.py", APP_DIR / "ui/pages/exam.py", APP_DIR / "ui/pages/analyst.py")
# what the first page run imports that no script names: st.set_page_config encodes
# main.py's PNG favicon with Pillow
ALSO = ("PIL.Image", "PIL.PngImagePlugin")


def enabled() -> bool:
    return os.environ.get(ENV, "on").strip().lower() not in {"off", "0", "false", "no"}


def imported_by(path: Path) -> list[str]:
    """The modules ``path`` imports at module level (``import x``, ``from x import y``),
    in order, without ``__future__``."""
    names: list[str] = []
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.append(node.module)
    names = [n for n in names if n != "__future__"]
    return list(dict.fromkeys(names))


def import_app_modules(scripts: tuple[Path, ...] = SCRIPTS) -> list[str]:
    """Import every module the ``scripts`` import, and ``ALSO``; returns their names."""
    names = list(dict.fromkeys(n for script in scripts for n in imported_by(script)))
    names += [n for n in ALSO if n not in names]
    for name in names:
        importlib.import_module(name)
    return names


def _lower_priority() -> None:
    with contextlib.suppress(OSError, AttributeError):  # not Linux, or not permitted
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), NICE)


def prewarm(database_url: str) -> None:
    """Steps 1 and 2 of the module's docstring, each timed in the log."""
    t0 = time.perf_counter()
    names = import_app_modules()
    gc.collect()  # before the study is scored: its frames stay collectable
    gc.freeze()
    log.info("prewarm: imported %d modules in %.2f s", len(names), time.perf_counter() - t0)
    # only now: a thread inherits the priority of the thread that starts it, and the
    # imports start some (numpy's BLAS pool) that every later page run uses
    _lower_priority()
    from sqlmodel import Session

    from reader_app.analysis.prewarm import prewarm_scored_studies
    from reader_app.core.db import get_engine

    with Session(get_engine(database_url)) as session:
        for done in prewarm_scored_studies(session=session):
            log.info(
                "prewarm: study %s %s in %.2f s",
                done.slug,
                "loaded and scored" if done.scored else "loaded (not scorable yet)",
                done.seconds,
            )


def _run(database_url: str) -> None:
    try:
        prewarm(database_url)
    except Exception:  # the page runs do the work instead
        log.exception("prewarm failed; the first page runs load and score as without it")


def start_prewarm(database_url: str) -> threading.Thread | None:
    """Run :func:`prewarm` in a daemon thread (None when ``READERSTUDY_PREWARM=off``)."""
    if not enabled():
        log.info("prewarm: off (%s)", ENV)
        return None
    thread = threading.Thread(target=_run, args=(database_url,), name="prewarm", daemon=True)
    thread.start()
    return thread


__all__ = ["ENV", "enabled", "import_app_modules", "imported_by", "prewarm", "start_prewarm"]
