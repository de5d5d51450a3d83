"""The reader's short profile, which sets their group for analysis.

Role is one of board-certified radiologist, trainee (with training year) or
other; the group derived from it (``board-certified``, ``PGY3``, ``other``) is
what results and scoring pool readers by.
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
    """Store the profile and make its group the reader's analysis group."""
    previous = reader.group_name
    reader.profile_json = json.dumps(asdict(profile), sort_keys=True)
    reader.group_name = profile.group
    session.add(reader)
    record_event(
        session=session,
        actor=f"reader:{reader.code}",
        action="profile",
        study_id=reader.study_id,
        group=profile.group,
        previous_group=previous,
    )
    session.commit()
