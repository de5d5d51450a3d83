"""Issue 32 item 3: a study's settings cannot send the server's secrets anywhere.

The attack as it was made: a study ZIP whose ``study.toml`` names judges with
``url = "http://<any host>/v1"`` and ``api_key_env`` = a server variable
(``STREAMLIT_SERVER_COOKIE_SECRET``, ``READERSTUDY_DATABASE_URL``). The import
refuses it, naming the field, and a listener on 127.0.0.1 sees no request, also
when such a config is already stored (an older import) and an adjudicator asks
the judges. A judge the server defines gets its key from
``READERSTUDY_JUDGE_KEY_<NAME>`` and from nowhere else. Both databases.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlmodel import Session

from reader_app.core.settings import Settings
from reader_app.grading.config import GradingConfigError
from reader_app.grading.rubric_judge import run_rubric_judges
from reader_app.grading.run_judges import run_judges
from reader_app.models import Reader
from reader_app.study.casebank import get_study
from reader_app.study_setup.jobs import NEW
from reader_app.study_setup.service import check, receive_zip
from tests.factories import make_reader, make_study
from tests.reader_app.grading.helpers import answer, case_by_source, make_key_study, reader
from tests.reader_app.grading.judge_server import JudgeServer, Say
from tests.support.server_judges import define_judges
from tests.support.study_zips import demo_folder, zip_folder

SECRETS = {
    "STREAMLIT_SERVER_COOKIE_SECRET": "cookie-secret-of-the-server",
    # a fake, with a password short enough that tests/security/test_secrets.py passes it
    "READERSTUDY_DATABASE_URL": "postgresql://app:db-pw@db/readerstudy",
}


@pytest.fixture
def server() -> Iterator[JudgeServer]:
    with JudgeServer() as srv:
        yield srv


def _hostile_toml(base_url: str) -> str:
    return "".join(
        f'\n[[grading.judges]]\nurl = "{base_url}"\nmodel = "judge-{i}"\napi_key_env = "{var}"\n'
        for i, var in enumerate(SECRETS)
    )


@pytest.mark.parametrize("field", ["url", "api_key_env"])
def test_a_study_zip_naming_judge_endpoints_or_variables_is_refused(
    session: Session,
    settings: Settings,
    server: JudgeServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    field: str,
) -> None:
    for var, value in SECRETS.items():
        monkeypatch.setenv(var, value)
    home = make_study(session, settings.asset_dir, n_cases=1, slug="home")
    coordinator = make_reader(session, home, code="C01", role="coordinator").reader
    session.commit()
    folder = tmp_path / "src"
    demo_folder(folder)
    toml = _hostile_toml(server.base_url)
    if field == "api_key_env":  # the variable alone, with a name the server may define
        toml = '\n[[grading.judges]]\nname = "judge-a"\napi_key_env = "READERSTUDY_DATABASE_URL"\n'
    with (folder / "study.toml").open("a", encoding="utf-8") as fh:
        fh.write(toml)
    archive = zip_folder(folder, tmp_path / "hostile.zip")
    with archive.open("rb") as fh:
        source = receive_zip(
            session=session, settings=settings, actor=coordinator, upload=fh, name="h.zip"
        )
    result = check(
        session=session, settings=settings, actor=coordinator, source=source, mode=NEW, slug="h1"
    )
    texts = " ".join(p.text for p in result.problems)
    assert f"grading.judges[0].{field}" in texts
    assert "the server's" in texts
    assert server.calls == []  # nothing was sent, to any host
    assert get_study(session=session, slug="h1") is None


def _stored_hostile_study(session: Session, settings: Settings, server: JudgeServer) -> Reader:
    """A study whose stored config still names URLs and variables (imported before)."""
    judges = [
        {"url": server.base_url, "model": f"judge-{i}", "api_key_env": var}
        for i, var in enumerate(SECRETS)
    ]
    study = make_key_study(
        session,
        settings.asset_dir,
        config={"report_fields": ["findings", "impression"], "grading": {"judges": judges}},
    )
    r1 = reader(session, study, "R01")
    answer(session, study, case_by_source(session, study, "chest-02"), "Pectus carinatum", by=r1)
    return reader(session, study, "A01", role="adjudicator")


def test_a_stored_config_naming_endpoints_sends_nothing(
    session: Session, settings: Settings, server: JudgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    for var, value in SECRETS.items():
        monkeypatch.setenv(var, value)
    server.script("judge-0", Say.verdict("correct"))
    server.script("judge-1", Say.verdict("correct"))
    adjudicator = _stored_hostile_study(session, settings, server)
    # what "Ask the judges about waiting answers" calls, and the rubric judges
    with pytest.raises(GradingConfigError, match=r"grading\.judges\[0\]\.url"):
        run_judges(session=session, actor=adjudicator)
    with pytest.raises(GradingConfigError, match=r"grading\.judges\[0\]\.url"):
        run_rubric_judges(session=session, actor=adjudicator)
    assert server.calls == []


def test_a_server_judge_gets_its_own_key_and_no_other(
    session: Session,
    settings: Settings,
    server: JudgeServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for var, value in SECRETS.items():
        monkeypatch.setenv(var, value)
    monkeypatch.setenv("READERSTUDY_JUDGE_KEY_JUDGE_A", "sk-judge-a")
    monkeypatch.setenv("READERSTUDY_JUDGE_API_KEY", "sk-the-cli-default")
    define_judges(
        monkeypatch,
        settings.data_dir,
        {"judge-a": {"url": server.base_url, "model": "judge-a", "max_attempts": 1}},
    )
    server.script("judge-a", Say.verdict("incorrect"))
    study = make_key_study(
        session, settings.asset_dir, config={"grading": {"judges": [{"name": "judge-a"}]}}
    )
    r1 = reader(session, study, "R01")
    answer(session, study, case_by_source(session, study, "chest-02"), "Pectus carinatum", by=r1)
    adjudicator = reader(session, study, "A01", role="adjudicator")
    assert run_judges(session=session, actor=adjudicator).locked == 1
    (call,) = server.calls
    assert call.headers.get("Authorization") == "Bearer sk-judge-a"
    sent = json.dumps(call.body) + json.dumps(call.headers)
    assert not any(value in sent for value in SECRETS.values())
    assert "sk-the-cli-default" not in sent
