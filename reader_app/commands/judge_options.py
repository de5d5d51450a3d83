"""The LLM judge options of ``grade`` and ``judge-reports``, read into ``JudgeConfig``s.

``--judge URL MODEL`` (once, or twice for a pair), ``--judge-key-env``,
``--judge-timeout`` and the request settings ``--judge-temperature`` (a number
or ``none``: left out), ``--judge-max-tokens`` and ``--judge-extra`` (JSON merged
into each request), the same rule as ``run-model``'s (``reader_app.llm.request``).
These are the operator's own command line, so a URL is fine here; a study names
only judges the server defines. How many judges a command needs, and what no
``--judge`` means, stays the command's own.
"""

from __future__ import annotations

import argparse

from reader_app.commands.common import CommandError
from reader_app.llm.judges import DEFAULT_KEY_ENV, JudgeConfig
from reader_app.llm.request import (
    RequestSettingError,
    extra_setting,
    max_tokens_setting,
    optional_temperature,
)


def _temperature(text: str) -> float | None:
    try:
        return optional_temperature(text if text.lower() == "none" else float(text), "value")
    except (RequestSettingError, ValueError) as exc:
        raise argparse.ArgumentTypeError("a number 0..2 or 'none'") from exc


def add_judge_options(p: argparse.ArgumentParser, *, judge_help: str, timeout_s: float) -> None:
    p.add_argument("--judge", nargs=2, action="append", metavar=("URL", "MODEL"), help=judge_help)
    p.add_argument(
        "--judge-key-env",
        default=DEFAULT_KEY_ENV,
        help=f"environment variable holding the judges' API key (default {DEFAULT_KEY_ENV})",
    )
    p.add_argument(
        "--judge-timeout",
        type=float,
        default=timeout_s,
        help=f"seconds per judge call (default {timeout_s:g})",
    )
    p.add_argument(
        "--judge-temperature",
        type=_temperature,
        default=0.0,
        help="temperature of the --judge requests (default 0; 'none' leaves it out)",
    )
    p.add_argument(
        "--judge-max-tokens",
        type=int,
        default=None,
        help="max_tokens of the --judge requests (default: the task's)",
    )
    p.add_argument(
        "--judge-extra",
        default="{}",
        help="JSON object merged into each --judge request, e.g. "
        '\'{"reasoning_effort": "high"}\'; null drops a field',
    )


def judge_configs(args: argparse.Namespace) -> list[JudgeConfig] | None:
    """The ``--judge`` pairs as configs; None when no ``--judge`` was given."""
    if args.judge is None:
        return None
    try:
        extra = extra_setting(args.judge_extra, "--judge-extra")
        max_tokens = (
            None
            if args.judge_max_tokens is None
            else max_tokens_setting(args.judge_max_tokens, "--judge-max-tokens")
        )
    except RequestSettingError as exc:
        raise CommandError(str(exc)) from exc
    return [
        JudgeConfig(
            url=u,
            model=m,
            api_key_env=args.judge_key_env,
            timeout_s=args.judge_timeout,
            temperature=args.judge_temperature,
            max_tokens=max_tokens,
            extra=extra,
        )
        for u, m in args.judge
    ]
