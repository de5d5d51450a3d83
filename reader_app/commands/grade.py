"""``readerstudy grade``: grade a study in place, or add a ``verdict`` column to a CSV.

Study mode, ``readerstudy grade STUDY [--judge URL MODEL ...] [--auto-only]``:
the study's pending answers are graded into grade memory (audited), so the
leaderboard and every export see the verdicts: the key (exact match after
normalization), then the judges (``--judge`` once or twice, or the study's
``[[grading.judges]]`` in study.toml) unless ``--auto-only``. What is left
waits for the adjudicators.

File mode, ``readerstudy grade --key KEY.csv RESPONSES.csv``, for files from
elsewhere: RESPONSES.csv is the tidy frame (``readerstudy export``). Every
input column is written back unchanged, plus ``verdict``: ``correct``,
``incorrect`` or ``pending`` for answered rows, empty for idk / failure /
invalid rows (an existing ``verdict`` column is replaced). See docs/grading.md.

- ``--auto-only``: the key and, with ``--study``, the study's grade memory.
  No network, deterministic.
- default: the same, then the LLM judges (``--judge URL MODEL`` once or twice, or
  the study's configured judges with ``--study``) for what is left. Judge
  replies are cached in the configured database. The file mode never writes
  verdicts into a study.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from reader_app.commands.common import (
    CommandError,
    cli_session,
    fail,
    require_study,
    settings_or_exit,
)
from reader_app.commands.judge_options import add_judge_options, judge_configs
from reader_app.grading.config import GradingConfigError, grading_config, study_judges
from reader_app.grading.diagnosis_judge import (
    DbJudgeCache,
    JudgeClient,
    JudgeConfig,
    JudgeRequest,
    PanelOutcome,
    judge_requests,
)
from reader_app.grading.file_grade import Panel, grade_rows, study_memory
from reader_app.grading.key import AnswerKeyError, KeyEntry, parse_key_csv
from reader_app.grading.study_grade import grade_study

STUDY_ACTOR = "cli:grade"


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "grade",
        help="grade a study's pending answers in place (key, grade memory, judges), or add "
        "a verdict column to a responses CSV (--key)",
        description=(__doc__ or "").replace("``", ""),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "responses",
        metavar="STUDY | RESPONSES.csv",
        help="a study slug (grades it in place), or with --key a responses CSV: the tidy "
        "frame of `readerstudy export`",
    )
    p.add_argument(
        "--key",
        default=None,
        help="file mode: answer key CSV (case_id,diagnosis,synonyms; `readerstudy export "
        "STUDY --what key` writes a study's)",
    )
    p.add_argument(
        "--auto-only",
        action="store_true",
        help="only the key and grade memory (no judges, no network); the rest is pending",
    )
    p.add_argument("--output", "-o", default="-", help="file to write (default: stdout)")
    p.add_argument(
        "--study",
        default=None,
        help="also reuse this study's grade memory (adjudicator, judge and imported verdicts)",
    )
    add_judge_options(
        p,
        judge_help="an OpenAI-compatible judge (one, or two that must agree); overrides the "
        "study's [[grading.judges]]",
        timeout_s=30.0,
    )
    p.set_defaults(func=run)


def answered_mask(frame: pd.DataFrame) -> list[bool]:
    """Rows that are answers: status ``answered``, or derived as in SCORING.md section 1."""
    if "status" in frame.columns:
        return [s.strip().lower() == "answered" for s in frame["status"]]
    from scoring import derive_status, parse_likert

    if "likert" in frame.columns:
        likert = np.array([parse_likert(v) for v in frame["likert"]], dtype=float)
    else:  # no Likert at all: any text that is not IDK or PARSE_FAILED is an answer
        likert = np.zeros(len(frame))
    status = derive_status(
        frame["diagnosis"].replace("", None), likert, np.zeros(len(frame), dtype=bool)
    )
    return [s == "answered" for s in status]


def _panel(configs: Sequence[JudgeConfig], cache: DbJudgeCache) -> Panel:
    def ask(requests: Sequence[JudgeRequest]) -> list[PanelOutcome]:
        clients = [JudgeClient(c) for c in configs]
        try:
            return judge_requests(clients, requests, cache)
        finally:
            for client in clients:
                client.close()

    return ask


def _read_inputs(args: argparse.Namespace) -> tuple[dict[str, KeyEntry], pd.DataFrame]:
    try:
        key = parse_key_csv(Path(args.key))
    except OSError as exc:
        raise CommandError(f"cannot read the key {args.key}: {exc.strerror}") from exc
    except AnswerKeyError as exc:
        raise CommandError(f"answer key {args.key}: {exc}") from exc
    try:
        frame = pd.read_csv(args.responses, dtype=str, keep_default_na=False)
    except OSError as exc:
        raise CommandError(f"cannot read {args.responses}: {exc.strerror}") from exc
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise CommandError(f"{args.responses} is not a readable CSV: {exc}") from exc
    missing = [c for c in ("case_id", "diagnosis") if c not in frame.columns]
    if missing:
        raise CommandError(f"{args.responses} lacks the column(s) {', '.join(missing)}")
    return key, frame


def run_study(args: argparse.Namespace) -> int:
    """Study mode: grade the study's pending answers into grade memory."""
    if args.output != "-" or args.study:
        return fail("--output and --study belong to the file mode (grade --key KEY.csv FILE)")
    if args.responses.lower().endswith(".csv") or Path(args.responses).is_file():
        return fail(
            f"{args.responses} is a file: grade it with --key KEY.csv (`readerstudy export "
            "STUDY --what key` writes a study's key), or name a study to grade it in place"
        )
    try:
        with cli_session(settings_or_exit()) as session:
            study = require_study(session, args.responses)
            judges: list[JudgeConfig] = []
            if not args.auto_only:
                judges = judge_configs(args) or list(study_judges(grading_config(study)))
            result = grade_study(session=session, study=study, judges=judges, actor=STUDY_ACTOR)
    except (CommandError, GradingConfigError) as exc:
        return fail(str(exc))
    print(f"graded {study.slug}: {result.summary()}")
    if result.grade.pending:
        print(
            "the pending answers wait for an adjudicator (Adjudication page; "
            "`readerstudy invite STUDY CODE --role adjudicator`)",
            file=sys.stderr,
        )
    return 0


def run(args: argparse.Namespace) -> int:
    if args.judge is not None and len(args.judge) > 2:
        return fail("--judge: one or two judges (two must agree for a verdict)")
    if args.key is None:
        return run_study(args)
    try:
        key, frame = _read_inputs(args)
        judges = judge_configs(args) or []
        answered = answered_mask(frame)
        case_ids = [c.strip() for c in frame["case_id"]]
        diagnoses = list(frame["diagnosis"])
        if args.study or (judges and not args.auto_only):
            with cli_session(settings_or_exit()) as session:
                memory = None
                if args.study:
                    study = require_study(session, args.study)
                    assert study.id is not None
                    memory = study_memory(session=session, study_id=study.id)
                    if not judges and not args.auto_only:
                        judges = list(study_judges(grading_config(study)))
                panel = (
                    None if args.auto_only or not judges else _panel(judges, DbJudgeCache(session))
                )
                verdicts, report = grade_rows(
                    case_ids, diagnoses, answered, key, memory=memory, panel=panel
                )
        else:
            verdicts, report = grade_rows(case_ids, diagnoses, answered, key)
    except (CommandError, GradingConfigError) as exc:
        return fail(str(exc))
    frame["verdict"] = verdicts
    if args.output == "-":
        frame.to_csv(sys.stdout, index=False)
    else:
        frame.to_csv(args.output, index=False)
    print(f"readerstudy grade: {report.summary()}", file=sys.stderr)
    return 0
