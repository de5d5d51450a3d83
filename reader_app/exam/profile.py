"""The reader's short profile, and the group it derives, kept beside the invite's group.

Role is one of board-certified radiologist, trainee (with training year) or
other; the group derived from it (``board-certified``, ``PGY3``, ``other``) is
stored as ``Reader.profile_group``. Results and scoring pool readers by the
group the coordinator gave at invite (``Reader.group_name``): the coordinator
chose the study's groups, so a reader's own answer does not silently move them
(issue 29: W01 invited as PGY4 answered board-certified). A reader invited
without a group takes the profile's group. The coordinator sees any difference
on the Progress and Invites pages (``group_mismatch``).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

from sqlmodel import Session

from reader_app.core.audit import record_event
from reader_app.core.errors import ReaderStudyError
from reader_app.models import Reader

PROFILE_ROLES = {
    "board-certified": "Board-certified radiologist",
    "trainee": "Radiology trainee (resident / registrar)",
    "other": "Other",
}
MAX_TRAINEE_YEAR = 8
MAX_YEARS = 60
MAX_SUBSPECIALTY_CHARS = 100


class ProfileError(ReaderStudyError, ValueError):
    """The profile cannot be saved; the message is meant for the reader."""


@dataclass(frozen=True)
class ReaderProfile:
    role: str
    trainee_year: int | None
    years_experience: int
    subspecialty: str

    @property
    def group(self) -> str:
        if self.role == "trainee":
            return f"PGY{self.trainee_year}"
        return self.role


def validate_profile(
    role: str | None,
    trainee_year: int | None,
    years_experience: int | None,
    subspecialty: str | None,
) -> ReaderProfile:
    if role not in PROFILE_ROLES:
        raise ProfileError("Choose your role.")
    if role == "trainee":
        if trainee_year is None or not 1 <= int(trainee_year) <= MAX_TRAINEE_YEAR:
            raise ProfileError(f"Enter your training year (1-{MAX_TRAINEE_YEAR}).")
    else:
        trainee_year = None
    if years_experience is None or not 0 <= int(years_experience) <= MAX_YEARS:
        raise ProfileError(f"Enter your years of experience in radiology (0-{MAX_YEARS}).")
    text = (subspecialty or "").strip()
    if len(text) > MAX_SUBSPECIALTY_CHARS:
        raise ProfileError(f"Keep the subspecialty to {MAX_SUBSPECIALTY_CHARS} characters.")
    return ReaderProfile(
        role=role,
        trainee_year=int(trainee_year) if trainee_year is not None else None,
        years_experience=int(years_experience),
        subspecialty=text,
    )


def load_profile(reader: Reader) -> ReaderProfile | None:
    data = json.loads(reader.profile_json or "{}")
    if not data.get("role"):
        return None
    return ReaderProfile(
        role=data["role"],
        trainee_year=data.get("trainee_year"),
        years_experience=int(data.get("years_experience", 0)),
        subspecialty=data.get("subspecialty", ""),
    )


def save_profile(*, session: Session, reader: Reader, profile: ReaderProfile) -> None:
    """Store the profile and its group beside the invite's group (which stays, if given)."""
    reader.profile_json = json.dumps(asdict(profile), sort_keys=True)
    reader.profile_group = profile.group
    if not reader.group_name:  # invited without a group: the profile's answer is all we have
        reader.group_name = profile.group
    session.add(reader)
    record_event(
        session=session,
        actor=f"reader:{reader.code}",
        action="profile",
        study_id=reader.study_id,
        group=reader.group_name,
        profile_group=profile.group,
    )
    session.commit()


def group_mismatch(reader: Reader) -> str | None:
    """The profile's group when it differs from the invite's, else None (nothing to say)."""
    if reader.profile_group and reader.group_name and reader.profile_group != reader.group_name:
        return reader.profile_group
    return None
