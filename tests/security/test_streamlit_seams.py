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
