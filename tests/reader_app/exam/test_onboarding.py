"""Consent, profile and the onboarding steps, on SQLite and PostgreSQL."""

from __future__ import annotations

import json

import pytest
from sqlmodel import Session, select

from reader_app.core.settings import Settings
from reader_app.exam.consent import needs_consent, record_consent
from reader_app.exam.onboarding import onboarding_step
from reader_app.exam.profile import (
    ProfileError,
    load_profile,
    save_profile,
    validate_profile,
)
from reader_app.models import AuditEvent
from reader_app.study.config import study_settings
from tests.factories import make_reader, make_study

CONSENT = "I agree that my answers are used for research."


def test_steps_go_consent_then_profile_then_exam(session: Session, settings: Settings) -> None:
    study = make_study(session, settings.asset_dir, n_cases=1, config={"consent": CONSENT})
    reader = make_reader(session, study).reader
    config = study_settings(study)
    assert onboarding_step(reader, config) == "consent"

    record_consent(session=session, reader=reader, config=config)
    assert reader.consented_at is not None and not needs_consent(reader, config)
    assert onboarding_step(reader, config) == "profile"

    save_profile(
        session=session, reader=reader, profile=validate_profile("trainee", 3, 4, " chest ")
    )
    assert onboarding_step(reader, config) == "exam"
    session.expire_all()
    assert reader.group_name == "PGY3"  # the profile is the reader's group in analysis
    assert load_profile(reader) == validate_profile("trainee", 3, 4, "chest")


def test_consent_is_recorded_once_with_the_text_hash(session: Session, settings: Settings) -> None:
    study = make_study(session, settings.asset_dir, n_cases=1, config={"consent": CONSENT})
    reader = make_reader(session, study).reader
    config = study_settings(study)
    record_consent(session=session, reader=reader, config=config)
    first = reader.consented_at
    record_consent(session=session, reader=reader, config=config)
    assert reader.consented_at == first
    events = session.exec(select(AuditEvent).where(AuditEvent.action == "consent")).all()
    assert len(events) == 1
    assert len(json.loads(events[0].detail_json)["text_sha256"]) == 64


def test_no_consent_text_means_no_consent_step(session: Session, settings: Settings) -> None:
    study = make_study(session, settings.asset_dir, n_cases=1)
    reader = make_reader(session, study).reader
    assert onboarding_step(reader, study_settings(study)) == "profile"


def test_staff_roles_skip_onboarding(session: Session, settings: Settings) -> None:
    study = make_study(session, settings.asset_dir, n_cases=1, config={"consent": CONSENT})
    staff = make_reader(session, study, "C1", role="coordinator").reader
    assert onboarding_step(staff, study_settings(study)) == "exam"


def test_profile_replaces_an_invite_time_group(session: Session, settings: Settings) -> None:
    study = make_study(session, settings.asset_dir, n_cases=1)
    reader = make_reader(session, study, group="placeholder").reader
    save_profile(
        session=session, reader=reader, profile=validate_profile("board-certified", None, 12, "")
    )
    assert reader.group_name == "board-certified"
    event = session.exec(select(AuditEvent).where(AuditEvent.action == "profile")).one()
    assert json.loads(event.detail_json)["previous_group"] == "placeholder"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((None, None, 3, ""), "role"),
        (("surgeon", None, 3, ""), "role"),
        (("trainee", None, 3, ""), "training year"),
        (("trainee", 0, 3, ""), "training year"),
        (("trainee", 9, 3, ""), "training year"),
        (("other", None, None, ""), "years of experience"),
        (("other", None, -1, ""), "years of experience"),
        (("other", None, 61, ""), "years of experience"),
        (("other", None, 2, "x" * 101), "100 characters"),
    ],
)
def test_profile_validation(args: tuple[object, ...], message: str) -> None:
    with pytest.raises(ProfileError, match=message):
        validate_profile(*args)  # type: ignore[arg-type]


def test_profile_groups() -> None:
    assert validate_profile("board-certified", 2, 20, "").trainee_year is None  # year ignored
    assert validate_profile("board-certified", None, 20, "").group == "board-certified"
    assert validate_profile("trainee", 1, 1, "").group == "PGY1"
    assert validate_profile("other", None, 0, "").group == "other"
