"""``readerstudy run-model STUDY --endpoint URL --model NAME``: a model takes the exam.

The model gets each scored case's PNGs, byte for byte what a reader is
served, from any OpenAI-compatible chat-completions endpoint. Rerunning the
same command resumes: only cases without an answer are asked. ``--no-images``
is the text-only ablation: the same text, no image, a run named "(text only)".
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import replace
from pathlib import Path

from reader_app.commands.common import (
    CommandError,
    cli_session,
    fail,
    require_study,
    settings_or_exit,
)
from reader_app.commands.judge_options import add_judge_options, judge_configs
from reader_app.commands.progress_bar import RunProgressBar
from reader_app.core.settings import Settings
from reader_app.grading.config import GradingConfigError, grading_config, study_judges
from reader_app.llm import ChatClient, endpoint_host
from reader_app.llm.json_format import JSON_MODES
from reader_app.llm.judges import JudgeConfig
from reader_app.llm.prompts import DEFAULT_PROMPT, Prompt, load_prompt
from reader_app.models import Study
from reader_app.runs.arrival_grading import GradeOnArrival
from reader_app.runs.autograde_hook import autograde_after_run
from reader_app.runs.batch import write_batch
from reader_app.runs.lease import DEFAULT_LEASE_S
from reader_app.runs.prompt import GROUNDED_PROMPT, default_prompt
from reader_app.runs.record import (
    DEFAULT_REPORT_PROMPT,
    STRIP_MODES,
    TEXT_ONLY_SUFFIX,
    RunConflict,
    RunSpec,
    repeat_name,
    text_only_name,
)
from reader_app.runs.runner import RunAborted, RunSummary, run_model
from reader_app.runs.usage import Price, PriceError, load_prices, price_from_options
from reader_app.study.config import study_settings


def _optional_float(text: str) -> float | None:
    return None if text.lower() == "none" else float(text)


def _optional_int(text: str) -> int | None:
    return None if text.lower() == "none" else int(text)


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "run-model",
        help="run an OpenAI-compatible model on a study's cases (resumable)",
        description=(
            "Send each scored case's PNGs, byte for byte what a reader is served, to an "
            "OpenAI-compatible chat-completions endpoint and store the answers as a model run. "
            "Rerunning the same command resumes. See docs/model-runs.md."
        ),
    )
    add_request_options(p)
    add_judge_options(
        p,
        judge_help="an OpenAI-compatible judge (one, or two that must agree): the run's answers "
        "are graded as they arrive, by the key, grade memory, then these judges; default: the "
        "study's [[grading.judges]] in study.toml, if any",
        timeout_s=30.0,
    )
    p.add_argument(
        "--auto-only",
        action="store_true",
        help="grade by the key and grade memory only: no judges, not even the study's",
    )
    p.add_argument(
        "--no-images",
        action="store_true",
        help="text-only ablation: the same prompt and history, no image sent; the run is "
        "named '<name> (text only)'",
    )
    p.add_argument("--strip-mode", choices=STRIP_MODES, default="slices")
    p.add_argument(
        "--report-prompt",
        default=None,
        help=f"prompt for report-mode cases (default {DEFAULT_REPORT_PROMPT} when there are any)",
    )
    p.add_argument(
        "--images-per-request",
        type=int,
        default=None,
        help="report cases: send the slices in labelled groups of N (Bench 2 used 4: "
        "Entry/Upper/Lower/Exit) and join the replies; recorded in the run",
    )
    p.add_argument(
        "--repeats",
        type=int,
        default=1,
        help="ask the whole exam N times: N runs of their own ('<name> #1' .. '<name> #N'), "
        "tied by their run group for run-to-run agreement; resumable like one run",
    )
    add_price_options(p)
    p.add_argument(
        "--batch-out",
        metavar="FILE",
        help="send nothing: write the run's unanswered cases as OpenAI batch-input JSONL "
        "(the same requests as a live run); import the provider's output with "
        "`readerstudy import-run --format openai-batch`",
    )
    p.set_defaults(func=run)


def add_price_options(p: argparse.ArgumentParser) -> None:
    """Prices for the cost of replies whose provider reports none (runs/usage.py)."""
    p.add_argument(
        "--price-in", type=float, help="US dollars per million prompt tokens (with --price-out)"
    )
    p.add_argument(
        "--price-out",
        type=float,
        help="US dollars per million completion tokens, reasoning included (with --price-in)",
    )
    p.add_argument(
        "--prices",
        metavar="FILE",
        help="prices file (TOML, a table per model with input and output per million tokens)",
    )


def price_of(args: argparse.Namespace, model: str) -> Price | None:
    """``--price-in``/``--price-out``, else the model's row of ``--prices``, else None."""
    price = price_from_options(args.price_in, args.price_out)
    if price is not None and args.prices:
        raise PriceError("give --price-in/--price-out or --prices, not both")
    if price is None and args.prices:
        prices = load_prices(args.prices)
        if model not in prices:
            raise PriceError(f"prices file {args.prices} has no [{model!r}] table")
        price = prices[model]
    return price


def add_request_options(p: argparse.ArgumentParser) -> None:
    """The study, the endpoint, the model and how it is asked: shared by the commands
    that run a model (run-model, audit-grounding)."""
    p.add_argument("study", help="study slug")
    p.add_argument(
        "--endpoint",
        required=True,
        help="base URL, e.g. http://127.0.0.1:8000/v1 (vLLM) or https://api.openai.com/v1",
    )
    p.add_argument("--model", required=True, help="model name the endpoint expects")
    p.add_argument("--name", help="run name (default: the model name); same name = resume")
    p.add_argument("--group", help="group for analysis, e.g. the provider")
    p.add_argument(
        "--cohort",
        help="the run's cohort for the leaderboard (free text, e.g. frontier, open-weight, "
        "medical); a resumed run takes a new one",
    )
    p.add_argument("--concurrency", type=int, default=4, help="requests in flight (default 4)")
    p.add_argument(
        "--prompt",
        default=None,
        help=f"built-in prompt version or a prompt file (default {DEFAULT_PROMPT}, or "
        f"{GROUNDED_PROMPT} when the study has grounding = true)",
    )
    p.add_argument("--temperature", type=_optional_float, default=0.0, help="'none' to omit")
    p.add_argument("--seed", type=_optional_int, default=0, help="'none' to omit")
    p.add_argument(
        "--max-tokens",
        type=_optional_int,
        default=4096,
        help="reply length cap (default 4096: room for a long report); 'none' to omit",
    )
    p.add_argument(
        "--extra",
        default="{}",
        help="JSON object merged into each request, e.g. '{\"top_p\": 0.9}'; null drops a field",
    )
    p.add_argument(
        "--json",
        choices=JSON_MODES,
        help="hold the reply to JSON with the request's response_format: strict (json_schema "
        "of the prompt's fields) or object (json_object, for endpoints without schemas); "
        "recorded in the run (default: none sent)",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=120.0,
        help="longest silence between two reads (and the connect timeout), seconds",
    )
    p.add_argument(
        "--deadline",
        type=float,
        default=300.0,
        help="whole-request deadline: connect + send + full reply, seconds (default 300)",
    )
    p.add_argument(
        "--lease",
        type=float,
        default=DEFAULT_LEASE_S,
        help=f"seconds a dead runner's claim on a case blocks others (default {DEFAULT_LEASE_S:g})",
    )
    p.add_argument("--max-retries", type=int, default=5, help="retries on 429/5xx/timeouts")
    p.add_argument("--backoff", type=float, default=1.0, help="first retry delay, seconds")
    p.add_argument(
        "--api-key-env",
        default="OPENAI_API_KEY",
        help="environment variable holding the API key (default OPENAI_API_KEY; unset = none)",
    )
    p.add_argument(
        "--retry-failures",
        action="store_true",
        help="ask again the cases that failed technically (timeouts, errors) in earlier sessions",
    )
    p.add_argument(
        "--no-autograde", action="store_true", help="do not grade the answers (no key, no judges)"
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def run_spec(args: argparse.Namespace) -> RunSpec:
    try:
        extra = json.loads(args.extra)
    except json.JSONDecodeError as exc:
        raise ValueError(f"--extra is not JSON: {exc.msg}") from exc
    if not isinstance(extra, dict):
        raise ValueError("--extra must be a JSON object")
    name = args.name or args.model
    return RunSpec(
        name=text_only_name(name) if args.no_images else name,
        model=args.model,
        group=args.group,
        temperature=args.temperature,
        seed=args.seed,
        max_tokens=args.max_tokens,
        extra=extra,
        strip_mode=args.strip_mode,
        report_prompt=args.report_prompt,
        images_per_request=args.images_per_request,
        no_images=args.no_images,
        cohort=args.cohort,
        json_mode=args.json,
    )


def repeat_specs(spec: RunSpec, repeats: int) -> list[RunSpec]:
    """One spec per repeat, tied by the run group (the base name); ``[spec]`` for one run."""
    if repeats < 1:
        raise ValueError("--repeats must be 1 or more")
    if repeats == 1:
        return [spec]
    group = spec.name.removesuffix(TEXT_ONLY_SUFFIX)
    return [
        replace(spec, name=repeat_name(spec.name, i), run_group=group, repeat_index=i)
        for i in range(1, repeats + 1)
    ]


def summary_line(summary: RunSummary) -> str:
    t = summary.totals
    line = (
        f"run {summary.name}: {t['responses']}/{t['cases']} cases "
        f"({t['answered']} answered, {t['idk']} idk, {t['invalid']} invalid, "
        f"{t['failure']} failure of which {t['technical_failures']} technical); "
        f"asked {summary.asked} this session; tokens {t['prompt_tokens']} in, "
        f"{t['completion_tokens']} out"
    )
    if t.get("latency_s_mean") is not None:
        line += f"; mean latency {t['latency_s_mean']} s"
    if t.get("latency_p95_s") is not None:
        line += f" (p50 {t['latency_p50_s']} s, p95 {t['latency_p95_s']} s)"
    if t.get("cost") is not None:
        line += f"; cost ${t['cost']:.4f} ({t['cost_source']})"
    if summary.no_images:
        line += "; text only: no image was sent"
    if summary.left_to_others:
        line += f"; {summary.left_to_others} answered by another runner meanwhile"
    if t.get("model_mismatch"):
        line += f"; WARNING: {t['model_mismatch']} replies name another model"
    return line


def client_from(args: argparse.Namespace) -> ChatClient:
    """The chat client the request options describe (raises ValueError on a bad one)."""
    return ChatClient(
        args.endpoint,
        api_key=os.environ.get(args.api_key_env) or None,
        read_timeout_s=args.timeout,
        deadline_s=args.deadline,
        max_attempts=args.max_retries + 1,
        backoff_s=args.backoff,
    )


def _study_judges(study: Study) -> tuple[JudgeConfig, ...]:
    """The study's judges, as this server defines them. A model run needs no judge: if the
    study names judges the server does not define, the run goes on, graded by the key and
    grade memory, and says so (``readerstudy grade STUDY`` grades the rest later)."""
    try:
        return study_judges(grading_config(study))
    except GradingConfigError as exc:
        print(
            f"readerstudy: warning: {exc}; this run's answers are graded by the key and grade "
            "memory only",
            file=sys.stderr,
        )
        return ()


def run(args: argparse.Namespace) -> int:
    settings = settings_or_exit()
    if args.judge is not None and len(args.judge) > 2:
        return fail("--judge: one or two judges (two must agree for a verdict)")
    if args.judge is not None and (args.no_autograde or args.auto_only):
        return fail("--judge grades the answers: leave out --no-autograde and --auto-only")
    try:
        specs = repeat_specs(run_spec(args), args.repeats)
        prompt = load_prompt(args.prompt) if args.prompt else None
        client = client_from(args)
        price = price_of(args, args.model)
    except (ValueError, OSError) as exc:
        return fail(str(exc))
    if args.batch_out:
        return _batch_out(args, settings, specs, prompt)
    summaries: list[RunSummary] = []
    graders: list[GradeOnArrival] = []
    try:
        with client, cli_session(settings) as session:
            study = require_study(session, args.study)
            assert study.id is not None
            if prompt is None:
                prompt = load_prompt(default_prompt(grounding=study_settings(study).grounding))
            judges = [] if args.auto_only else judge_configs(args) or _study_judges(study)
            for spec in specs:
                progress = None if args.quiet else RunProgressBar()
                grader = None
                if judges and not args.no_autograde:
                    grader = GradeOnArrival(
                        session=session,
                        study=study,
                        run_name=spec.name,
                        judges=judges,
                        actor="cli:run-model",
                        then=progress,
                    )
                summaries.append(
                    run_model(
                        session=session,
                        study=study,
                        spec=spec,
                        prompt=prompt,
                        client=client,
                        asset_dir=settings.asset_dir,
                        host=endpoint_host(args.endpoint),
                        concurrency=args.concurrency,
                        retry_failures=args.retry_failures,
                        progress=grader or progress,
                        lease_s=args.lease,
                        price=price,
                    )
                )
                if grader is not None:  # a last pass: answers a resumed run left pending
                    grader.grade()
                    graders.append(grader)
            graded = None
            if not args.no_autograde:
                graded = autograde_after_run(
                    session=session, study_id=study.id, actor="cli:run-model"
                )
    except RunAborted as exc:
        return fail(f"run stopped: {exc} (check --endpoint, --model and ${args.api_key_env})")
    except (CommandError, RunConflict, GradingConfigError, ValueError) as exc:
        return fail(str(exc))
    except OSError as exc:  # e.g. an image missing from the asset store
        return fail(f"cannot read the study's images: {exc}")
    except KeyboardInterrupt:
        print("\ninterrupted: answers so far are saved; rerun to resume", file=sys.stderr)
        return 130
    if graded:
        print(graded)
    for grader in graders:
        print(grader.summary())
    for summary in summaries:
        print(summary_line(summary))
    return 0


def _batch_out(
    args: argparse.Namespace, settings: Settings, specs: list[RunSpec], prompt: Prompt | None
) -> int:
    """``--batch-out FILE``: open the run(s) and write their requests; nothing is sent.
    With --repeats, one file per repeat: FILE's stem gets ``-r1`` .. ``-rN``."""
    out = Path(args.batch_out)
    lines = []
    try:
        with cli_session(settings) as session:
            study = require_study(session, args.study)
            if prompt is None:
                prompt = load_prompt(default_prompt(grounding=study_settings(study).grounding))
            for spec in specs:
                path = (
                    out
                    if spec.repeat_index is None
                    else out.with_name(f"{out.stem}-r{spec.repeat_index}{out.suffix}")
                )
                written = write_batch(
                    session=session,
                    study=study,
                    spec=spec,
                    prompt=prompt,
                    asset_dir=settings.asset_dir,
                    host=endpoint_host(args.endpoint),
                    out=path,
                    retry_failures=args.retry_failures,
                )
                line = (
                    f"run {written.run}: {written.written} requests written to {path} "
                    f"({written.already_answered} cases answered already)"
                )
                if written.report_cases:
                    line += (
                        f"; {written.report_cases} report case(s) left out: run the same "
                        "command without --batch-out to ask them live"
                    )
                lines.append(line)
    except (CommandError, RunConflict, ValueError) as exc:
        return fail(str(exc))
    except OSError as exc:
        return fail(f"cannot write the batch file or read the study's images: {exc}")
    print("\n".join(lines))
    return 0
