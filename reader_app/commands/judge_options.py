"""The LLM judge options of ``grade`` and ``judge-reports``, read into ``JudgeConfig``s.

``--judge URL MODEL`` (given twice: judges work in pairs), ``--judge-key-env`` and
``--judge-timeout``. How many judges a command needs, and what no ``--judge`` means,
stays the command's own.
"""

from __future__ import annotations

import argparse

from reader_app.grading.diagnosis_judge import DEFAULT_KEY_ENV, JudgeConfig


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


def judge_configs(args: argparse.Namespace) -> list[JudgeConfig] | None:
    """The ``--judge`` pairs as configs; None when no ``--judge`` was given."""
    if args.judge is None:
        return None
    return [
        JudgeConfig(url=u, model=m, api_key_env=args.judge_key_env, timeout_s=args.judge_timeout)
        for u, m in args.judge
    ]
