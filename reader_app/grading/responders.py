"""Who gave a response, as the first columns of every frame of answers.

The tidy frame (reader_app.results) and the rubric frame (grading.rubric_grades) both
start with these columns; here, in grading, so that neither imports the other.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from sqlmodel import Session, select

from reader_app.models import ModelRun, Reader


class _Responded(Protocol):
    """A response row or a selected subset of its columns: who answered."""

    @property
    def reader_id(self) -> int | None: ...
    @property
    def model_run_id(self) -> int | None: ...


def responder_columns(
    *, session: Session, study_id: int
) -> Callable[[_Responded], dict[str, str | None]]:
    """Who gave a response, as the tidy frame's first columns: responder (a
    reader's code or a run's name), kind (human | model) and group."""
    readers = {r.id: r for r in session.exec(select(Reader).where(Reader.study_id == study_id))}
    runs = {m.id: m for m in session.exec(select(ModelRun).where(ModelRun.study_id == study_id))}

    def columns(resp: _Responded) -> dict[str, str | None]:
        if resp.reader_id is not None:
            who = readers[resp.reader_id]
            return {"responder": who.code, "kind": "human", "group": who.group_name}
        run = runs[resp.model_run_id]
        return {"responder": run.name, "kind": "model", "group": run.group_name}

    return columns
