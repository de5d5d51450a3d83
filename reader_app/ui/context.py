"""Per-process resources and the signed-in user, for pages (the only Streamlit-aware glue)."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st
from sqlalchemy.engine import Engine
from sqlmodel import Session

from reader_app.auth import AuthError, authenticate
from reader_app.db import get_engine
from reader_app.ingest.assets import load_asset
from reader_app.models import Reader, Study
from reader_app.settings import Settings, load_settings


@dataclass(frozen=True)
class SignedIn:
    reader_id: int
    study_id: int
    code: str
    role: str


@st.cache_resource
def app_settings() -> Settings:
    return load_settings()


def app_engine() -> Engine:
    return get_engine(app_settings().database_url)


def db_session() -> Session:
    return Session(app_engine(), expire_on_commit=False)


@st.cache_data(max_entries=512, show_spinner=False)
def asset_bytes(sha256: str) -> bytes:
    """Stored PNG bytes, served as they are: never re-encoded per rerun."""
    return load_asset(app_settings().asset_dir, sha256)


def sign_in() -> SignedIn | None:
    """Resolve ?token= to a reader; the token stays in the URL so a reload keeps the session."""
    token = st.query_params.get("token", "")
    cached: SignedIn | None = st.session_state.get("_signed_in")
    if cached is not None and st.session_state.get("_token") == token:
        return cached
    if not token:
        return None
    with db_session() as session:
        try:
            reader = authenticate(session=session, token=token)
        except AuthError as exc:
            st.session_state["_auth_error"] = str(exc)
            return None
        assert reader.id is not None
        user = SignedIn(reader.id, reader.study_id, reader.code, reader.role)
    st.session_state["_signed_in"] = user
    st.session_state["_token"] = token
    st.session_state.pop("_auth_error", None)
    return user


def current_user() -> SignedIn:
    user: SignedIn | None = st.session_state.get("_signed_in")
    if user is None:
        st.error("Please sign in with your invite link.")
        st.stop()
    assert user is not None
    return user


def load_reader(session: Session, user: SignedIn) -> tuple[Reader, Study]:
    reader = session.get(Reader, user.reader_id)
    study = session.get(Study, user.study_id)
    if reader is None or study is None or reader.token_revoked_at is not None:
        st.session_state.pop("_signed_in", None)
        st.error("Your access has been revoked. Ask the study coordinator.")
        st.stop()
    assert reader is not None and study is not None
    return reader, study
