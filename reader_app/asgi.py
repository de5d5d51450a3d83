"""What ``readerstudy serve`` runs: Streamlit's ``st.App`` around main.py, behind our headers.

``streamlit run reader_app/asgi.py`` finds ``app`` (Streamlit's ASGI app
discovery) and serves it with uvicorn, honouring the same ``--server.*`` flags
and .streamlit/config.toml as ``streamlit run main.py``. The one difference:
every HTTP response carries reader_app/security_headers.py's headers.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st
from starlette.middleware import Middleware

from reader_app.security_headers import SecurityHeaders

MAIN = Path(__file__).resolve().parent / "main.py"

app = st.App(MAIN, middleware=[Middleware(SecurityHeaders)])
