"""``server.cookieSecret`` as Streamlit read it, wherever it was set: a weak one stops the server.

Streamlit signs its XSRF token and the identity cookie with ``server.cookieSecret``
(when secrets.toml has no ``[auth] cookie_secret``). Left unset, each process draws
a random one, which nobody knows; it is set when several replicas must share one
(docs/deploy.md), and then it must not be the example's, empty or short. It can be
set in ``~/.streamlit/config.toml``, in the project's (or the script's folder's)
``.streamlit/config.toml``, in ``STREAMLIT_SERVER_COOKIE_SECRET`` or with
``--server.cookieSecret``: Streamlit's own config loading says which, after it
has parsed them all (``config.get_where_defined``), so this reads no file itself.

reader_app/web/asgi.py runs it when the server imports the app, before it serves.
"""

from __future__ import annotations

from streamlit import config
from streamlit.config_option import ConfigOption

from reader_app.core.settings import check_cookie_secret

OPTION = "server.cookieSecret"
_UNSET = {ConfigOption.DEFAULT_DEFINITION, ConfigOption.STREAMLIT_DEFINITION}


def _source(where: str) -> str:
    """Streamlit's ``where_defined`` in words an operator can act on."""
    if where.endswith(".toml"):
        return f"set in {where}"
    if "command-line" in where:  # click maps STREAMLIT_SERVER_COOKIE_SECRET to the flag too
        return "set with --server.cookieSecret or STREAMLIT_SERVER_COOKIE_SECRET"
    if "environment" in where:
        return "set in STREAMLIT_SERVER_COOKIE_SECRET"
    return f"set by {where}"


def check_server_cookie_secret() -> None:
    """Raise SettingsError naming the setting and where it came from; unset passes."""
    where = config.get_where_defined(OPTION)
    if where in _UNSET:
        return  # a random secret of this process: a single replica
    check_cookie_secret(f"{OPTION} ({_source(where)})", config.get_option(OPTION))
