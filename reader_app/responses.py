"""The one builder of ``responses`` rows: the exam, model runs and imports.

Every writer of an answer (exam/submit.py for a reader's diagnosis or report, runs/runner.py
for a model's reply, runs/import_writer.py for a file's rows) gives the columns that differ:
who answered, the answer itself, what was shown and when. :func:`fill_response` fills the
rest by one set of rules, so a row means the same whoever wrote it:

- ``idk`` follows the status (``idk`` exactly when the status is ``idk``) unless the caller
  says otherwise; the status and an ``idk`` row's empty diagnosis and confidence are the
  table's CHECKs (models.Response), refused at the caller's commit, which rolls back the
  rest of its transaction with it (a reader's draft kept, exam/submit.py);
- ``image_sha256`` is the ``,``-joined sha256 of the images shown, in their order
  (empty for a text-only run);
- ``submitted_at`` is UTC, now unless the caller timed the answer itself (a model's reply);
- ``meta_json`` is the meta as sorted JSON, with the flag ``store_raw`` adds when a raw
  reply had to be escaped to be stored (reader_app.core.text_rules.answers);
- ``meta_json``'s ``row_verdict`` (:data:`ROW_VERDICT`, 1/0) is an imported answer's own
  verdict when it has no text for grade memory to key (RadLE scores a valid Likert with
  an empty diagnosis by its verdict); :func:`row_verdict` reads it;
- ``revision`` is 0 for a new row and one more for a row replaced in place (a model's
  technical failure retried, an import with ``--replace``).

The revision of a reader's answer is not built here: it updates the row in place,
conditional on the revision the reader saw (exam/revisions.py).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from reader_app.core.text_rules.answers import store_raw
from reader_app.models import Response, utcnow

# meta key: the verdict an imported file gave an answer with no text (grade memory keys
# verdicts by (case, normalized answer), and an empty answer has none to key)
ROW_VERDICT = "row_verdict"


def row_verdict(meta_json: str | None) -> int | None:
    """The answer's own verdict (1/0) from its ``meta_json``, or None if it has none."""
    try:
        meta = json.loads(meta_json or "{}")
    except ValueError:
        return None
    value = meta.get(ROW_VERDICT) if isinstance(meta, dict) else None
    return value if value in (0, 1) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class Responder:
    """Who answered: a reader or a model run, never both (``ck_one_responder``)."""

    reader_id: int | None = None
    model_run_id: int | None = None

    def __post_init__(self) -> None:
        if (self.reader_id is None) == (self.model_run_id is None):
            raise ValueError("a response has one responder: a reader or a model run")


def fill_response(
    existing: Response | None,
    *,
    study_id: int,
    case_id: int,
    responder: Responder,
    status: str,
    idk: bool | None = None,
    diagnosis: str | None = None,
    likert: int | None = None,
    findings: str | None = None,
    impression: str | None = None,
    location_json: str | None = None,
    image_sha256: Sequence[str] = (),
    shown_at: datetime | None = None,
    first_shown_at: datetime | None = None,
    active_ms: int | None = None,
    submitted_at: datetime | None = None,
    practice: bool | None = None,
    meta: Mapping[str, Any] | None = None,
    interaction: Mapping[str, Any] | None = None,
    raw_reply: str | None = None,
    reasoning_text: str | None = None,
    arm: str = "unaided",
    aid_run_id: int | None = None,
) -> Response:
    """A new ``responses`` row, or ``existing`` (the same responder's row of the case)
    replaced in place with this answer; not added to any session.

    ``idk`` None means ``status == "idk"``; ``practice`` None keeps the row's own value
    (False for a new row). ``arm`` and ``aid_run_id``: the AI-aided arm's (SCORING.md
    section 10; reader_app/exam/aid.py), ``unaided`` for every other row.
    """
    row = existing or Response(
        study_id=study_id,
        case_id=case_id,
        reader_id=responder.reader_id,
        model_run_id=responder.model_run_id,
        status=status,
    )
    row.status = status
    row.idk = status == "idk" if idk is None else idk
    row.diagnosis = diagnosis
    row.likert = likert
    row.findings = findings
    row.impression = impression
    row.location_json = location_json
    row.image_sha256 = ",".join(image_sha256)
    row.shown_at = shown_at
    row.first_shown_at = first_shown_at
    row.active_ms = active_ms
    row.submitted_at = submitted_at or utcnow()
    if practice is not None:
        row.practice = practice
    row.raw_reply, raw_flags = store_raw(raw_reply)
    row.meta_json = json.dumps({**(meta or {}), **raw_flags}, sort_keys=True, default=str)
    row.interaction_json = (
        None if interaction is None else json.dumps(dict(interaction), sort_keys=True)
    )
    row.reasoning_text = reasoning_text
    row.arm = arm
    row.aid_run_id = aid_run_id
    row.revision = (row.revision + 1) if existing is not None else 0
    return row
