"""The private Streamlit names the app reads (reader_app/web/streamlit_seams.py): one canary
per name, the check failing when one is gone, and a server that refuses to start then.

A canary fails after a Streamlit upgrade that renamed or removed the name: re-read the
file that uses it (``Seam.used_by``), bring it in step, then the seam.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from reader_app.web.streamlit_seams import SEAMS, Seam, SeamMissing, check_seams, missing_seams
from tests.e2e.conftest import free_port
from tests.security.test_cookie_secret import _site_env

ROOT = Path(__file__).resolve().parents[2]
ASGI = ROOT / "reader_app" / "web" / "asgi.py"


def _break(seam: Seam, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``seam`` gone, as a Streamlit that renamed it would have it."""
    owner = seam.resolve_owner()
    if seam.instance:

        def __init__(self: Any, *args: Any, **kwargs: Any) -> None:  # sets nothing
            pass

        monkeypatch.setattr(owner, "__init__", __init__)
    else:
        monkeypatch.delattr(owner, seam.name)


@pytest.mark.parametrize("seam", SEAMS, ids=[s.label for s in SEAMS])
def test_the_installed_streamlit_still_has(seam: Seam) -> None:
    assert seam.present(), f"{seam.label} is gone: re-read reader_app/{seam.used_by}"


@pytest.mark.parametrize("seam", SEAMS, ids=[s.label for s in SEAMS])
def test_the_check_names_the_seam_when_it_is_gone(
    seam: Seam, monkeypatch: pytest.MonkeyPatch
) -> None:
    check_seams()  # all there
    _break(seam, monkeypatch)
    assert seam in missing_seams()
    with pytest.raises(SeamMissing, match=f"{seam.label} \\(used by reader_app/"):
        check_seams()


def test_the_seams_are_the_only_private_streamlit_reads() -> None:
    """Every private name a seam lists is read (``x._name`` or ``getattr(x, "_name")``) in
    reader_app/ only by streamlit_seams.py."""
    private = {s.name for s in SEAMS if s.name.startswith("_")}
    assert private >= {"_session_mgr", "_user_info", "_create_runtime"}
    seams_file = ROOT / "reader_app" / "web" / "streamlit_seams.py"
    reads = []
    for path in sorted((ROOT / "reader_app").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            name = (
                node.attr
                if isinstance(node, ast.Attribute)
                else node.value
                if isinstance(node, ast.Constant)
                else None
            )
            if name in private:
                reads.append((path.relative_to(ROOT).as_posix(), name))
    assert reads and {p for p, _ in reads} == {seams_file.relative_to(ROOT).as_posix()}


@pytest.mark.slow
def test_a_server_without_a_seam_refuses_to_start(tmp_path: Path) -> None:
    """``streamlit run`` of our app on a Streamlit without ``App._create_runtime``: exit 2,
    the name on stderr, nothing served."""
    port = free_port()
    script = textwrap.dedent(
        f"""
        import sys
        from streamlit.web.server.starlette.starlette_app import App
        del App._create_runtime
        from streamlit.web.cli import main
        sys.argv = ["streamlit", "run", {str(ASGI)!r}, "--server.port", "{port}",
                    "--server.headless", "true"]
        main()
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        env={**_site_env(tmp_path), "HOME": str(tmp_path / "home")},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert "streamlit.web.server.starlette.starlette_app.App._create_runtime" in done.stderr
    assert "reader_app/web/streamlit_seams.py" in done.stderr


def _queued(kind: str) -> Any:
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    msg = ForwardMsg()
    if kind == "file_urls_response":
        msg.file_urls_response.response_id = "request-7"
    elif kind == "script_finished":
        msg.script_finished = ForwardMsg.FINISHED_SUCCESSFULLY
    else:  # a delta of the run before
        msg.delta.new_element.markdown.body = "last run's text"
    return msg


def _kinds(queue: Any) -> list[str]:
    return [m.WhichOneof("type") for m in queue.flush()]


def test_a_run_start_keeps_the_upload_urls_the_browser_waits_for(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A file chosen as a rerun starts: the session's run-start clear (AppSession's own
    ``_clear_queue``, on a real queue) dropped the uploader's URLs, and the uploader then
    waited for good (the New study walk's hang, 1 in 3 runs under load). Kept with
    ``keep_upload_urls_across_runs``; a session's end still drops everything."""
    from types import SimpleNamespace

    from streamlit.runtime.app_session import AppSession
    from streamlit.runtime.forward_msg_queue import ForwardMsgQueue

    from reader_app.web.streamlit_seams import keep_upload_urls_across_runs

    monkeypatch.setattr(ForwardMsgQueue, "clear", ForwardMsgQueue.clear)  # undone after

    def run_start(*kinds: str) -> list[str]:
        session = SimpleNamespace(_browser_queue=ForwardMsgQueue())
        for kind in kinds:
            session._browser_queue.enqueue(_queued(kind))
        AppSession._clear_queue(session)  # type: ignore[arg-type]
        return _kinds(session._browser_queue)

    queued = ("delta", "file_urls_response", "script_finished")
    # Streamlit as it is: the URLs go with the last run's deltas (when this fails,
    # Streamlit keeps them itself and the patch can go)
    assert run_start(*queued) == ["script_finished"]
    keep_upload_urls_across_runs()
    keep_upload_urls_across_runs()  # once is enough: no second copy
    assert run_start(*queued) == ["script_finished", "file_urls_response"]
    assert run_start("file_urls_response", "file_urls_response") == ["file_urls_response"] * 2
    ended = ForwardMsgQueue()
    ended.enqueue(_queued("file_urls_response"))
    ended.clear()  # the session's end: nothing is waited for
    assert _kinds(ended) == []
