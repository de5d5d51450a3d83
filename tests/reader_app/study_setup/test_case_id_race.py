"""Issue 32 item 11: two coordinators adding ``Dup-One`` and ``dup-one`` to one study at once.

The scan's duplicate check sees neither (both scan before either commits); the
commit must refuse the second. Two real transactions on two connections, on
SQLite and PostgreSQL: the first inserts and holds its transaction open while
the second inserts and commits in another thread (it waits on the first's lock),
then the first commits. Exactly one case id survives, whatever its case.
"""

from __future__ import annotations

import threading
import time

from sqlalchemy import func
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, select

from reader_app.core.db import make_engine
from reader_app.core.settings import Settings
from reader_app.ingest.importer import duplicate_case_id
from reader_app.models import Case, Study
from tests.factories import make_study


def _case(study_id: int, source_id: str, position: int) -> Case:
    return Case(
        study_id=study_id,
        public_id=f"p-{source_id}-{position}",
        source_id=source_id,
        kind="spot",
        position=position,
    )


def test_dup_one_and_dup_one_at_once_commit_once(engine: Engine, settings: Settings) -> None:
    with Session(engine) as setup:
        study = make_study(setup, settings.asset_dir, n_cases=1, slug="race")
        setup.commit()
        study_id = study.id
    assert study_id is not None
    other = make_engine(settings.database_url, pooled=False)
    outcome: dict[str, BaseException | None] = {}

    def second() -> None:
        with Session(other) as b:
            b.add(_case(study_id, "dup-one", 11))
            try:
                b.commit()
                outcome["second"] = None
            except IntegrityError as exc:
                outcome["second"] = exc

    with Session(engine) as a:
        a.add(_case(study_id, "Dup-One", 10))
        a.flush()  # the first transaction holds its row (and its lock) uncommitted
        racer = threading.Thread(target=second)
        racer.start()
        time.sleep(0.5)  # the second is now waiting on the first
        a.commit()
    racer.join(30)
    other.dispose()
    assert not racer.is_alive()
    error = outcome["second"]
    assert isinstance(error, IntegrityError)
    assert duplicate_case_id(error)  # what commit_staged turns into a named refusal
    with Session(engine) as check:
        ids = check.exec(
            select(Case.source_id).where(
                Case.study_id == study_id, func.lower(Case.source_id) == "dup-one"
            )
        ).all()
        assert ids == ["Dup-One"]
        assert check.get(Study, study_id) is not None
