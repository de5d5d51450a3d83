"""Sign-in services: invite links (hash only, rotate, revoke) and OIDC email matching."""

from __future__ import annotations

import pytest
from sqlmodel import Session, select

from reader_app.core.auth import (
    AuthError,
    authenticate,
    find_reader,
    hash_token,
    invite_reader,
    readers_for_email,
    revoke_invite,
    still_valid,
)
from reader_app.core.settings import Settings
from reader_app.models import Reader
from tests.factories import make_reader, make_study


def test_only_the_hash_is_stored(session: Session, settings: Settings) -> None:
    study = make_study(session, settings.asset_dir, n_cases=1)
    invite = make_reader(session, study)
    stored = session.exec(select(Reader)).one()
    assert stored.token_hash == hash_token(invite.token) and invite.token not in str(
        stored.model_dump()
    )
    assert authenticate(session=session, token=invite.token).id == stored.id


def test_revoked_and_rotated_links_are_refused(session: Session, settings: Settings) -> None:
    study = make_study(session, settings.asset_dir, n_cases=1)
    first = make_reader(session, study)
    second = invite_reader(session=session, study=study, code="R01")  # re-invite rotates
    session.commit()
    with pytest.raises(AuthError, match="not valid"):
        authenticate(session=session, token=first.token)
    reader = authenticate(session=session, token=second.token)
    assert not still_valid(reader, hash_token(first.token))  # an open session on the old link
    assert still_valid(reader, hash_token(second.token))
    found = find_reader(session=session, study=study, code=" R01 ")
    assert found is not None
    revoke_invite(session=session, reader=found, actor="coordinator")
    session.commit()
    with pytest.raises(AuthError, match="revoked"):
        authenticate(session=session, token=second.token)
    assert not still_valid(found, hash_token(second.token))
    assert not still_valid(found, None)  # revoked readers cannot use OIDC either


def test_oidc_matches_readers_by_email_case_insensitively(
    session: Session, settings: Settings
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=1)
    reader = make_reader(session, study, email=" Dr.Who@Hospital.example ").reader
    assert reader.email == "dr.who@hospital.example"  # stored normalised
    found = readers_for_email(session=session, email="DR.WHO@hospital.example", email_verified=True)
    assert [r.id for r in found] == [reader.id]


def test_oidc_refusals(session: Session, settings: Settings) -> None:
    study = make_study(session, settings.asset_dir, n_cases=1)
    make_reader(session, study, email="dr.who@hospital.example")
    for email, verified, message in [
        ("", None, "did not provide an email"),
        ("not-an-email", None, "did not provide an email"),
        ("dr.who@hospital.example", False, "not verified"),
        ("someone.else@hospital.example", True, "not registered"),
    ]:
        with pytest.raises(AuthError, match=message):
            readers_for_email(session=session, email=email, email_verified=verified)


def test_oidc_skips_revoked_readers_and_lists_every_study(
    session: Session, settings: Settings
) -> None:
    a = make_study(session, settings.asset_dir, n_cases=1, slug="a")
    b = make_study(session, settings.asset_dir, n_cases=1, slug="b")
    c = make_study(session, settings.asset_dir, n_cases=1, slug="c")
    in_a = make_reader(session, a, email="r@x.example").reader
    in_b = make_reader(session, b, email="r@x.example").reader
    in_c = make_reader(session, c, email="r@x.example").reader
    revoke_invite(session=session, reader=in_c, actor="coordinator")
    session.commit()
    found = readers_for_email(session=session, email="r@x.example")
    assert [r.id for r in found] == [in_a.id, in_b.id]
