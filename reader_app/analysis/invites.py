"""The coordinator's invitations: create many links at once, revoke one, list who is invited.

A link's token is shown once (only its hash is stored), so the links made in
one go come back to the caller, who offers them as a CSV; a lost link is
replaced by inviting the same code again, which also revokes the old one.
Roles are granted here (and only here in the app): ``reader``,
``coordinator``, ``adjudicator`` or ``analyst``; with an email the same
person can also sign in through the institution's OIDC provider.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from typing import Final

import pandas as pd
from sqlmodel import Session, col, select

from reader_app.core.auth import (
    AuthError,
    find_reader,
    invite_reader,
    require_role,
    revoke_invite,
    sign_in_link,
)
from reader_app.core.errors import ReaderStudyError
from reader_app.exam.profile import group_mismatch
from reader_app.models import ROLES, Reader, Study

MAX_BATCH: Final = 500
LINK_COLUMNS: Final = ("code", "role", "group", "email", "link")


class InviteError(ReaderStudyError, ValueError):
    """The invite list cannot be used as given; the message names the line."""


@dataclass(frozen=True)
class InviteRequest:
    code: str
    group: str | None = None
    email: str | None = None
    line: int = 0  # where it stood in the pasted list (for messages)


@dataclass(frozen=True)
class IssuedLink:
    code: str
    role: str
    group: str | None
    email: str | None
    link: str


def parse_invite_lines(text: str, *, own_code: str | None = None) -> list[InviteRequest]:
    """``code[,group[,email]]`` per line (CSV quoting allowed; blank lines and # skipped).

    Every problem of every line is reported at once, in one summary naming each
    line, and nothing is invited when any line is bad, so a pasted list is mended
    in one go. ``own_code``: the inviting coordinator, who cannot re-invite
    themselves (that would replace their own link).
    """
    requests: list[InviteRequest] = []
    problems: list[str] = []
    seen: dict[str, int] = {}
    reader = csv.reader(io.StringIO(text))
    for row in reader:
        n = reader.line_num  # the line the row ends on (a quoted cell may span lines)
        cells = [c.strip() for c in row]
        if not cells or not any(cells) or cells[0].startswith("#"):
            continue
        found = _line_problems(cells, seen, own_code)
        if found:
            problems.append(f"line {n}: {'; '.join(found)}")
            continue
        seen[cells[0]] = n
        group = cells[1] if len(cells) > 1 and cells[1] else None
        email = cells[2] if len(cells) > 2 and cells[2] else None
        requests.append(InviteRequest(code=cells[0], group=group, email=email, line=n))
    if problems:
        raise InviteError(
            f"{len(problems)} line(s) of the list need fixing; no link was created.\n"
            + "\n".join(problems)
        )
    if not requests:
        raise InviteError("Enter at least one reader code.")
    if len(requests) > MAX_BATCH:
        raise InviteError(f"Invite at most {MAX_BATCH} people at a time.")
    return requests


def _line_problems(cells: list[str], seen: dict[str, int], own_code: str | None) -> list[str]:
    if len(cells) > 3:
        return [f"expected code[,group[,email]], got {len(cells)} fields"]
    problems = []
    code = cells[0]
    if not code or len(code) > 64:
        problems.append("the reader code must be 1-64 characters")
    elif code in seen:
        problems.append(f"{code!r} appears twice (first on line {seen[code]})")
    elif own_code is not None and code == own_code:
        problems.append(
            f"{code!r} is you: you cannot re-invite yourself (it would replace your own link)"
        )
    group = cells[1] if len(cells) > 1 else ""
    email = cells[2] if len(cells) > 2 else ""
    if len(group) > 64:
        problems.append("the group must be at most 64 characters")
    if email and ("@" not in email or len(email) > 254):
        problems.append(f"{email!r} is not an email address")
    return problems


def shown_links(
    shown: list[IssuedLink], new: list[IssuedLink]
) -> tuple[list[IssuedLink], list[str]]:
    """The shown-once table after ``new`` is issued, and the codes whose row it replaced.

    Inviting a code again rotates its link, so the earlier row's link is dead:
    it leaves the table rather than sit beside the new one.
    """
    fresh = {i.code for i in new}
    replaced = [i.code for i in shown if i.code in fresh]
    return [*(i for i in shown if i.code not in fresh), *new], replaced


def create_invites(
    *,
    session: Session,
    actor: Reader,
    requests: list[InviteRequest],
    role: str,
    base_url: str,
) -> list[IssuedLink]:
    """Invite (or re-invite) everyone in ``requests`` with ``role``; all or nothing."""
    require_role(actor, "coordinator")
    if role not in ROLES:
        raise InviteError(f"role must be one of {', '.join(ROLES)}")
    study = session.get(Study, actor.study_id)
    assert study is not None
    if any(r.code == actor.code for r in requests):
        raise InviteError("You cannot re-invite yourself: that would replace your own link.")
    issued = []
    try:
        for r in requests:
            invite = invite_reader(
                session=session,
                study=study,
                code=r.code,
                role=role,
                group=r.group,
                email=r.email,
                actor=actor.code,
            )
            issued.append(
                IssuedLink(
                    code=invite.reader.code,
                    role=role,
                    group=invite.reader.group_name,
                    email=invite.reader.email,
                    link=sign_in_link(base_url, invite.token),
                )
            )
        session.commit()
    except BaseException:
        session.rollback()
        raise
    return issued


def revoke(*, session: Session, actor: Reader, code: str) -> Reader:
    """Revoke a person's link and OIDC sign-in (coordinators; never their own)."""
    require_role(actor, "coordinator")
    study = session.get(Study, actor.study_id)
    assert study is not None
    reader = find_reader(session=session, study=study, code=code)
    if reader is None:
        raise InviteError(f"No one with the code {code!r} is in this study.")
    if reader.id == actor.id:
        raise AuthError("You cannot revoke your own access.")
    revoke_invite(session=session, reader=reader, actor=actor.code)
    session.commit()
    return reader


def people(*, session: Session, actor: Reader) -> pd.DataFrame:
    """Everyone with access to the study, staff included; links are never listed."""
    require_role(actor, "coordinator")
    rows = session.exec(
        select(Reader)
        .where(Reader.study_id == actor.study_id)
        .order_by(col(Reader.role), col(Reader.code))
    ).all()
    return pd.DataFrame(
        [
            {
                "code": r.code,
                "role": r.role,
                "group": r.group_name or "",
                "profile_group": group_mismatch(r) or "",
                "email": r.email or "",
                "access": (
                    "revoked"
                    if r.token_revoked_at is not None
                    else "active"
                    if r.token_hash or r.email
                    else "imported (no sign-in)"
                ),
                "invited_at": r.created_at,
            }
            for r in rows
        ],
        columns=["code", "role", "group", "profile_group", "email", "access", "invited_at"],
    )


def people_display(frame: pd.DataFrame) -> pd.DataFrame:
    """``people`` as the Invites page shows it: the invitation time to the minute, UTC
    ("2026-12-05 18:45"; the full timestamp cut the table at 1024 px)."""
    return frame.assign(
        invited_at=[
            "" if t is None or pd.isna(t) else f"{t:%Y-%m-%d %H:%M}" for t in frame["invited_at"]
        ]
    )


def group_differences(frame: pd.DataFrame, *, code: str = "code") -> list[str]:
    """``W01: invited as PGY4, profile says board-certified`` for every row whose profile
    answer differs from the invite's group (the invite's group is the one scored)."""
    rows = frame[frame["profile_group"].fillna("").astype(str) != ""]
    return [
        f"{r[code]}: invited as {r['group']}, profile says {r['profile_group']}"
        for _, r in rows.iterrows()
    ]


def links_frame(issued: list[IssuedLink]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"code": i.code, "role": i.role, "group": i.group, "email": i.email, "link": i.link}
            for i in issued
        ],
        columns=list(LINK_COLUMNS),
    )
