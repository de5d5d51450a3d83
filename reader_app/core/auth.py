"""Sign-in tokens, institutional (OIDC) sign-in and role checks, enforced in the service layer.

A token is 256 random bits shown once (in the invite link); only its sha256
is stored. Re-inviting a reader rotates the token, which revokes the old link;
``revoke_invite`` revokes a reader's access outright (link and OIDC alike).
With OIDC, the identity provider vouches for an email address and the reader
is the one registered with that address (``invite --email``).
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
from dataclasses import dataclass

from sqlalchemy import func
from sqlmodel import Session, col, select

from reader_app.core.audit import record_event
from reader_app.core.errors import ReaderStudyError
from reader_app.models import ROLES, Reader, Study, utcnow

log = logging.getLogger(__name__)


class AuthError(ReaderStudyError, PermissionError):
    """The caller may not do this; the message is safe to show."""


@dataclass(frozen=True)
class Invite:
    reader: Reader
    token: str


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def new_token() -> str:
    return secrets.token_urlsafe(32)  # 256 bits


def invite_reader(
    *,
    session: Session,
    study: Study,
    code: str,
    role: str = "reader",
    group: str | None = None,
    email: str | None = None,
    actor: str = "cli",
) -> Invite:
    """Create (or re-invite) a reader and return the only copy of a fresh token."""
    if role not in ROLES:
        raise ValueError(f"role must be one of {', '.join(ROLES)}, not {role!r}")
    code = code.strip()
    if not code or len(code) > 64:
        raise ValueError("reader code must be 1-64 characters")
    assert study.id is not None
    email = normalize_email(email) or None
    reader = session.exec(
        select(Reader).where(Reader.study_id == study.id, Reader.code == code)
    ).first()
    if reader is None:
        reader = Reader(study_id=study.id, code=code, role=role, group_name=group, email=email)
    else:
        reader.role = role
        reader.group_name = group or reader.group_name
        reader.email = email or reader.email
    token = new_token()
    reader.token_hash = hash_token(token)
    reader.token_revoked_at = None
    session.add(reader)
    session.flush()
    record_event(
        session=session, actor=actor, action="invite", study_id=study.id, reader=code, role=role
    )
    return Invite(reader=reader, token=token)


def find_reader(*, session: Session, study: Study, code: str) -> Reader | None:
    return session.exec(
        select(Reader).where(Reader.study_id == study.id, Reader.code == code.strip())
    ).first()


def revoke_invite(*, session: Session, reader: Reader, actor: str) -> None:
    """Refuse the reader's link (and OIDC sign-in) from now on; re-inviting restores access."""
    reader.token_revoked_at = utcnow()
    session.add(reader)
    record_event(
        session=session, actor=actor, action="revoke", study_id=reader.study_id, reader=reader.code
    )


# what a refused link's holder can do next (issue 42): re-inviting rotates a link
INVALID_LINK = (
    "This sign-in link is not valid. Ask the study coordinator for a new link: a link "
    "stops working when the reader is invited again, and only the newest one signs in."
)


def authenticate(*, session: Session, token: str) -> Reader:
    """Return the reader a token belongs to, or raise AuthError (forged, rotated, revoked)."""
    # Log lines name the reason and at most the reader's id: never the token, never an email.
    if not token or len(token) > 200:
        log.warning("sign-in refused: malformed link (%d characters)", len(token or ""))
        raise AuthError(INVALID_LINK)
    digest = hash_token(token)
    reader = session.exec(select(Reader).where(Reader.token_hash == digest)).first()
    if reader is None or not hmac.compare_digest(reader.token_hash or "", digest):
        log.warning("sign-in refused: unknown or rotated link")
        raise AuthError(INVALID_LINK)
    if reader.token_revoked_at is not None:
        log.warning("sign-in refused: revoked link (reader id %s)", reader.id)
        raise AuthError("This sign-in link has been revoked. Ask the study coordinator.")
    return reader


def still_valid(reader: Reader, token_hash: str | None) -> bool:
    """Is a signed-in session still allowed? (revoked, or its link rotated: no)."""
    if reader.token_revoked_at is not None:
        return False
    return token_hash is None or hmac.compare_digest(reader.token_hash or "", token_hash)


def signed_in_reader(session: Session, reader_id: int, token_hash: str | None) -> Reader | None:
    """The signed-in reader, read again for an action, or None when access has ended."""
    reader = session.get(Reader, reader_id)
    if reader is None or not still_valid(reader, token_hash):
        return None
    return reader


def normalize_email(email: str | None) -> str:
    return (email or "").strip().lower()


def readers_for_email(
    *, session: Session, email: str | None, email_verified: bool | None = None
) -> list[Reader]:
    """The (not revoked) readers registered with an OIDC-verified email, in any study.

    Matching is case-insensitive. A provider that says the address is not
    verified is refused: an unverified address proves nothing.
    """
    address = normalize_email(email)
    if not address or "@" not in address:
        log.warning("sign-in refused: the identity provider gave no email address")
        raise AuthError("Your sign-in did not provide an email address.")
    if email_verified is False:
        log.warning("sign-in refused: the identity provider has not verified the email")
        raise AuthError("Your identity provider has not verified this email address.")
    readers = session.exec(
        select(Reader)
        .where(
            func.lower(col(Reader.email)) == address,
            col(Reader.token_revoked_at).is_(None),
        )
        .order_by(col(Reader.study_id), col(Reader.id))
    ).all()
    if not readers:
        log.warning("sign-in refused: no reader is registered with that email address")
        raise AuthError(f"{address} is not registered for a study here. Ask the study coordinator.")
    return list(readers)


def require_role(actor: Reader, *roles: str) -> None:
    """Service-layer guard: the UI hides pages, but this is what actually refuses."""
    if actor.role not in roles:
        log.warning("refused: reader id %s (%s) needs the %s role", actor.id, actor.role, roles)
        raise AuthError(f"This needs the {' or '.join(roles)} role.")


def sign_in_link(base_url: str, token: str) -> str:
    return f"{base_url.rstrip('/')}/?token={token}"
