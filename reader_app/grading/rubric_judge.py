"""The Bench 2 rubric judge: one or two LLM judges score each report 0-40 against the reference.

A judge sees the reference report and one candidate report as text, never the
images and never who wrote it (a reader and a model go through the same call).
Both texts are framed with a random boundary per request. Its instructions are
a versioned prompt (``reader_app/prompts/judges/``); the reply must be exactly
one JSON object ``{"core_finding", "score" (whole 0..40), "fabrication"
(true/false), "reason"}`` and nothing else.

One judge: its score stands (stored as ``agree``) unless an adjudicator grades
the report. Two judges whose scores differ by at most ``gap`` points (default 8) agree:
the report's rubric score is their mean, rounded half up. A wider gap is a
disagreement, and the report waits in the blinded "Reports" queue of the
adjudication page for a human grade. An error (timeout, HTTP error, an
unparseable reply) stores nothing, so the report is asked again next run.

The judgement's ``fabrication`` is true when any judge found a fabricated
finding; beside each judge's score it keeps that judge's reason
(``reasons_json``). Each judge's reply is cached by (prompt version, endpoint,
model, request settings, reference text, candidate text): identical report
texts, from a person or a model, cost one call per judge. A new prompt version re-
judges every report that has no human grade; the judgement under the old
version is kept, inactive.

All HTTP goes through ``ask_chat``, the one place to point at another client.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from reader_app.core.audit import record_event
from reader_app.core.auth import require_role
from reader_app.grading.config import GradingConfigError, grading_config
from reader_app.grading.diagnosis_judge import JudgeClient
from reader_app.grading.rubric import report_responses
from reader_app.grading.rubric_grades import RUBRIC_MAX
from reader_app.llm import ChatReply
from reader_app.llm.judge_text import StrictReplyError, frame, strict_object
from reader_app.llm.judges import JudgeConfig
from reader_app.llm.prompts import Prompt
from reader_app.llm.prompts import load_judge_prompt as _load
from reader_app.models import Reader, Response, RubricGrade, RubricJudgeCall, RubricJudgement, Study
from reader_app.study.case_reports import reference_reports, report_text

# v2: the Bench 2 paper's wording, the fabrication flag, framed texts, a strict reply
RUBRIC_JUDGE_PROMPT = "rubric_judge_v2"
DEFAULT_GAP = 8
MAX_TOKENS = 600
REPLY_KEYS = ("core_finding", "score", "fabrication", "reason")
V1_REPLY_KEYS = ("core_finding", "score", "reason")  # a prompt that asks for no fabrication flag


def reply_keys(prompt: Prompt) -> tuple[str, ...]:
    """The keys the prompt asks for: the fabrication flag only when it asks for one."""
    return REPLY_KEYS if '"fabrication"' in prompt.text else V1_REPLY_KEYS


def load_judge_prompt(version: str = RUBRIC_JUDGE_PROMPT) -> Prompt:
    """A judge prompt by version (``reader_app.llm.prompts``; default the current one)."""
    return _load(version)


@dataclass(frozen=True)
class RubricRequest:
    """What a judge reads: two report texts. No case, no image, no responder."""

    reference: str
    candidate: str


@dataclass(frozen=True)
class RubricReply:
    score: int | None  # None: no usable score
    reason: str = ""
    raw: str = ""
    error: str | None = None
    cached: bool = False
    fabrication: bool | None = None  # None: not said (a cached call of an older prompt)


class RubricParseError(ValueError):
    """The judge's reply holds no score we can trust."""


def rubric_messages(prompt: Prompt, request: RubricRequest) -> list[dict[str, str]]:
    user = (
        f"Reference report:\n{frame('reference', request.reference)}\n\n"
        f"Candidate report:\n{frame('candidate', request.candidate)}"
    )
    return [{"role": "system", "content": prompt.text}, {"role": "user", "content": user}]


def parse_rubric_reply(
    content: str, keys: tuple[str, ...] = REPLY_KEYS
) -> tuple[int, bool | None, str]:
    """Exactly ``{"core_finding", "score", "fabrication", "reason"}`` (or ``keys``) ->
    (score, fabrication, reason); a fraction, a bool score or a non-bool fabrication
    is refused. Without ``fabrication`` in ``keys`` it is None."""
    try:
        data = strict_object(content, keys)
    except StrictReplyError as exc:
        raise RubricParseError(str(exc)) from None
    score, fabrication = data["score"], data.get("fabrication")
    if isinstance(score, bool) or not isinstance(score, int) or not 0 <= score <= RUBRIC_MAX:
        raise RubricParseError(f"score must be a whole number 0..{RUBRIC_MAX}, got {score!r:.40}")
    if "fabrication" in keys and not isinstance(fabrication, bool):
        raise RubricParseError(f"fabrication must be true or false, got {fabrication!r:.40}")
    if not isinstance(data["reason"], str) or not isinstance(data["core_finding"], str):
        raise RubricParseError("core_finding and reason must be strings")
    return score, fabrication, data["reason"][:1000]


def parse_rubric_score(content: str) -> tuple[int, str]:
    """(score, reason) of a strict reply (``parse_rubric_reply``)."""
    score, _fabrication, reason = parse_rubric_reply(content)
    return score, reason


def ask_chat(client: JudgeClient, messages: list[dict[str, str]]) -> ChatReply:
    """The one call to a chat-completions endpoint (retries, timeouts, reply cap: the
    client's; request settings: the judge's, ``max_tokens`` default 600)."""
    return client.chat(messages, max_tokens=MAX_TOKENS)


def ask_rubric(client: JudgeClient, prompt: Prompt, request: RubricRequest) -> RubricReply:
    reply = ask_chat(client, rubric_messages(prompt, request))
    if reply.error is not None:
        return RubricReply(None, raw=reply.raw, error=reply.error)
    try:
        score, fabrication, reason = parse_rubric_reply(reply.text, reply_keys(prompt))
    except RubricParseError as exc:
        return RubricReply(None, raw=reply.raw, error=f"unparseable reply: {exc}")
    return RubricReply(score, reason, reply.raw, fabrication=fabrication)


def _normal(text: str) -> str:
    return "\n".join(" ".join(line.split()) for line in text.strip().splitlines())


def rubric_cache_key(config: JudgeConfig, prompt: Prompt, request: RubricRequest) -> str:
    material = json.dumps(
        [
            prompt.version,
            config.endpoint,
            config.model,
            config.params(MAX_TOKENS),
            _normal(request.reference),
            _normal(request.candidate),
        ],
        ensure_ascii=False,
    )
    return hashlib.sha256(material.encode("utf-8")).hexdigest()


class DbRubricCache:
    """Usable scores in ``rubric_judge_calls``; errors are never cached."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def get(self, key: str) -> RubricReply | None:
        row = self.session.exec(
            select(RubricJudgeCall).where(RubricJudgeCall.cache_key == key)
        ).first()
        if row is None:
            return None
        return RubricReply(
            row.score, row.reason or "", row.reply, cached=True, fabrication=row.fabrication
        )

    def put(self, key: str, config: JudgeConfig, prompt: Prompt, reply: RubricReply) -> None:
        if reply.score is None or self.get(key) is not None:
            return
        try:
            with self.session.begin_nested():
                self.session.add(
                    RubricJudgeCall(
                        cache_key=key,
                        endpoint_host=config.host[:255],
                        model=config.model[:200],
                        prompt_version=prompt.version[:64],
                        score=reply.score,
                        reason=reply.reason,
                        reply=reply.raw,
                        fabrication=reply.fabrication,
                    )
                )
        except IntegrityError:
            pass  # cached by another process a moment ago: same key, same reply


@dataclass(frozen=True)
class RubricOutcome:
    status: str  # agree | disagree | error
    score: int | None  # set when the judges agree
    replies: tuple[RubricReply, ...]

    @property
    def scores(self) -> list[int | None]:
        return [r.score for r in self.replies]

    @property
    def reasons(self) -> list[str | None]:
        """Each judge's reason, in the judges' order (None: that judge gave no score)."""
        return [None if r.score is None else r.reason for r in self.replies]

    @property
    def fabrication(self) -> bool | None:
        """True when any judge found a fabrication; None when one of them did not say."""
        flags = [r.fabrication for r in self.replies]
        if any(f is True for f in flags):
            return True
        return None if not flags or any(f is None for f in flags) else False


def combine_scores(replies: Sequence[RubricReply], gap: int = DEFAULT_GAP) -> RubricOutcome:
    """One judge: its score stands. Two or more: agree within ``gap`` points (score: the
    mean, rounded half up), else disagree."""
    if not replies or any(r.score is None for r in replies):
        return RubricOutcome("error", None, tuple(replies))
    scores = [r.score for r in replies if r.score is not None]
    if max(scores) - min(scores) > gap:
        return RubricOutcome("disagree", None, tuple(replies))
    # half up, in integers: floor(sum / n + 1/2)
    return RubricOutcome(
        "agree", (2 * sum(scores) + len(scores)) // (2 * len(scores)), tuple(replies)
    )


def judge_reports(
    judges: Sequence[JudgeClient],
    prompt: Prompt,
    requests: Sequence[RubricRequest],
    cache: DbRubricCache,
    *,
    gap: int = DEFAULT_GAP,
    max_workers: int = 4,
) -> list[RubricOutcome]:
    """Every judge on every request; one call per distinct (judge, cache key), cache first."""
    if not judges:
        raise ValueError("a rubric score needs at least one judge")
    keys = [[rubric_cache_key(j.config, prompt, r) for j in judges] for r in requests]
    answers: dict[tuple[int, str], RubricReply] = {}
    todo: dict[tuple[int, str], RubricRequest] = {}
    for i, request in enumerate(requests):
        for j in range(len(judges)):
            slot = (j, keys[i][j])
            if slot in answers or slot in todo:
                continue
            hit = cache.get(keys[i][j])
            if hit is not None:
                answers[slot] = hit
            else:
                todo[slot] = request
    if todo:
        with ThreadPoolExecutor(max_workers=max(1, max_workers)) as pool:
            futures = {
                slot: pool.submit(ask_rubric, judges[slot[0]], prompt, request)
                for slot, request in todo.items()
            }
            for (j, key), future in futures.items():
                reply = future.result()
                cache.put(key, judges[j].config, prompt, reply)
                answers[(j, key)] = reply
    return [
        combine_scores([answers[(j, keys[i][j])] for j in range(len(judges))], gap)
        for i in range(len(requests))
    ]


@dataclass(frozen=True)
class RubricJudgeReport:
    asked: int  # reports put to the judges under this prompt version
    agreed: int
    disagreements: int  # sent to the human "Reports" queue
    errors: int
    no_reference: int  # report cases without a reference report: left to humans
    prompt_version: str


def _active_judgements(session: Session, response_ids: list[int]) -> dict[int, RubricJudgement]:
    if not response_ids:
        return {}
    rows = session.exec(
        select(RubricJudgement).where(
            col(RubricJudgement.response_id).in_(response_ids),
            col(RubricJudgement.active).is_(True),
        )
    ).all()
    return {r.response_id: r for r in rows}


def _human_graded(session: Session, response_ids: list[int]) -> set[int]:
    if not response_ids:
        return set()
    return set(
        session.exec(
            select(RubricGrade.response_id).where(
                col(RubricGrade.response_id).in_(response_ids),
                col(RubricGrade.active).is_(True),
            )
        ).all()
    )


def run_rubric_judges(
    *,
    session: Session,
    actor: Reader,
    judges: Sequence[JudgeConfig] | None = None,
    prompt: Prompt | None = None,
    gap: int | None = None,
) -> RubricJudgeReport:
    """``judge_study_reports`` on the actor's study, for its coordinators and adjudicators."""
    require_role(actor, "coordinator", "adjudicator")
    study = session.get(Study, actor.study_id)
    assert study is not None
    return judge_study_reports(
        session=session,
        study=study,
        judges=judges,
        prompt=prompt,
        gap=gap,
        actor_code=actor.code,
    )


def judge_study_reports(
    *,
    session: Session,
    study: Study,
    judges: Sequence[JudgeConfig] | None = None,
    prompt: Prompt | None = None,
    gap: int | None = None,
    actor_code: str = "cli:judge-reports",
) -> RubricJudgeReport:
    """Judge every report of the study that has no human grade and no judgement under
    this prompt version; store the outcomes (agree: scored; disagree: to the queue)."""
    assert study.id is not None
    config = grading_config(study)
    configs = tuple(judges) if judges is not None else config.judges
    if not configs:
        raise GradingConfigError("This study has no judges configured ([[grading.judges]]).")
    prompt = prompt or load_judge_prompt()
    gap = config.rubric_gap if gap is None else gap
    if gap < 0 or gap > RUBRIC_MAX:
        raise GradingConfigError(f"rubric gap must be 0..{RUBRIC_MAX}, got {gap}")
    references = reference_reports(session=session, study_id=study.id)
    reports = report_responses(session, study.id)
    ids = [r.id for r, _ in reports if r.id is not None]
    current = _active_judgements(session, ids)
    human = _human_graded(session, ids)
    todo: list[tuple[Response, RubricRequest]] = []
    no_reference = 0
    for response, case in reports:
        assert response.id is not None
        if response.id in human:
            continue
        old = current.get(response.id)
        if old is not None and old.prompt_version == prompt.version:
            continue
        reference = references.get(case.id or 0)
        if reference is None:
            no_reference += 1
            continue
        candidate = report_text(response.findings, response.impression)
        todo.append((response, RubricRequest(reference.text(), candidate)))
    clients = [JudgeClient(c) for c in configs]
    try:
        outcomes = judge_reports(
            clients, prompt, [r for _, r in todo], DbRubricCache(session), gap=gap
        )
    finally:
        for client in clients:
            client.close()
    label = "+".join(c.label for c in configs)[:500]
    counts = {"agree": 0, "disagree": 0, "error": 0}
    for (response, _), outcome in zip(todo, outcomes, strict=True):
        counts[outcome.status] += 1
        if outcome.status == "error":
            continue  # nothing stored: asked again on the next run
        assert response.id is not None
        old = current.get(response.id)
        if old is not None:
            old.active = False
            session.add(old)
            session.flush()
        session.add(
            RubricJudgement(
                response_id=response.id,
                prompt_version=prompt.version[:64],
                judges=label,
                scores_json=json.dumps(outcome.scores),
                reasons_json=json.dumps(outcome.reasons, ensure_ascii=False),
                status=outcome.status,
                score=outcome.score,
                gap=gap,
                fabrication=outcome.fabrication,
            )
        )
    record_event(
        session=session,
        actor=actor_code,
        action="rubric.judge",
        study_id=study.id,
        prompt_version=prompt.version,
        asked=len(todo),
        **counts,
    )
    session.commit()
    return RubricJudgeReport(
        asked=len(todo),
        agreed=counts["agree"],
        disagreements=counts["disagree"],
        errors=counts["error"],
        no_reference=no_reference,
        prompt_version=prompt.version,
    )
