"""Per-process resources and the signed-in user, for pages (the only Streamlit-aware glue).

Two ways in: the invite link (``?token=``; the token stays in the URL so a
reload keeps the session) or, when ``[auth]`` is in ``.streamlit/secrets.toml``,
the institution's OIDC sign-in through ``st.login``, matched to a reader by
email. Either way the page re-checks the reader on every run, so a revoked or
rotated link stops working at the next click, not at the next reload.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st
from sqlalchemy.engine import Engine
from sqlmodel import Session
from streamlit.errors import StreamlitSecretNotFoundError

from reader_app.core.auth import (
    AuthError,
    authenticate,
    hash_token,
    readers_for_email,
    signed_in_reader,
    still_valid,
)
from reader_app.core.db import get_engine
from reader_app.core.settings import Settings, load_settings
from reader_app.models import Reader, Study
from reader_app.study.assets import load_asset


@dataclass(frozen=True)
class SignedIn:
    reader_id: int
    study_id: int
    code: str
    role: str
    token_hash: str | None = None  # None: signed in through OIDC

    @property
    def via_oidc(self) -> bool:
        return self.token_hash is None


@st.cache_resource
def app_settings() -> Settings:
    return load_settings()


def app_engine() -> Engine:
    return get_engine(app_settings().database_url)


def db_session() -> Session:
    return Session(app_engine(), expire_on_commit=False)


@st.cache_resource(max_entries=512, show_spinner=False)
def asset_bytes(sha256: str) -> bytes:
    """Stored PNG bytes, served as they are: never re-encoded per rerun.

    A resource cache, not ``st.cache_data``: bytes are immutable, so every session
    can share the one copy instead of unpickling a fresh copy on every call (17
    per strip per rerun, up to 1 MB each).
    """
    return load_asset(app_settings().asset_dir, sha256)


def oidc_configured() -> bool:
    """Institutional sign-in is offered only when ``[auth]`` exists in the secrets."""
    try:
        return "auth" in st.secrets
    except (FileNotFoundError, StreamlitSecretNotFoundError):
        return False


HELD = "_held_tokens"  # reader id -> sign-in token: the staff studies this tab may switch to


def _forget_session(*, keep: tuple[str, ...] = ()) -> None:
    """Drop everything this browser session holds (another reader's case, order, form)."""
    for key in list(st.session_state.keys()):
        if key not in keep:
            del st.session_state[key]


def _refuse(message: str) -> None:
    """A refused sign-in: nobody is signed in, and nothing of the previous reader's exam
    stays in the session for whoever signs in next (issue 32 item 14)."""
    _forget_session()
    st.session_state["_auth_error"] = message


def _remember(reader: Reader, token_hash: str | None) -> SignedIn:
    assert reader.id is not None
    previous: SignedIn | None = st.session_state.get("_signed_in")
    if previous is not None and previous.reader_id != reader.id:
        _forget_session()
    user = SignedIn(reader.id, reader.study_id, reader.code, reader.role, token_hash)
    st.session_state["_signed_in"] = user
    st.session_state.pop("_auth_error", None)
    return user


def _sign_in_with_token(token: str) -> SignedIn | None:
    cached: SignedIn | None = st.session_state.get("_signed_in")
    if cached is not None and cached.token_hash == hash_token(token):
        return cached
    with db_session() as session:
        try:
            reader = authenticate(session=session, token=token)
        except AuthError as exc:
            _refuse(str(exc))
            return None
        user = _remember(reader, reader.token_hash)
    st.session_state["_token"] = token
    if reader.role != "reader":  # a staff link: one of the studies the switcher offers
        assert reader.id is not None
        st.session_state.setdefault(HELD, {})[reader.id] = token
    return user


def _sign_in_with_oidc() -> SignedIn | None:
    if not st.user.is_logged_in:
        return None
    cached: SignedIn | None = st.session_state.get("_signed_in")
    if cached is not None and cached.via_oidc:
        return cached
    verified = st.user.get("email_verified")
    with db_session() as session:
        try:
            readers = readers_for_email(
                session=session,
                email=str(st.user.get("email") or ""),
                email_verified=None if verified is None else bool(verified),
            )
        except AuthError as exc:
            _refuse(str(exc))
            return None
        chosen = st.session_state.get("_oidc_reader")
        match = [r for r in readers if r.id == chosen] if chosen else readers[:1]
        if len(readers) > 1 and not chosen:
            st.session_state["_oidc_choices"] = [
                (r.id, _study_title(session, r.study_id), r.code) for r in readers
            ]
            return None
        if not match:
            return None
        return _remember(match[0], None)


def _study_title(session: Session, study_id: int) -> str:
    study = session.get(Study, study_id)
    return study.title if study else str(study_id)


def sign_in() -> SignedIn | None:
    """Resolve the invite token or the OIDC identity to a reader, or None."""
    token = st.query_params.get("token", "")
    if token:
        return _sign_in_with_token(token)
    cached: SignedIn | None = st.session_state.get("_signed_in")
    if cached is not None and not cached.via_oidc and st.session_state.get("_token"):
        # the URL lost its token (e.g. a page switch): put it back so a reload still works
        st.query_params["token"] = st.session_state["_token"]
        return cached
    if oidc_configured():
        return _sign_in_with_oidc()
    return None


def sign_out() -> None:
    """Forget this browser session; the invite link (or OIDC account) signs in again."""
    via_oidc = bool(getattr(st.session_state.get("_signed_in"), "via_oidc", False))
    for key in list(st.session_state.keys()):
        del st.session_state[key]
    st.query_params.clear()
    st.session_state["_signed_out"] = True
    st.session_state["_logout_oidc"] = via_oidc  # st.logout runs in the next script run


def finish_sign_out() -> None:
    if st.session_state.pop("_logout_oidc", False):
        st.logout()


def current_user() -> SignedIn:
    user: SignedIn | None = st.session_state.get("_signed_in")
    if user is None:
        st.error("Please sign in with your invite link.")
        st.stop()
    assert user is not None
    return user


def staff_user(*roles: str) -> SignedIn:
    """The role gate of staff pages: the signed-in user, or a refusal and a stop
    for any other role (a page URL typed by hand)."""
    user = current_user()
    if user.role not in roles:
        st.error(f"This page is for the {' or '.join(roles)} role.")
        st.stop()
    return user


def load_reader(session: Session, user: SignedIn) -> tuple[Reader, Study]:
    """The signed-in reader and study, re-checked on every run (revoked or rotated: out)."""
    reader = session.get(Reader, user.reader_id)
    study = session.get(Study, user.study_id)
    if reader is None or study is None or not still_valid(reader, user.token_hash):
        st.session_state.pop("_signed_in", None)
        st.error("Your access has been revoked or your link was replaced. Ask the coordinator.")
        st.stop()
    assert reader is not None and study is not None
    return reader, study


def reader_for_callback(session: Session, user: SignedIn) -> Reader | None:
    """Like load_reader, for button callbacks: None (not st.stop) when access has ended."""
    return signed_in_reader(session, user.reader_id, user.token_hash)


@dataclass(frozen=True)
class StaffStudy:
    reader_id: int
    label: str  # "Title (slug) · role"


def staff_studies(user: SignedIn) -> list[StaffStudy]:
    """The studies this staff member can switch between in this browser tab.

    With institutional sign-in: every study where the verified email holds a staff
    role. With invite links: the staff links this tab has signed in with (the
    current one, one pasted into the switcher, the link of a study just created),
    each checked again (revoked or rotated: gone). A code alone proves nothing: the
    same code in two studies need not be the same person.
    """
    with db_session() as session:
        if user.via_oidc:
            me = session.get(Reader, user.reader_id)
            try:
                rows = readers_for_email(session=session, email=me.email if me else None)
            except AuthError:
                rows = []
        else:
            held: dict[int, str] = st.session_state.get(HELD, {})
            rows = []
            for reader_id, token in held.items():
                reader = session.get(Reader, reader_id)
                if reader is not None and still_valid(reader, hash_token(token)):
                    rows.append(reader)
        return [
            StaffStudy(r.id, f"{_study_title(session, r.study_id)} · {r.role}")
            for r in rows
            if r.role != "reader" and r.id is not None
        ]


def hold_staff_link(link_or_token: str) -> Reader:
    """Remember another study's staff link for the switcher; raise AuthError if it is not
    a valid staff link (a reader's link signs in on its own, not from a staff page)."""
    token = link_or_token.strip().rsplit("token=", 1)[-1].split("&", 1)[0]
    with db_session() as session:
        reader = authenticate(session=session, token=token)
        if reader.role == "reader":
            raise AuthError("That is a reader's link: open it on its own, not here.")
        assert reader.id is not None
        st.session_state.setdefault(HELD, {})[reader.id] = token
        return reader


def switch_study(reader_id: int) -> None:
    """Sign in as the staff row ``reader_id`` (one of ``staff_studies``) from the next run.
    Everything of the current study leaves the session; only the held links stay."""
    user: SignedIn | None = st.session_state.get("_signed_in")
    if user is None or user.reader_id == reader_id:
        return
    if user.via_oidc:
        _forget_session(keep=(HELD,))
        st.session_state["_oidc_reader"] = reader_id
        return
    token = st.session_state.get(HELD, {}).get(reader_id)
    if token is None:
        return
    _forget_session(keep=(HELD,))
    st.query_params.clear()
    st.query_params["token"] = token
