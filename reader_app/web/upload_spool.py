"""Uploads land on disk while they stream in, and leave with their session.

Streamlit's own upload route reads the whole file into memory (``upload.read()``)
and its in-memory manager keeps it there until the session ends. Here a ``PUT``
that reader_app/web/upload_gate.py let through is answered by ``SpoolPut``: the
multipart body is parsed as it arrives (python-multipart, the parser Starlette
uses) and the file's bytes are written to ``<data dir>/uploads/<host>-<pid>/``,
so the server holds one chunk at a time whatever the file's size. ``UploadSpool``
keeps the index: one file per (session, file id), removed when the widget drops
it (its ``DELETE``), when the session ends or expires, and, for a server that
was killed, by the sweep when the next one on this host starts.

Plain ASGI and files (no Streamlit import): reader_app/web/disk_uploads.py puts
the spool behind Streamlit's ``UploadedFileManager`` and checks the XSRF pair.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from python_multipart.exceptions import MultipartParseError
from python_multipart.multipart import MultipartParser, parse_options_header

from reader_app.web.security_headers import Message, Receive, Scope, Send

log = logging.getLogger(__name__)

UPLOADS = "uploads"  # under the data dir
UPLOAD_IDS = "reader_app.upload_ids"  # scope key: (session id, file id) of the upload URL


@dataclass(frozen=True)
class StoredUpload:
    """An uploaded file on disk: the name and type the browser gave, its size in bytes."""

    path: Path
    name: str
    type: str
    size: int


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, someone else's
        return True
    return True


def sweep_leftovers(root: Path, host: str | None = None) -> list[Path]:
    """Remove the upload folders of this host's servers that no longer run; the removed."""
    host = host or socket.gethostname()
    removed = []
    for folder in root.glob(f"{host}-*") if root.is_dir() else []:
        pid = folder.name.rsplit("-", 1)[-1]
        if pid.isdigit() and int(pid) != os.getpid() and not _pid_alive(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


class UploadSpool:
    """This process's uploaded files on disk, by session and file id; thread-safe."""

    def __init__(self, root: Path) -> None:
        swept = sweep_leftovers(root)
        if swept:
            log.info("removed %d upload folder(s) of servers that no longer run", len(swept))
        self.folder = root / f"{socket.gethostname()}-{os.getpid()}"
        shutil.rmtree(self.folder, ignore_errors=True)  # a reused pid's
        self.folder.mkdir(parents=True)
        self._files: dict[str, dict[str, StoredUpload]] = {}
        self._lock = threading.Lock()

    def _path(self, session_id: str, file_id: str) -> Path:
        # the ids come from the URL: a hash names the file, never the ids themselves
        return self.folder / hashlib.sha256(f"{session_id}/{file_id}".encode()).hexdigest()

    def get(self, session_id: str, file_id: str) -> StoredUpload | None:
        with self._lock:
            return self._files.get(session_id, {}).get(file_id)

    def sessions(self) -> list[str]:
        with self._lock:
            return list(self._files)

    def total_bytes(self) -> int:
        with self._lock:
            return sum(f.size for files in self._files.values() for f in files.values())

    def add(self, session_id: str, file_id: str, staged: Path, name: str, type_: str) -> None:
        """Take the fully received file at ``staged`` as this session's ``file_id``."""
        path = self._path(session_id, file_id)
        staged.replace(path)
        stored = StoredUpload(path=path, name=name, type=type_, size=path.stat().st_size)
        with self._lock:
            self._files.setdefault(session_id, {})[file_id] = stored

    def remove(self, session_id: str, file_id: str) -> None:
        with self._lock:
            stored = self._files.get(session_id, {}).pop(file_id, None)
            if session_id in self._files and not self._files[session_id]:
                del self._files[session_id]
        if stored is not None:
            stored.path.unlink(missing_ok=True)

    def keep_only(self, session_id: str, file_id: str) -> None:
        """Drop the session's other files: one file per session at a time."""
        with self._lock:
            others = [f for f in self._files.get(session_id, {}) if f != file_id]
        for other in others:
            self.remove(session_id, other)

    def remove_session(self, session_id: str) -> None:
        with self._lock:
            files = self._files.pop(session_id, {})
        for stored in files.values():
            stored.path.unlink(missing_ok=True)

    def staging_path(self, session_id: str, file_id: str) -> Path:
        return self._path(session_id, file_id).with_suffix(".part")


class BadUpload(Exception):
    """The body is not one file in multipart/form-data."""


class _DiskPart:
    """python-multipart callbacks writing the one file part's bytes to ``out``."""

    def __init__(self, out: IO[bytes]) -> None:
        self.out = out
        self.files = 0
        self.name = ""
        self.type = "application/octet-stream"
        self._in_file = False
        self._field = b""
        self._value = b""
        self._headers: dict[bytes, bytes] = {}

    def on_part_begin(self) -> None:
        self._headers = {}

    def on_header_field(self, data: bytes, start: int, end: int) -> None:
        self._field += data[start:end]

    def on_header_value(self, data: bytes, start: int, end: int) -> None:
        self._value += data[start:end]

    def on_header_end(self) -> None:
        self._headers[self._field.lower()] = self._value
        self._field = self._value = b""

    def on_headers_finished(self) -> None:
        _, options = parse_options_header(self._headers.get(b"content-disposition", b""))
        self._in_file = b"filename" in options
        if self._in_file:
            self.files += 1
            if self.files > 1:
                raise BadUpload("more than one file")
            self.name = options[b"filename"].decode("utf-8", "replace")
            kind = self._headers.get(b"content-type", b"").decode("latin-1").strip()
            self.type = kind or self.type

    def on_part_data(self, data: bytes, start: int, end: int) -> None:
        if self._in_file:
            self.out.write(data[start:end])  # page-cache writes: the loop waits microseconds

    def on_part_end(self) -> None:
        self._in_file = False


async def _respond(send: Send, status: int, text: str = "") -> None:
    body = text.encode()
    headers = [(b"content-length", b"%d" % len(body))]
    if body:
        headers.append((b"content-type", b"text/plain"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class SpoolPut:
    """The ASGI app that answers an upload ``PUT`` by writing the file to the spool."""

    def __init__(self, spool: UploadSpool, xsrf_ok: Callable[[Scope], bool]) -> None:
        self.spool = spool
        self.xsrf_ok = xsrf_ok

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        session_id, file_id = scope[UPLOAD_IDS]
        if not self.xsrf_ok(scope):
            await _respond(send, 403, "XSRF token missing or invalid")
            return
        content_type = dict(scope.get("headers", [])).get(b"content-type", b"")
        kind, params = parse_options_header(content_type)
        if kind != b"multipart/form-data" or b"boundary" not in params:
            await _respond(send, 400, "Expected one file as multipart/form-data.")
            return
        staged = self.spool.staging_path(session_id, file_id)
        try:
            with staged.open("wb") as out:
                part = _DiskPart(out)
                callbacks: Any = _callbacks(part)  # python-multipart's TypedDict of callbacks
                parser = MultipartParser(params[b"boundary"], callbacks)
                while True:
                    message: Message = await receive()
                    if message["type"] == "http.disconnect":
                        raise BadUpload("the client went away mid-upload")
                    parser.write(message.get("body", b""))
                    if not message.get("more_body", False):
                        break
                parser.finalize()
            if part.files != 1:
                raise BadUpload("no file in the body")
        except (BadUpload, MultipartParseError) as exc:
            staged.unlink(missing_ok=True)
            log.warning("upload refused: %s", exc)
            await _respond(send, 400, "Expected one file as multipart/form-data.")
            return
        except BaseException:
            staged.unlink(missing_ok=True)
            raise
        self.spool.add(session_id, file_id, staged, part.name, part.type)
        await _respond(send, 204)


def _callbacks(part: _DiskPart) -> dict[str, Callable[..., None]]:
    return {
        "on_part_begin": part.on_part_begin,
        "on_header_field": part.on_header_field,
        "on_header_value": part.on_header_value,
        "on_header_end": part.on_header_end,
        "on_headers_finished": part.on_headers_finished,
        "on_part_data": part.on_part_data,
        "on_part_end": part.on_part_end,
    }


__all__ = ["UPLOADS", "UPLOAD_IDS", "SpoolPut", "StoredUpload", "UploadSpool", "sweep_leftovers"]
