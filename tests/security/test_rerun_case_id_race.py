"""Issue 39, not re-run in round 3: two coordinators adding ``Dup-One`` and ``dup-one`` at once.

Re-run with two real processes (not threads of one), on SQLite and PostgreSQL:
each opens its own engine, adds its case and an audit row in one transaction,
waits for the other at a file barrier, and commits. Whatever the order the
database picks, exactly one case id survives, the loser's error is the one
``commit_staged`` names ("another import saved it first"), and the loser's
audit row is gone with its case (nothing half-written).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from sqlalchemy import func
from sqlmodel import Session, select

from reader_app.core.settings import PROJECT_ROOT, Settings
from reader_app.models import AuditEvent, Case
from tests.factories import make_study

CHILD = """
import sys, time
from pathlib import Path
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session
from reader_app.core.audit import record_event
from reader_app.core.db import make_engine
from reader_app.ingest.importer import duplicate_case_id
from reader_app.models import Case
url, study_id, source_id, barrier = sys.argv[1], int(sys.argv[2]), sys.argv[3], Path(sys.argv[4])
engine = make_engine(url, pooled=False)
with Session(engine) as s:
    s.add(Case(study_id=study_id, public_id="p-" + source_id, source_id=source_id,
               kind="spot", position=100))
    record_event(session=s, actor=source_id, action="study.add_cases", study_id=study_id)
    (barrier / source_id).touch()
    while len(list(barrier.iterdir())) < 2:  # both hold an uncommitted row
        time.sleep(0.01)
    try:
        s.commit()
        print("saved")
    except IntegrityError as exc:
        s.rollback()
        print("refused" if duplicate_case_id(exc) else f"other {exc.orig}")
"""


def test_two_processes_adding_dup_one_and_dup_one_save_one(
    session: Session, settings: Settings, tmp_path: Path
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=1, slug="race")
    session.commit()
    assert study.id is not None
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT)}
    children = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, settings.database_url, str(study.id), sid, str(barrier)],
            cwd=PROJECT_ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for sid in ("Dup-One", "dup-one")
    ]
    outs = [child.communicate(timeout=120) for child in children]
    results = [out.strip() for out, _ in outs]
    assert all(c.returncode == 0 for c in children), outs
    assert sorted(results) == ["refused", "saved"], outs
    winner = ("Dup-One", "dup-one")[results.index("saved")]
    session.expire_all()
    ids = session.exec(
        select(Case.source_id).where(
            Case.study_id == study.id, func.lower(Case.source_id) == "dup-one"
        )
    ).all()
    assert ids == [winner]
    actors = session.exec(
        select(AuditEvent.actor).where(AuditEvent.action == "study.add_cases")
    ).all()
    assert actors == [winner]  # the loser's audit row went with its case
