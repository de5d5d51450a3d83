"""LLM judges: one settings type (``JudgeConfig``), and the judges this server defines.

Judge endpoints and their keys are the server's configuration, never a
study's: the operator lists judges in a TOML file named by
``READERSTUDY_JUDGES``; a study picks one or two of them by name
(``[[grading.judges]] name = "judge-a"``), and a judge's API key is read, at
the moment of the call, from ``READERSTUDY_JUDGE_KEY_<NAME>`` (the name upper-cased, ``-`` as
``_``). So a study ZIP can neither send requests to a host of its choosing
nor have the server send one of its variables anywhere.

    # /etc/readerstudy/judges.toml
    [judge-a]
    url = "http://127.0.0.1:8000/v1"
    model = "qwen2.5-72b"
    timeout_s = 60            # longest silence between reads (and the connect)
    # deadline_s = 240        # one attempt as a whole; default 4 x timeout_s
    max_attempts = 3
    temperature = 0           # or "none": left out of the request
    max_tokens = 600          # default: the task's (diagnosis 200, rubric 600)
    extra = { reasoning_effort = "high" }   # merged into each request; null removes a field

The command line's ``--judge URL MODEL`` (the operator's own command) builds
the same ``JudgeConfig`` directly.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reader_app.core.errors import ReaderStudyError
from reader_app.llm.endpoint import endpoint_host, public_url
from reader_app.llm.request import (
    RequestSettingError,
    extra_setting,
    max_tokens_setting,
    optional_temperature,
    request_params,
)

JUDGES_FILE_ENV = "READERSTUDY_JUDGES"
KEY_ENV_PREFIX = "READERSTUDY_JUDGE_KEY_"
DEFAULT_KEY_ENV = "READERSTUDY_JUDGE_API_KEY"  # the CLI's --judge-key-env default
JUDGE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,39}")
FILE_KEYS = (
    "url",
    "model",
    "timeout_s",
    "deadline_s",
    "max_attempts",
    "temperature",
    "max_tokens",
    "extra",
)


class JudgeSetupError(ReaderStudyError, ValueError):
    """A judge cannot be used as configured; the message names the setting."""


@dataclass(frozen=True)
class JudgeConfig:
    """One judge: where it is, what it is asked with, and where its key is read from.

    ``timeout_s`` bounds each read (and the connect); ``deadline_s`` one attempt as
    a whole (default 4 x ``timeout_s``). ``max_tokens`` None takes the task's default.
    """

    url: str
    model: str
    name: str = ""  # the operator's name for it ("" for a --judge of the command line)
    api_key_env: str = DEFAULT_KEY_ENV
    timeout_s: float = 30.0
    max_attempts: int = 3
    backoff_s: float = 1.0
    deadline_s: float | None = None
    temperature: float | None = 0.0
    max_tokens: int | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def call_deadline_s(self) -> float:
        return self.deadline_s if self.deadline_s is not None else 4 * self.timeout_s

    @property
    def endpoint(self) -> str:
        """The chat URL without credentials (safe to store and hash)."""
        return public_url(self.url)

    @property
    def host(self) -> str:
        """``host[:port]`` only: a ``user:password@`` in the URL is never stored."""
        return endpoint_host(self.url)

    @property
    def label(self) -> str:
        return f"{self.model}@{self.host}"

    def params(self, default_max_tokens: int) -> dict[str, Any]:
        """The request fields besides model and messages (``llm.request`` rule)."""
        return request_params(
            temperature=self.temperature,
            max_tokens=self.max_tokens if self.max_tokens is not None else default_max_tokens,
            extra=self.extra,
        )

    def api_key(self) -> str | None:
        return os.environ.get(self.api_key_env) or None


def key_env(name: str) -> str:
    """``judge-a`` -> ``READERSTUDY_JUDGE_KEY_JUDGE_A``."""
    return KEY_ENV_PREFIX + name.upper().replace("-", "_")


def _number(value: Any, where: str, *, whole: bool = False) -> Any:
    kinds = int if whole else int | float
    if isinstance(value, bool) or not isinstance(value, kinds) or not 0 < value <= 3600:
        raise JudgeSetupError(f"{where}: must be a {'whole ' if whole else ''}number 0..3600")
    return value


def _judge_from_table(name: str, raw: Any, where: str) -> JudgeConfig:
    if not JUDGE_NAME.fullmatch(name):
        raise JudgeSetupError(f"{where}: a judge name is 1-40 letters, digits, - or _")
    if not isinstance(raw, dict):
        raise JudgeSetupError(f"{where}: must be a table")
    unknown = sorted(set(raw) - set(FILE_KEYS))
    if unknown:
        raise JudgeSetupError(f"{where}.{unknown[0]}: unknown; known: {', '.join(FILE_KEYS)}")
    for key in ("url", "model"):
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            raise JudgeSetupError(f"{where}.{key}: required, a string")
    try:
        public_url(raw["url"])
    except ValueError as exc:
        raise JudgeSetupError(f"{where}.url: {exc}") from None
    given: dict[str, Any] = {}
    try:
        if "timeout_s" in raw:
            given["timeout_s"] = float(_number(raw["timeout_s"], f"{where}.timeout_s"))
        if "deadline_s" in raw:
            given["deadline_s"] = float(_number(raw["deadline_s"], f"{where}.deadline_s"))
        if "max_attempts" in raw:
            given["max_attempts"] = _number(
                raw["max_attempts"], f"{where}.max_attempts", whole=True
            )
        if "temperature" in raw:
            given["temperature"] = optional_temperature(raw["temperature"], f"{where}.temperature")
        if "max_tokens" in raw:
            given["max_tokens"] = max_tokens_setting(raw["max_tokens"], f"{where}.max_tokens")
        if "extra" in raw:
            given["extra"] = extra_setting(raw["extra"], f"{where}.extra")
    except RequestSettingError as exc:
        raise JudgeSetupError(str(exc)) from None
    return JudgeConfig(
        url=raw["url"].strip(),
        model=raw["model"].strip(),
        name=name,
        api_key_env=key_env(name),
        **given,
    )


def parse_judges_file(text: str, *, where: str = JUDGES_FILE_ENV) -> dict[str, JudgeConfig]:
    """The judges file's tables -> judges by name (strict: the first problem is named)."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise JudgeSetupError(f"{where}: not valid TOML ({exc})") from None
    judges: dict[str, JudgeConfig] = {}
    keys: dict[str, str] = {}
    for name, table in raw.items():
        judge = _judge_from_table(name, table, f"{where}: {name}")
        if judge.api_key_env in keys:
            raise JudgeSetupError(
                f"{where}: {name} and {keys[judge.api_key_env]} share the key variable "
                f"{judge.api_key_env}; rename one"
            )
        keys[judge.api_key_env] = name
        judges[name] = judge
    return judges


def server_judges(environ: Mapping[str, str] | None = None) -> dict[str, JudgeConfig]:
    """The judges of the file ``READERSTUDY_JUDGES`` names, read now (none when unset)."""
    env = os.environ if environ is None else environ
    path = env.get(JUDGES_FILE_ENV, "").strip()
    if not path:
        return {}
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise JudgeSetupError(f"{JUDGES_FILE_ENV}: cannot read {path}: {exc}") from None
    return parse_judges_file(text)


def resolve_judges(
    names: Sequence[str], environ: Mapping[str, str] | None = None
) -> tuple[JudgeConfig, ...]:
    """The study's judge names -> the server's judges; an unknown name is refused."""
    if not names:
        return ()
    known = server_judges(environ)
    judges = []
    for i, name in enumerate(names):
        if name not in known:
            listed = ", ".join(sorted(known)) or f"none; see {JUDGES_FILE_ENV}"
            raise JudgeSetupError(
                f"grading.judges[{i}].name: {name!r} is not a judge this server defines "
                f"(defined: {listed})"
            )
        judges.append(known[name])
    return tuple(judges)
