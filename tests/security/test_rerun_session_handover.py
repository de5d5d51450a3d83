"""Issue 39, not re-run in round 3: one reader's session state seen by the next reader
in the same browser tab (Streamlit's ``session_state`` lives as long as the tab).

Re-run in AppTest on the real ``main.py``, on both databases: reader A answers a
case with a marked diagnosis, then (1) signs out and reader B's link is opened in
the same tab, or (2) B's link is opened with no sign-out at all. Afterwards every
value of the tab's session state is searched for A: A's token, its sha256, A's
code, A's reader id in a signed-in record, A's diagnosis text, A's case order.
Negative control: the same search finds A's token and code while A is signed in.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from sqlmodel import Session
from streamlit.testing.v1 import AppTest

from reader_app.core.auth import hash_token
from reader_app.core.settings import Settings
from reader_app.ui.context import SignedIn
from tests.factories import make_reader, make_study
from tests.reader_app.ui.conftest import app_for  # noqa: F401  (the AppTest fixture)
from tests.reader_app.ui.helpers import answer, progress_text, responses

App = Callable[..., AppTest]
A_TEXT = "A-ONLY-DIAGNOSIS-7f3e"


def _state(at: AppTest) -> dict[str, object]:
    state = at.session_state
    return {key: state[key] for key in state}  # every key the scripts set, widgets included


def _traces_of(at: AppTest, token: str, code: str, reader_id: int) -> list[str]:
    found = []
    for key, value in _state(at).items():
        text = repr(value)
        for name, secret in (
            ("token", token),
            ("token hash", hash_token(token)),
            ("code", f"'{code}'"),
            ("diagnosis", A_TEXT),
        ):
            if secret in text or secret in key:
                found.append(f"{key}: {name}")
        if isinstance(value, SignedIn) and value.reader_id == reader_id:
            found.append(f"{key}: signed-in record")
    return found


@pytest.mark.parametrize("sign_out_first", [True, False], ids=["sign-out", "no-sign-out"])
def test_nothing_of_reader_a_stays_for_reader_b_in_the_same_tab(
    app_for: App,  # noqa: F811 (the fixture imported above)
    session: Session,
    settings: Settings,
    sign_out_first: bool,
) -> None:
    study = make_study(session, settings.asset_dir, n_cases=3)
    a = make_reader(session, study, code="RA1", ready=True)
    b = make_reader(session, study, code="RB2", ready=True)
    session.commit()
    a_id = a.reader.id
    assert a_id is not None
    at = app_for(a.token)
    answer(at, A_TEXT, 3)
    assert progress_text(at) == "Case 2 of 3"
    assert [r.diagnosis for r in responses(session)] == [A_TEXT]
    # the control: while A is signed in, the search finds A
    assert _traces_of(at, a.token, "RA1", a_id)

    if sign_out_first:
        at.button(key="pause").click().run()
        at.button(key="sign_out").click().run()
        assert "signed out" in at.success[0].value
    at.query_params["token"] = b.token
    at.run()

    assert progress_text(at) == "Case 1 of 3"  # B starts at B's own first case
    assert _traces_of(at, a.token, "RA1", a_id) == []
    signed = [v for v in _state(at).values() if isinstance(v, SignedIn)]
    assert [s.code for s in signed] == ["RB2"]
    assert A_TEXT not in repr(at)  # nor on B's page
