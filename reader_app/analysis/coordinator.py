"""What a coordinator watches: every reader's progress, grading progress, the case bank.

Read-only: nothing here writes. Every function checks the coordinator role
itself, whatever the page shows.

Reader status, first match wins: ``revoked`` (the link was revoked),
``finished`` (every scored case answered), ``in progress`` (some answer,
practice included, or consent given), ``not started``. A reader who is not
finished is *stalled* when their last activity (latest answer, consent,
``last_seen_at`` if anything records it, or the invitation when there is
nothing else) is older than
``stall_after``. Seconds per case are measured from when the case was shown
to the submit, minus time spent on the pause screen.
"""

from __future__ import annotations

import io
import json
import statistics
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final

import pandas as pd
from PIL import Image
from sqlmodel import Session, col, func, select

from reader_app.core.auth import require_role
from reader_app.exam.profile import group_mismatch
from reader_app.grading.autograde import answered_items
from reader_app.grading.config import grading_config
from reader_app.grading.key import study_key
from reader_app.grading.matcher import matches_normalized
from reader_app.grading.memory import active_verdicts
from reader_app.grading.queue import active_decisions
from reader_app.models import Case, CaseImage, Reader, Response, Study, utcnow
from reader_app.study.casebank import scored_case_count

STALL_AFTER: Final = timedelta(hours=48)
IMPORTED: Final = "imported, no sign-in"  # a reader whose answers came in a file
STATUSES: Final = ("not started", "in progress", "finished", "revoked")
PROGRESS_COLUMNS: Final = (
    "reader",
    "group",
    "profile_group",  # the profile's answer, only where it differs from the invite's group
    "status",
    "answered",
    "cases",
    "completion_pct",
    "median_s_per_case",
    "last_activity",
    "stalled",
    "invited",
    "email",
)


def _study(session: Session, actor: Reader) -> Study:
    require_role(actor, "coordinator")
    study = session.get(Study, actor.study_id)
    assert study is not None and study.id is not None
    return study


@dataclass
class _Tally:
    answered: int = 0
    practice: int = 0
    last: datetime | None = None
    seconds: list[float] | None = None


def _seconds(response: Response) -> float | None:
    if response.shown_at is None:
        return None
    spent = (response.submitted_at - response.shown_at).total_seconds()
    try:
        paused = float(json.loads(response.meta_json or "{}").get("paused_s", 0.0) or 0.0)
    except (ValueError, TypeError, AttributeError):
        paused = 0.0
    return max(spent - paused, 0.0)


def _latest(*times: datetime | None) -> datetime | None:
    known = [t for t in times if t is not None]
    return max(known) if known else None


def reader_progress(
    *,
    session: Session,
    actor: Reader,
    now: datetime | None = None,
    stall_after: timedelta = STALL_AFTER,
) -> pd.DataFrame:
    """One row per reader of the study (invited or imported, started or not)."""
    study = _study(session, actor)
    now = now or utcnow()
    n_cases = scored_case_count(session=session, study_id=study.id or 0)
    readers = session.exec(
        select(Reader)
        .where(Reader.study_id == study.id, Reader.role == "reader")
        .order_by(col(Reader.code))
    ).all()
    tallies: dict[int, _Tally] = defaultdict(lambda: _Tally(seconds=[]))
    rows = session.exec(
        select(Response).where(Response.study_id == study.id, col(Response.reader_id).is_not(None))
    ).all()
    for r in rows:
        t = tallies[r.reader_id or 0]
        if r.arm == "aided":  # an AI-aided case's second row (exam/aid.py): counted once
            t.last = _latest(t.last, r.submitted_at)
            continue
        if r.practice:
            t.practice += 1
        else:
            t.answered += 1
            if (s := _seconds(r)) is not None and t.seconds is not None:
                t.seconds.append(s)
        t.last = _latest(t.last, r.submitted_at)
    out = []
    for reader in readers:
        t = tallies.get(reader.id or 0, _Tally(seconds=[]))
        if reader.token_revoked_at is not None:
            status = "revoked"
        elif n_cases and t.answered >= n_cases:
            status = "finished"
        elif t.answered or t.practice or reader.consented_at is not None:
            status = "in progress"
        else:
            status = "not started"
        last = _latest(t.last, reader.consented_at, reader.last_seen_at)
        idle_since = last or reader.created_at
        imported = reader.token_hash is None and reader.email is None
        # an imported reader cannot sign in, so cannot stall: their answers came in a file
        stalled = (
            not imported
            and status in ("not started", "in progress")
            and now - idle_since > stall_after
        )
        invited = IMPORTED if imported else "invite link"
        out.append(
            {
                "reader": reader.code,
                "group": reader.group_name,
                "profile_group": group_mismatch(reader),
                "status": status,
                "answered": t.answered,
                "cases": n_cases,
                "completion_pct": round(100.0 * t.answered / n_cases, 1) if n_cases else 0.0,
                "median_s_per_case": (
                    round(statistics.median(t.seconds), 1) if t.seconds else None
                ),
                "last_activity": last,
                "stalled": bool(stalled),
                "invited": invited,
                "email": reader.email,
            }
        )
    return pd.DataFrame(out, columns=list(PROGRESS_COLUMNS))


# What the Progress page's table shows: the CSV has every column of PROGRESS_COLUMNS, the
# page a narrower set that fits beside the sidebar at 1024 px with no sideways scroll
# (issue 42: twelve columns scrolled 411 px). The profile's differing group is said in the
# text above the table, the e-mail is in the CSV.
PROGRESS_SHOWN: Final = ("reader", "group", "status", "answered", "s_per_case", "last_activity")


def progress_display(progress: pd.DataFrame) -> pd.DataFrame:
    """The progress table as text for a page (``PROGRESS_SHOWN``): no "None" or "nan"
    anywhere (an empty cell instead), answered as "3 of 10 (30%)", times as
    ``YYYY-MM-DD HH:MM`` UTC or "never", a stalled or imported reader said in the status."""
    shown = pd.DataFrame(index=progress.index)
    shown["reader"] = progress["reader"].astype(str)
    shown["group"] = ["" if v is None or pd.isna(v) else str(v) for v in progress["group"]]
    shown["status"] = [
        "⚠ stalled" if stalled else ("imported" if how == IMPORTED else str(status))
        for status, stalled, how in zip(
            progress["status"], progress["stalled"], progress["invited"], strict=True
        )
    ]
    shown["answered"] = [
        f"{int(done)} of {int(total)} ({pct:.0f}%)"
        for done, total, pct in zip(
            progress["answered"], progress["cases"], progress["completion_pct"], strict=True
        )
    ]
    shown["s_per_case"] = [
        "" if v is None or pd.isna(v) else f"{v:g}" for v in progress["median_s_per_case"]
    ]
    shown["last_activity"] = [
        "never" if t is None or pd.isna(t) else f"{t:%Y-%m-%d %H:%M}"
        for t in progress["last_activity"]
    ]
    return shown.reset_index(drop=True)


def reader_counts(progress: pd.DataFrame) -> dict[str, int]:
    """Readers by how they came (invited with a link, imported) and by status."""
    counts = progress["status"].value_counts()
    imported = int((progress["invited"] == IMPORTED).sum())
    return {
        "invited": len(progress) - imported,
        "imported": imported,
        **{s: int(counts.get(s, 0)) for s in STATUSES},
        "stalled": int(progress["stalled"].sum()),
    }


@dataclass(frozen=True)
class GradingProgress:
    """Answered (non-practice) responses and distinct answers, by where their verdict stands."""

    mode: str  # single | double
    answers: int
    items: int  # distinct (case, normalized answer)
    graded_items: int
    by_source: dict[str, int]  # graded items per verdict source (key, adjudicator, judge, import)
    key_ready_items: int  # ungraded, but the key matches: graded when the queue next opens
    waiting_items: int  # need a human decision, nobody has decided yet
    in_review_items: int  # some decisions in, the item needs another (double mode)
    graded_answers: int

    @property
    def pct_answers_graded(self) -> float:
        return 100.0 * self.graded_answers / self.answers if self.answers else 100.0


def grading_progress(*, session: Session, actor: Reader) -> GradingProgress:
    study = _study(session, actor)
    assert study.id is not None
    items = answered_items(session=session, study_id=study.id)
    verdicts = active_verdicts(session=session, study_id=study.id)
    decisions = active_decisions(session=session, study_id=study.id)
    key = study_key(session=session, study_id=study.id)
    by_source: dict[str, int] = defaultdict(int)
    key_ready = waiting = in_review = graded_answers = 0
    for item_key, item in items.items():
        verdict = verdicts.get(item_key)
        if verdict is not None:
            by_source[verdict.source] += 1
            graded_answers += len(item.response_ids)
            continue
        entry = key.get(item.case_id)
        if entry is not None and matches_normalized(item.normalized_answer, entry):
            key_ready += 1
        elif decisions.get(item_key):
            in_review += 1
        else:
            waiting += 1
    return GradingProgress(
        mode=grading_config(study).grading.adjudication,
        answers=sum(len(i.response_ids) for i in items.values()),
        items=len(items),
        graded_items=sum(by_source.values()),
        by_source=dict(sorted(by_source.items())),
        key_ready_items=key_ready,
        waiting_items=waiting,
        in_review_items=in_review,
        graded_answers=graded_answers,
    )


@dataclass(frozen=True)
class CaseCard:
    case_id: int
    source_id: str
    public_id: str
    kind: str
    practice: bool
    modality: str | None
    history: str | None
    n_images: int
    thumbnail_sha256: str | None  # the first image (or the montage of a strip)
    answers: int


def case_bank(*, session: Session, actor: Reader) -> list[CaseCard]:
    """Every case of the study in position order, with its first image for a thumbnail."""
    study = _study(session, actor)
    cases = session.exec(
        select(Case).where(Case.study_id == study.id).order_by(col(Case.position), col(Case.id))
    ).all()
    images: dict[int, list[CaseImage]] = defaultdict(list)
    for img in session.exec(
        select(CaseImage)
        .join(Case, col(Case.id) == CaseImage.case_id)
        .where(Case.study_id == study.id)
        .order_by(col(CaseImage.case_id), col(CaseImage.seq), col(CaseImage.id))
    ).all():
        images[img.case_id].append(img)
    answers = dict(
        session.exec(
            select(Response.case_id, func.count())
            .where(Response.study_id == study.id)
            .group_by(col(Response.case_id))
        ).all()
    )
    cards = []
    for case in cases:
        imgs = images.get(case.id or 0, [])
        montage = [i for i in imgs if i.role == "montage"]
        thumb = montage[0] if montage else (imgs[0] if imgs else None)
        cards.append(
            CaseCard(
                case_id=case.id or 0,
                source_id=case.source_id,
                public_id=case.public_id,
                kind=case.kind,
                practice=case.practice,
                modality=case.modality,
                history=case.history,
                n_images=len(imgs),
                thumbnail_sha256=thumb.sha256 if thumb is not None else None,
                answers=int(answers.get(case.id or 0, 0)),
            )
        )
    return cards


THUMBNAIL_PX: Final = 256


def thumbnail(png: bytes, size: int = THUMBNAIL_PX) -> bytes:
    """A small PNG of a stored image (aspect kept), so a grid does not ship full renders."""
    with Image.open(io.BytesIO(png)) as img:
        img.thumbnail((size, size))
        out = io.BytesIO()
        img.save(out, format="PNG", optimize=True)
    return out.getvalue()
