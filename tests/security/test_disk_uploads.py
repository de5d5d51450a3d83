"""Uploads on disk (issue 32 item 1, Build): the spool, its PUT, and the Streamlit seams it needs.

The served walk (a 200 MB PUT, peak RSS, the file on disk and gone after the
session) is ``test_web_doors.py::test_a_large_upload_streams_to_disk_and_leaves_with_its_session``.
Here: the multipart body parsed to a file chunk by chunk, refusals leaving no
file, the sweep of a dead server's folder, and the Streamlit internals
reader_app/web/disk_uploads.py relies on, which fail loudly here when they move.
"""

from __future__ import annotations

import hashlib
import inspect
import os
import socket
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest
import streamlit as st
from streamlit.runtime import RuntimeConfig
from streamlit.runtime.uploaded_file_manager import UploadedFile, UploadedFileRec
from streamlit.web.server.app_discovery import discover_asgi_app

from reader_app.web.disk_uploads import DiskUploadedFileManager, xsrf_ok
from reader_app.web.upload_spool import UPLOAD_IDS, SpoolPut, UploadSpool, sweep_leftovers
from tests.e2e.conftest import ROOT
from tests.support.asgi_call import run_call

# sha256 of Streamlit 1.67's App._create_runtime: disk_uploads.with_disk_uploads copies it
CREATE_RUNTIME_SHA256 = "ac8a2ef86868678d64b898a857e4a7569dff90da0fec40ae896c2c01472e9cc2"


def _multipart(data: bytes, name: str = "key.csv", boundary: str = "b0undary") -> bytes:
    return (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
            f"Content-Type: text/csv\r\n\r\n"
        ).encode()
        + data
        + f"\r\n--{boundary}--\r\n".encode()
    )


MULTIPART = b"multipart/form-data; boundary=b0undary"


def _put(
    spool: UploadSpool, body: bytes, *, chunk: int = 7, ok: bool = True,
    content_type: bytes = MULTIPART,
) -> tuple[int, str]:  # fmt: skip
    """Run SpoolPut over ``body`` fed ``chunk`` bytes at a time; the status and file id."""
    file_id = str(uuid.uuid4())
    scope = {"type": "http", "method": "PUT", UPLOAD_IDS: ("s1", file_id),
             "headers": [(b"content-type", content_type)]}  # fmt: skip
    parts = [body[i : i + chunk] for i in range(0, len(body), chunk)] or [b""]
    messages = [{"type": "http.request", "body": p, "more_body": i < len(parts) - 1}
                for i, p in enumerate(parts)]  # fmt: skip
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return messages.pop(0)

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    run_call(SpoolPut(spool, lambda _scope: ok)(scope, receive, send))
    return sent[0]["status"], file_id


def test_a_put_is_parsed_to_a_file_chunk_by_chunk(tmp_path: Path) -> None:
    spool = UploadSpool(tmp_path)
    data = bytes(range(256)) * 300 + b"\r\n--b0undar"  # a boundary's prefix inside the file
    status, file_id = _put(spool, _multipart(data))
    assert status == 204
    stored = spool.get("s1", file_id)
    assert stored is not None and stored.name == "key.csv" and stored.type == "text/csv"
    assert stored.path.read_bytes() == data and stored.size == len(data)
    assert stored.path.parent == spool.folder and stored.path.name != file_id
    # Streamlit's widget gets the name, no bytes; the page reads the file on disk
    (rec,) = DiskUploadedFileManager(spool).get_files("s1", [file_id, "unknown"])
    assert rec == UploadedFileRec(file_id, "key.csv", "text/csv", b"")
    spool.remove("s1", file_id)
    assert not stored.path.exists() and spool.get("s1", file_id) is None


@pytest.mark.parametrize(
    ("body", "content_type", "ok"),
    [
        (_multipart(b"x"), b"multipart/form-data; boundary=b0undary", False),  # XSRF refused
        (_multipart(b"x"), b"application/octet-stream", True),  # not multipart
        (b"--b0undary\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nv\r\n--b0undary--\r\n",
         b"multipart/form-data; boundary=b0undary", True),  # no file in it
        (_multipart(b"x")[: -len("--b0undary--\r\n")] + _multipart(b"y"),
         b"multipart/form-data; boundary=b0undary", True),  # two files
        (b"garbage without a boundary", b"multipart/form-data; boundary=b0undary", True),
    ],
)  # fmt: skip
def test_a_refused_put_leaves_no_file(
    tmp_path: Path, body: bytes, content_type: bytes, ok: bool
) -> None:
    spool = UploadSpool(tmp_path)
    status, _ = _put(spool, body, content_type=content_type, ok=ok)
    assert status == (403 if not ok else 400)
    assert list(spool.folder.iterdir()) == [] and spool.sessions() == []


def test_one_file_per_session_and_a_session_leaves_with_its_files(tmp_path: Path) -> None:
    spool = UploadSpool(tmp_path)
    _, first = _put(spool, _multipart(b"1"))
    _, second = _put(spool, _multipart(b"22"))
    spool.keep_only("s1", second)
    assert spool.get("s1", first) is None and spool.total_bytes() == 2
    DiskUploadedFileManager(spool).remove_session_files("s1")
    assert list(spool.folder.iterdir()) == [] and spool.sessions() == []


def test_start_up_sweeps_the_folders_of_dead_servers_of_this_host_only(tmp_path: Path) -> None:
    proc = subprocess.Popen(["true"])
    proc.wait()
    host = socket.gethostname()
    dead, alive = tmp_path / f"{host}-{proc.pid}", tmp_path / f"{host}-{os.getppid()}"
    other_host = tmp_path / f"elsewhere-{proc.pid}"
    for folder in (dead, alive, other_host):
        folder.mkdir()
        (folder / "f").write_bytes(b"x")
    assert sweep_leftovers(tmp_path) == [dead]
    assert alive.exists() and other_host.exists()
    spool = UploadSpool(tmp_path)  # a server starting sweeps the same way
    assert spool.folder == tmp_path / f"{host}-{os.getpid()}" and spool.folder.is_dir()


def test_the_disk_manager_refuses_bytes_handed_to_it_in_memory(tmp_path: Path) -> None:
    manager = DiskUploadedFileManager(UploadSpool(tmp_path))
    with pytest.raises(RuntimeError, match="upload_spool"):
        manager.add_file("s1", UploadedFileRec("f", "n", "t", b"data"))
    (url,) = manager.get_upload_urls("s1", ["a.zip"])
    assert url.upload_url == url.delete_url == f"/_stcore/upload_file/s1/{url.file_id}"


# --- the Streamlit internals we rely on (README: what to re-test when Streamlit moves) ---


def test_streamlit_still_builds_its_runtime_the_way_with_disk_uploads_copies() -> None:
    source = inspect.getsource(st.App._create_runtime)
    digest = hashlib.sha256(source.encode()).hexdigest()
    assert digest == CREATE_RUNTIME_SHA256, (
        "streamlit's App._create_runtime changed: re-read it and bring "
        "reader_app/web/disk_uploads.with_disk_uploads in step, then update this hash"
    )
    assert "uploaded_file_manager" in inspect.signature(RuntimeConfig).parameters
    assert all(hasattr(st.App, name) for name in ("_resolve_script_path", "_create_runtime"))


def test_streamlit_run_still_finds_the_app_in_asgi_py() -> None:
    """Discovery reads asgi.py for ``app = st.App(...)``: a subclass would not be served."""
    found = discover_asgi_app(ROOT / "reader_app" / "web" / "asgi.py")
    assert found.is_asgi_app and found.app_name == "app"


def test_uploaded_file_takes_its_bytes_from_the_record() -> None:
    """Why the record carries no bytes: UploadedFile copies ``data`` into a BytesIO."""
    from streamlit.proto.Common_pb2 import FileURLs

    upload = UploadedFile(UploadedFileRec("f", "k.csv", "text/csv", b""), FileURLs())
    assert upload.file_id == "f" and upload.name == "k.csv" and upload.getvalue() == b""


def test_streamlit_s_xsrf_check_is_still_where_we_call_it() -> None:
    from streamlit.web.server.starlette.starlette_app_utils import (
        create_signed_value,  # noqa: F401  (the module as we know it)
        validate_xsrf_token,
    )

    assert not validate_xsrf_token(None, None)
    scope = {"headers": [(b"cookie", b"_streamlit_xsrf=abc"), (b"x-xsrftoken", b"other")]}
    assert xsrf_ok(scope) is False  # XSRF on by default: a mismatched pair refused
