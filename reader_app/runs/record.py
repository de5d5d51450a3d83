"""The run record: what was asked, of which model, where, and what came back.

A run is identified by (study, name). Running again under the same name
resumes it, so the settings must match what the run recorded: a different
model, prompt or sampling parameter would mix two experiments under one name.
Operational knobs (concurrency, timeout, retries) may change between sessions.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import update
from sqlmodel import Session, col, select

from reader_app.core.errors import ReaderStudyError
from reader_app.llm.json_format import JSON_MODES, response_format
from reader_app.llm.prompts import Prompt, load_prompt
from reader_app.llm.request import request_params
from reader_app.models import ModelRun, Response, Study, utcnow
from reader_app.runs.usage import TOKEN_KEYS, Price, usage_summary
from reader_app.study.casebank import scored_case_count
from scoring.io import ParsedAnswer

STRIP_MODES = ("slices", "montage")
# names no body region; a study picks another in study.toml (report_prompt)
DEFAULT_REPORT_PROMPT = "bench2_v2"
# a text-only run's name ends so, wherever run names are shown (leaderboard,
# charts, exports, the runs page): its figures are never mistaken for a seeing model's
TEXT_ONLY_SUFFIX = " (text only)"


class RunConflict(ReaderStudyError, ValueError):
    """The named run exists with other settings; pick another name."""


@dataclass(frozen=True)
class RunSpec:
    """What defines an experiment: the model, its sampling parameters, what it sees."""

    name: str
    model: str
    group: str | None = None
    temperature: float | None = 0.0
    seed: int | None = 0
    max_tokens: int | None = 4096  # room for a long report (Bench 2); docs/model-runs.md
    extra: Mapping[str, Any] = field(default_factory=dict)
    strip_mode: str = "slices"
    # report cases (Bench 2): the prompt they get, and slices per request (None: all at once)
    report_prompt: str | None = None
    images_per_request: int | None = None
    # the text-only ablation: the same prompt and history, no image parts
    no_images: bool = False
    # an analysis label (frontier, open-weight, medical), not part of the experiment:
    # a resumed run takes a new one, and None keeps the recorded one
    cohort: str | None = None
    # "per-slice": each strip slice rescaled to its own 0..255 before sending (study.toml
    # model_slices; runs/slice_scaling.py); None: the reader's PNGs byte for byte
    slice_scaling: str | None = None
    # repeat runs (`run-model --repeats N`): the group the repeats share (the base name)
    # and this run's index 1..N; both None for a single run (repeat_name builds the name)
    run_group: str | None = None
    repeat_index: int | None = None
    # run-model --json: "strict" (json_schema of the prompt's fields) or "object"
    # (json_object) as the request's response_format; None sends none (llm/json_format.py)
    json_mode: str | None = None

    def __post_init__(self) -> None:
        if not self.name.strip() or len(self.name) > 200:
            raise ValueError("run name must be 1-200 characters")
        if self.no_images != self.name.endswith(TEXT_ONLY_SUFFIX):
            raise ValueError(
                f"a run name ends with {TEXT_ONLY_SUFFIX.strip()!r} exactly when the run sends "
                "no images (text_only_name adds it)"
            )
        if self.strip_mode not in STRIP_MODES:
            raise ValueError(f"strip mode must be one of {STRIP_MODES}, not {self.strip_mode!r}")
        if self.slice_scaling not in (None, "per-slice"):
            raise ValueError(f"slice scaling must be 'per-slice' or None: {self.slice_scaling!r}")
        if self.json_mode not in (None, *JSON_MODES):
            raise ValueError(f"--json must be one of {', '.join(JSON_MODES)}")
        if self.images_per_request is not None and self.images_per_request < 1:
            raise ValueError("images per request must be at least 1")
        if self.cohort is not None and not 0 < len(self.cohort.strip()) <= 64:
            raise ValueError("a cohort must be 1-64 characters")
        if (self.run_group is None) != (self.repeat_index is None):
            raise ValueError("a repeat run has both a run group and a repeat index")
        if self.repeat_index is not None and self.repeat_index < 1:
            raise ValueError("a repeat index is 1 or more")

    def sampling(self, prompt: Prompt | None = None) -> dict[str, Any]:
        """Request fields besides model and messages; ``extra`` wins, and None drops a field.
        With ``json_mode`` and the ``prompt`` asked, its ``response_format``."""
        fmt = (
            {"response_format": response_format(self.json_mode, prompt)}
            if self.json_mode and prompt is not None
            else {}
        )
        return request_params(
            temperature=self.temperature,
            seed=self.seed,
            max_tokens=self.max_tokens,
            extra={**fmt, **self.extra},
        )

    def request_body(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        return {"model": self.model, "messages": messages, **self.sampling()}


def repeat_name(name: str, index: int) -> str:
    """The name of repeat ``index`` of the run ``name``: ``gpt-4o`` -> ``gpt-4o #2``
    (before the text-only suffix: ``gpt-4o #2 (text only)``)."""
    if name.endswith(TEXT_ONLY_SUFFIX):
        return f"{name.removesuffix(TEXT_ONLY_SUFFIX)} #{index}{TEXT_ONLY_SUFFIX}"
    return f"{name} #{index}"


def text_only_name(name: str) -> str:
    """The name of the text-only run beside ``name``: ``gpt-4o`` -> ``gpt-4o (text only)``."""
    return name if name.endswith(TEXT_ONLY_SUFFIX) else name + TEXT_ONLY_SUFFIX


def run_params(spec: RunSpec, prompt: Prompt) -> dict[str, Any]:
    return {
        "temperature": spec.temperature,
        "seed": spec.seed,
        "max_tokens": spec.max_tokens,
        "extra": dict(spec.extra),
        "strip_mode": spec.strip_mode,
        "prompt_sha256": prompt.sha256,
        **report_params(spec),
        # only when set, so the records of earlier runs still match on resume
        **({"no_images": True} if spec.no_images else {}),
        **({"slice_scaling": spec.slice_scaling} if spec.slice_scaling else {}),
        **({"json": spec.json_mode} if spec.json_mode else {}),
    }


def report_params(spec: RunSpec) -> dict[str, Any]:
    """How report cases were asked; empty for a run without them (older records match)."""
    if spec.report_prompt is None and spec.images_per_request is None:
        return {}
    report = load_prompt(spec.report_prompt or DEFAULT_REPORT_PROMPT)
    return {
        "report_prompt": report.version,
        "report_prompt_sha256": report.sha256,
        "images_per_request": spec.images_per_request,
    }


def find_run(*, session: Session, study: Study, name: str) -> ModelRun | None:
    return session.exec(
        select(ModelRun).where(ModelRun.study_id == study.id, ModelRun.name == name)
    ).first()


def open_run(
    *, session: Session, study: Study, spec: RunSpec, prompt: Prompt, host: str
) -> tuple[ModelRun, bool]:
    """Create the run, or return the existing one to resume; (run, resumed). Flushes."""
    params = run_params(spec, prompt)
    run = find_run(session=session, study=study, name=spec.name)
    if run is None:
        assert study.id is not None
        run = ModelRun(
            study_id=study.id,
            name=spec.name,
            model=spec.model,
            group_name=spec.group,
            endpoint_host=host[:255],
            params_json=json.dumps(params, sort_keys=True),
            prompt_version=prompt.version,
            no_images=spec.no_images,
            source="runner",
            cohort=clean_cohort(spec.cohort),
            run_group=spec.run_group,
            repeat_index=spec.repeat_index,
        )
        session.add(run)
        session.flush()
        return run, False
    if run.source != "runner":
        raise RunConflict(f"run {spec.name!r} was imported; choose another --name")
    recorded = json.loads(run.params_json or "{}")
    differ = [k for k in params if recorded.get(k) != params[k]]
    if run.model != spec.model:
        differ.insert(0, "model")
    if run.prompt_version != prompt.version:
        differ.append("prompt_version")
    if run.no_images != spec.no_images:
        differ.append("no_images")
    if (run.run_group, run.repeat_index) != (spec.run_group, spec.repeat_index):
        differ.append("run_group/repeat_index")
    if differ:
        raise RunConflict(
            f"run {spec.name!r} exists with different {', '.join(sorted(set(differ)))}; "
            "resume it with the same settings or choose another --name"
        )
    cohort = clean_cohort(spec.cohort)
    if cohort is not None and run.cohort != cohort:
        run.cohort = cohort
        session.add(run)
        session.flush()
    return run, True


def clean_cohort(text: str | None) -> str | None:
    """A cohort as stored: inner whitespace collapsed, blank = none, at most 64 characters."""
    value = " ".join((text or "").split())[:64]
    return value or None


def is_technical_failure(row: Response) -> bool:
    return row.status == "failure" and "error" in json.loads(row.meta_json or "{}")


def answer_fields(parsed: ParsedAnswer) -> dict[str, Any]:
    """Response columns for a parsed answer, within the table's CHECK constraints."""
    if parsed.status == "idk":
        return {"status": "idk", "diagnosis": None, "likert": None, "idk": True}
    if parsed.status == "failure":
        return {"status": "failure", "diagnosis": None, "likert": None, "idk": False}
    likert = parsed.likert if parsed.likert is not None and 0 <= parsed.likert <= 4 else None
    status = parsed.status if likert is not None else "invalid"
    return {"status": status, "diagnosis": parsed.diagnosis, "likert": likert, "idk": False}


def run_totals(*, session: Session, run: ModelRun, price: Price | None = None) -> dict[str, Any]:
    """Counts, tokens, cost and latency over the run's stored responses (not per session);
    ``price`` prices the replies whose provider reported no cost (runs/usage.py)."""
    rows = session.exec(select(Response).where(Response.model_run_id == run.id)).all()
    statuses = Counter(r.status for r in rows)
    metas = [json.loads(r.meta_json or "{}") for r in rows]
    latencies = [float(m["latency_s"]) for m in metas if m.get("latency_s") is not None]
    n_cases = scored_case_count(session=session, study_id=run.study_id)
    totals: dict[str, Any] = {
        "cases": n_cases,
        "responses": len(rows),
        "missing": max(n_cases - len(rows), 0),
        **{s: statuses.get(s, 0) for s in ("answered", "idk", "invalid", "failure")},
        "technical_failures": sum(1 for m in metas if "error" in m),
        "model_mismatch": sum(1 for m in metas if "reply_model" in m),
    }
    usage = usage_summary(metas, price=price)
    for key in (*TOKEN_KEYS, "cost", "cost_source", "latency_p50_s", "latency_p95_s"):
        totals[key] = usage[key]
    if price is not None:
        totals.update(price.to_dict())
    totals["latency_s_total"] = round(sum(latencies), 3)
    totals["latency_s_mean"] = round(sum(latencies) / len(latencies), 3) if latencies else None
    totals["latency_s_max"] = round(max(latencies), 3) if latencies else None
    return totals


def finish_run(
    *, session: Session, run: ModelRun, sessions: int | None = None, price: Price | None = None
) -> dict[str, Any]:
    """Count one more session (or set ``sessions``), stamp the end time, recompute totals.

    ``price`` (``--price-in`` / ``--price-out``) is recorded with the totals; without one,
    the price an earlier session recorded is used again.

    The counter moves by one UPDATE, which also locks the run row until the
    caller commits (SQLite: the write lock), so the totals computed after it
    see every answer committed before and two finishing processes cannot
    lose an update. Flushes; the caller commits.
    """
    assert run.id is not None
    new_count = ModelRun.sessions + 1 if sessions is None else sessions
    session.execute(update(ModelRun).where(col(ModelRun.id) == run.id).values(sessions=new_count))
    session.refresh(run)
    price = price or recorded_price(run)
    totals = run_totals(session=session, run=run, price=price)
    totals["sessions"] = run.sessions
    run.totals_json = json.dumps(totals, sort_keys=True)
    run.finished_at = utcnow()
    session.add(run)
    session.flush()
    return totals


def recorded_price(run: ModelRun) -> Price | None:
    """The price a session of the run recorded with its totals, if any."""
    totals = json.loads(run.totals_json or "{}")
    if totals.get("price_in") is None or totals.get("price_out") is None:
        return None
    return Price(float(totals["price_in"]), float(totals["price_out"]))
