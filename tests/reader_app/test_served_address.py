"""Sign-in links point at the address the server is served on, unless a proxy's is set."""

from __future__ import annotations

from pathlib import Path

from reader_app.core.served_address import link_base, record_served, served_url
from reader_app.core.settings import load_settings


def test_served_url_names_a_reachable_host() -> None:
    assert served_url("127.0.0.1", 8650) == "http://127.0.0.1:8650"
    assert served_url("0.0.0.0", 8650) == "http://127.0.0.1:8650"  # bound everywhere
    assert served_url("::1", 9000) == "http://[::1]:9000"
    assert served_url("reader.lan", 80) == "http://reader.lan:80"


def test_links_follow_the_recorded_address_unless_a_base_url_is_set(tmp_path: Path) -> None:
    env = {"READERSTUDY_DATA_DIR": str(tmp_path)}
    settings = load_settings(env)
    assert link_base(settings, env) == "http://127.0.0.1:8501"  # nothing served yet
    record_served(settings.data_dir, "http://127.0.0.1:8650")
    assert link_base(settings, env) == "http://127.0.0.1:8650"
    assert link_base(settings, env, served="http://127.0.0.1:9000") == "http://127.0.0.1:9000"
    proxied = {**env, "READERSTUDY_BASE_URL": "https://readers.example.org/"}
    assert link_base(load_settings(proxied), proxied) == "https://readers.example.org"
    proxied_served = link_base(load_settings(proxied), proxied, served="http://127.0.0.1:9000")
    assert proxied_served == "https://readers.example.org"  # the proxy wins over a port
    (settings.data_dir / "served-address").write_text("javascript:alert(1)\n")
    assert link_base(settings, env) == "http://127.0.0.1:8501"  # not a web address: ignored
