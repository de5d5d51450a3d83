"""Ask a model for one report case: all slices at once, or in labelled groups.

The reply (or, grouped, each part's reply) is parsed by the strict report
parser; grouped parts are joined under their labels (Entry, Upper, Lower,
Exit). The stored row has ``findings`` and ``impression``; a part that fails
technically or cannot be parsed fails the case, with the reason in ``meta``.
"""

from __future__ import annotations

import json
from typing import Any

from reader_app.core.text_rules.answers import clean_model_text
from reader_app.llm import ChatClient, EndpointError, FatalEndpointError
from reader_app.llm.prompts import Prompt
from reader_app.models import utcnow
from reader_app.runs.case_job import CaseJob, Outcome
from reader_app.runs.image_groups import concatenate, group_images, group_messages
from reader_app.runs.prompt import case_messages
from reader_app.runs.record import RunSpec
from reader_app.runs.slice_scaling import model_image
from scoring.io import ParsedReport, parse_report

FAILED = {"status": "failure", "diagnosis": None, "likert": None, "idk": False}


def _fields(report: ParsedReport) -> dict[str, Any]:
    if report.status != "answered":
        return {**FAILED, "findings": None, "impression": None}
    return {
        "status": "answered",
        "diagnosis": None,
        "likert": None,
        "idk": False,
        "findings": report.findings,
        "impression": report.impression,
    }


def ask_report_case(
    job: CaseJob, *, client: ChatClient, spec: RunSpec, prompt: Prompt, asset_dir: Any
) -> Outcome:
    # a text-only run reads no image
    images = [model_image(asset_dir, i, kind=job.kind, spec=spec) for i in job.images]
    send = not spec.no_images
    per = spec.images_per_request
    groups = group_images(images, per) if per and per < len(images) else []
    requests: list[tuple[str, list[dict[str, Any]]]]
    if groups:
        requests = [
            (
                g.label,
                group_messages(
                    prompt,
                    history=job.history,
                    group=g,
                    total=len(images),
                    groups=len(groups),
                    send_images=send,
                    region=job.region,
                ),
            )
            for g in groups
        ]
    else:
        requests = [
            (
                "",
                case_messages(
                    prompt,
                    history=job.history,
                    images=images,
                    send_images=send,
                    region=job.region,
                ),
            )
        ]
    shown_at = utcnow()
    parts: list[tuple[str, ParsedReport]] = []
    raws: list[str] = []
    meta: dict[str, Any] = {"latency_s": 0.0, "attempts": 0}
    reasonings: list[str] = []
    for label, messages in requests:
        try:
            result = client.complete(messages, model=spec.model, params=spec.sampling(prompt))
        except FatalEndpointError:
            raise
        except EndpointError as exc:
            meta.update({"error": str(exc), "http_status": exc.status, "failed_part": label})
            raw = exc.body or None
            return Outcome(
                job, shown_at, utcnow(), raw, meta, _fields(ParsedReport(None, None, "failure"))
            )
        raws.append(result.text)
        parts.append((label, parse_report(result.text)))
        meta["latency_s"] = round(meta["latency_s"] + result.latency_s, 4)
        meta["attempts"] += result.attempts
        for key, value in result.usage.items():
            meta[key] = int(meta.get(key, 0)) + int(value)
        if result.cost is not None:
            meta["cost"] = float(meta.get("cost", 0.0)) + result.cost
        if result.reasoning:
            reasonings.append(result.reasoning)
        meta["finish_reason"] = result.finish_reason
    report = concatenate(parts) if groups else parts[0][1]
    if groups:
        meta["groups"] = [
            {"label": g.label, "first": g.first, "images": len(g.items)} for g in groups
        ]
    if report.status != "answered":
        meta["parse_error"] = report.error
    raw_reply = (
        json.dumps({label: raw for (label, _), raw in zip(parts, raws, strict=True)})
        if groups
        else raws[0]
    )
    fields = _fields(report)
    removed = 0
    for key in ("findings", "impression"):  # the same text policy as a person's report
        if fields.get(key):
            fields[key], n = clean_model_text(fields[key])
            removed += n
    if removed:
        meta["control_chars_removed"] = removed
    return Outcome(
        job, shown_at, utcnow(), raw_reply, meta, fields, reasoning="\n\n".join(reasonings) or None
    )
