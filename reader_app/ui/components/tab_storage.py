"""What the browser tab keeps between page loads belongs to one signed-in reader.

The case panel (``ui/static/panel.js``, ``viewer.js``) keeps a copy of the case's
draft, its active time and its viewer record in the tab's sessionStorage, filed by
reader and case (``rs.<owner>.draft.<case id>`` ...), so a reload that beats the
draft's report to the server loses nothing. ``<owner>`` is :func:`tab_owner`: an
opaque per-reader key (an HMAC of the reader's id under the server's cookie
secret), never the reader's code, name or token. A panel drawn for another owner
first drops everything the tab kept; :func:`forget_tab`, drawn on the sign-in page
(after Sign out, or whenever nobody is signed in), drops it all at once.
docs/exam.md ("What the browser keeps") says the same for readers.
"""

from __future__ import annotations

import hashlib
import hmac

import streamlit as st
from streamlit import config

FORGET_EVENT = "readerstudy:forget-tab"  # panel.js listens for it

# Every sessionStorage key of ours begins "rs."; the panel's memory goes on the event.
_FORGET_JS = f"""
export default function () {{
  try {{
    const store = window.sessionStorage;
    for (let i = store.length - 1; i >= 0; i--) {{
      const k = store.key(i);
      if (k && k.startsWith("rs.")) store.removeItem(k);
    }}
  }} catch {{
    // storage off: nothing was kept
  }}
  window.dispatchEvent(new Event("{FORGET_EVENT}"));
}}
"""

_forget = st.components.v2.component("readerstudy_forget_tab", js=_FORGET_JS)


def tab_owner(reader_id: int) -> str:
    """The opaque key the tab's copies of ``reader_id`` are filed under (24 hex digits).

    Stable for a reader while the server's cookie secret is (a reload, another replica
    sharing the secret); nobody can tell a reader, or a token, from it."""
    secret = str(config.get_option("server.cookieSecret") or "")
    mac = hmac.new(secret.encode(), f"readerstudy.tab:{reader_id}".encode(), hashlib.sha256)
    return mac.hexdigest()[:24]


def forget_tab() -> None:
    """Drop every reader's copies this tab keeps (sessionStorage and the panel's memory)."""
    _forget(key="forget_tab", data={})
