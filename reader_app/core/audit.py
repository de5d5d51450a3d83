"""Append-only audit trail. There is deliberately no update or delete helper."""

from __future__ import annotations

import json
from typing import Any

from sqlmodel import Session

from reader_app.models import AuditEvent


def record_event(
    *, session: Session, actor: str, action: str, study_id: int | None = None, **detail: Any
) -> AuditEvent:
    event = AuditEvent(
        study_id=study_id,
        actor=actor,
        action=action,
        detail_json=json.dumps(detail, default=str, sort_keys=True),
    )
    session.add(event)
    return event
