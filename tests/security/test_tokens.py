"""Sign-in tokens: at least 128 random bits, only a hash at rest, forged/revoked/rotated refused."""

from __future__ import annotations

import base64
import hashlib

import pytest
from sqlalchemy import inspect, text
from sqlmodel import Session, select

from reader_app.core.auth import (
    AuthError,
    authenticate,
    hash_token,
    invite_reader,
    new_token,
    revoke_invite,
    sign_in_link,
)
from reader_app.core.settings import Settings
from reader_app.models import AuditEvent, Reader
from tests.factories import make_reader, make_study


def test_tokens_carry_at_least_128_random_bits() -> None:
    tokens = [new_token() for _ in range(2000)]
    assert len(set(tokens)) == len(tokens)
    for token in tokens[:50]:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        assert len(raw) * 8 >= 128
        assert token.isascii() and "/" not in token and "+" not in token  # URL-safe
    # a crude randomness check: every base64url symbol turns up across 2000 tokens
    assert len(set("".join(tokens))) == 64


def test_only_the_sha256_of_a_token_is_stored(session: Session, settings: Settings) -> None:
    study = make_study(session, settings.asset_dir, n_cases=1)
    invite = make_reader(session, study, email="r01@example.org")
    token = invite.token
    assert invite.reader.token_hash == hashlib.sha256(token.encode()).hexdigest()
    # the token appears in no column of any table (readers, audit log, ...)
    bind = session.get_bind()
    for table in inspect(bind).get_table_names():
        for row in session.execute(text(f"SELECT * FROM {table}")).all():
            for value in row:
                assert token not in str(value), f"token stored in plain text in {table}"
    link = sign_in_link("https://study.example.org", token)
    assert link == f"https://study.example.org/?token={token}"


FORGED = [
    "",
    " ",
    "not-a-real-token",
    "x" * 43,
    "x" * 10_000,
    "' OR '1'='1",
    "%' OR token_hash LIKE '%",
    "<script>alert(1)</script>",
    "tok\x00en",
    "🔑" * 20,
]


@pytest.mark.parametrize("forged", FORGED, ids=range(len(FORGED)))
def test_forged_tokens_are_refused_without_echo(
    session: Session, settings: Settings, forged: str
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=1)
    make_reader(session, study)
    with pytest.raises(AuthError) as err:
        authenticate(session=session, token=forged)
    assert "not valid" in str(err.value)
    if forged.strip():
        assert forged not in str(err.value)  # the message never echoes what was sent


def test_a_hash_is_not_a_token(session: Session, settings: Settings) -> None:
    study = make_study(session, settings.asset_dir, n_cases=1)
    reader = make_reader(session, study).reader
    assert reader.token_hash is not None
    with pytest.raises(AuthError):  # a leaked database row does not sign anyone in
        authenticate(session=session, token=reader.token_hash)


def test_rotated_and_revoked_tokens_are_refused(session: Session, settings: Settings) -> None:
    study = make_study(session, settings.asset_dir, n_cases=1)
    first = make_reader(session, study).token
    assert authenticate(session=session, token=first).code == "R01"
    # re-inviting rotates: the old link dies, the new one works
    second = invite_reader(session=session, study=study, code="R01").token
    session.commit()
    with pytest.raises(AuthError, match="not valid"):
        authenticate(session=session, token=first)
    reader = authenticate(session=session, token=second)
    # revoking ends the new link too
    revoke_invite(session=session, reader=reader, actor="coordinator")
    session.commit()
    with pytest.raises(AuthError, match="revoked"):
        authenticate(session=session, token=second)
    actions = session.exec(select(AuditEvent.action)).all()
    assert actions.count("invite") == 2 and "revoke" in actions


def test_token_hash_is_unique_per_reader(session: Session, settings: Settings) -> None:
    study = make_study(session, settings.asset_dir, n_cases=1)
    hashes = {make_reader(session, study, code=f"R{i:02d}").reader.token_hash for i in range(20)}
    assert len(hashes) == 20
    assert all(h and len(h) == 64 and set(h) <= set("0123456789abcdef") for h in hashes)
    assert session.exec(select(Reader).where(Reader.token_hash.is_(None))).all() == []  # type: ignore[union-attr]


def test_hash_token_is_plain_sha256() -> None:
    # sha256("abc") from FIPS 180-2, appendix B.1
    assert hash_token("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
