"""Every private Streamlit name the app relies on, in one place, checked at start-up.

Streamlit keeps no public accessor for what the doors in front of it need: the live
sessions (``Runtime._session_mgr``), a session's user info (``AppSession._user_info``,
where the browser proof sits), the runtime factory of ``st.App`` (``_create_runtime``,
replaced so that uploads stay on disk) and the browser queue a session clears when a run
starts (``ForwardMsgQueue.clear``, taught to keep upload URLs). The code reads them
only through the helpers below, so this file is the one list to re-read when Streamlit
moves (README, section Dependencies). ``check_seams`` runs when the server imports the app
(``reader_app/web/asgi.py``): a name that is gone stops the server with a message that
names it, instead of a door that silently refuses everyone.
tests/security/test_streamlit_seams.py has one canary per name, and starts a server
without one.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import streamlit as st

from reader_app.core.errors import ReaderStudyError


@dataclass(frozen=True)
class Seam:
    """``owner.name``, where ``owner`` is ``module:qualname`` (a class or a module)."""

    owner: str  # "streamlit.runtime.runtime:Runtime"
    name: str  # "_session_mgr"
    instance: bool  # set on the instance in ``__init__`` (not an attribute of the class)
    used_by: str  # our file that needs it

    @property
    def label(self) -> str:
        return f"{self.owner.replace(':', '.')}.{self.name}"

    def resolve_owner(self) -> Any:
        module_name, _, qualname = self.owner.partition(":")
        found: Any = importlib.import_module(module_name)
        for part in filter(None, qualname.split(".")):
            found = getattr(found, part)
        return found

    def present(self) -> bool:
        try:
            owner = self.resolve_owner()
        except (ImportError, AttributeError):
            return False
        if not self.instance:
            return hasattr(owner, self.name)
        try:  # set in __init__: ``self.<name> =`` in its source
            source = inspect.getsource(owner.__init__)
        except (OSError, TypeError):
            return False
        return f"self.{self.name} =" in source or f"self.{self.name}: " in source


_RUNTIME = "streamlit.runtime.runtime:Runtime"
_SESSION = "streamlit.runtime.app_session:AppSession"
_MANAGER = "streamlit.runtime.session_manager:SessionManager"
_APP = "streamlit.web.server.starlette.starlette_app:App"
_ROUTES = "streamlit.web.server.starlette.starlette_routes:"
_XSRF = "streamlit.web.server.starlette.starlette_app_utils:"
_SERVER_CONFIG = "streamlit.web.server.starlette.starlette_server_config:"
_SERVER_UTIL = "streamlit.web.server.server_util:"
_QUEUE = "streamlit.runtime.forward_msg_queue:ForwardMsgQueue"

SEAMS: tuple[Seam, ...] = (
    # the live sessions by id (web/live_sessions.py, web/disk_uploads.py's reaper)
    Seam(_RUNTIME, "_session_mgr", True, "web/live_sessions.py"),
    Seam(_MANAGER, "get_session_info", False, "web/live_sessions.py"),
    Seam(_MANAGER, "get_active_session_info", False, "web/live_sessions.py"),
    Seam(_MANAGER, "list_sessions", False, "web/live_sessions.py"),
    Seam(_MANAGER, "list_active_sessions", False, "web/live_sessions.py"),
    # the browser proof in a session's user info (web/asgi.py, web/exam_door.py)
    Seam(_SESSION, "_user_info", True, "web/asgi.py, web/exam_door.py"),
    Seam(_SESSION, "page_script_hash", False, "web/asgi.py"),
    Seam(_SESSION, "session_state", False, "web/live_sessions.py"),
    # the runtime factory, copied with the disk upload manager in it (web/disk_uploads.py)
    Seam(_APP, "_create_runtime", False, "web/disk_uploads.py"),
    Seam(_APP, "_resolve_script_path", False, "web/disk_uploads.py"),
    Seam(_APP, "_on_script_error", True, "web/disk_uploads.py"),
    # internal modules of Streamlit's Starlette server (web/disk_uploads.py)
    Seam(_ROUTES, "BASE_ROUTE_MEDIA", False, "web/disk_uploads.py"),
    Seam(_ROUTES, "BASE_ROUTE_UPLOAD_FILE", False, "web/disk_uploads.py"),
    Seam(_XSRF, "validate_xsrf_token", False, "web/disk_uploads.py"),
    Seam(_SERVER_CONFIG, "XSRF_COOKIE_NAME", False, "web/disk_uploads.py"),
    Seam(_SERVER_UTIL, "is_xsrf_enabled", False, "web/disk_uploads.py"),
    # a run's start clears the browser queue but for lifecycle messages (web/asgi.py:
    # keep_upload_urls_across_runs)
    Seam(_SESSION, "_clear_queue", False, "web/asgi.py"),
    Seam(_QUEUE, "clear", False, "web/asgi.py"),
    Seam(_QUEUE, "_queue", True, "web/asgi.py"),
)


class SeamMissing(ReaderStudyError, RuntimeError):
    """A private Streamlit name the app needs is gone (a Streamlit upgrade)."""


def missing_seams() -> list[Seam]:
    return [seam for seam in SEAMS if not seam.present()]


def check_seams() -> None:
    """Raise ``SeamMissing`` naming every private Streamlit name that is gone."""
    gone = missing_seams()
    if gone:
        names = "; ".join(f"{seam.label} (used by reader_app/{seam.used_by})" for seam in gone)
        raise SeamMissing(
            f"Streamlit {st.__version__} lacks what the app relies on: {names}. "
            "See reader_app/web/streamlit_seams.py and README (Dependencies)."
        )


# ----------------------------------------------------------------- the reads, one each


def session_manager(runtime: Any) -> Any:
    """The runtime's session manager (``Runtime._session_mgr``), or None."""
    return getattr(runtime, "_session_mgr", None)


def user_info(session: Any) -> dict[str, Any]:
    """A live session's user info (``AppSession._user_info``); empty when there is none."""
    info = getattr(session, "_user_info", None)
    return info if isinstance(info, dict) else {}


def on_script_error(app: st.App) -> Any:
    """What ``st.App`` calls on a script error (its ``_on_script_error``)."""
    return app._on_script_error


def script_path(app: st.App) -> Any:
    """The script ``st.App`` serves (its ``_resolve_script_path()``)."""
    return app._resolve_script_path()


def replace_runtime_factory(app: st.App, create_runtime: Callable[[], Any]) -> None:
    """Have ``app`` build its runtime with ``create_runtime`` (its ``_create_runtime``)."""
    setattr(app, "_create_runtime", create_runtime)  # noqa: B010


UPLOAD_URLS = "file_urls_response"  # ForwardMsg's answer to an uploader's file_urls_request


def keep_upload_urls_across_runs() -> None:
    """Have a session's browser queue keep its upload URLs when a script run starts.

    A run's start clears what is queued for the browser but for lifecycle messages
    (``AppSession._clear_queue``: ``ForwardMsgQueue.clear(retain_lifecycle_msgs=True)``).
    An uploader's ``file_urls_response`` still queued then (a file chosen while a rerun
    begins: a coordinator who types a study's slug and picks its ZIP at once) is
    dropped, and the uploader waits for it for good, taking no other file; Streamlit
    keeps toasts for the same reason (its issue #7740). Called once per process, before
    the server serves; a second call changes nothing.
    """
    from streamlit.runtime.forward_msg_queue import ForwardMsgQueue

    clear = ForwardMsgQueue.clear
    if getattr(clear, "keeps_upload_urls", False):
        return

    def clear_keeping_upload_urls(
        self: ForwardMsgQueue,
        retain_lifecycle_msgs: bool = False,
        fragment_ids_this_run: list[str] | None = None,
    ) -> None:
        urls = (
            [m for m in self._queue if m.WhichOneof("type") == UPLOAD_URLS]
            if retain_lifecycle_msgs  # not a session's end: what the browser waits for
            else []
        )
        clear(self, retain_lifecycle_msgs, fragment_ids_this_run)
        kept = {id(m) for m in self._queue}  # a Streamlit that keeps them itself
        self._queue.extend(m for m in urls if id(m) not in kept)

    clear_keeping_upload_urls.keeps_upload_urls = True  # type: ignore[attr-defined]
    ForwardMsgQueue.clear = clear_keeping_upload_urls  # type: ignore[method-assign]


__all__ = [
    "SEAMS",
    "Seam",
    "SeamMissing",
    "check_seams",
    "keep_upload_urls_across_runs",
    "missing_seams",
    "on_script_error",
    "replace_runtime_factory",
    "script_path",
    "session_manager",
    "user_info",
]
