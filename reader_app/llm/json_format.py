"""``run-model --json``: the OpenAI ``response_format`` that holds a model to the JSON
its prompt asks for (Bench 2's output was "enforced as strict JSON").

``strict`` sends ``json_schema`` with ``strict: true`` and the prompt's own fields
(diagnosis and ``likert_score``; with a location for the grounded prompt; findings
and impression for a report); ``object`` sends ``json_object`` (JSON, any fields),
for endpoints without schema support. The run records the mode (``params_json``
``json``). The parser stays as lenient as ever: the format only narrows what comes.
"""

from __future__ import annotations

from typing import Any, Final

from reader_app.llm.prompts import Prompt

JSON_MODES: Final = ("strict", "object")

_NULLABLE_INT: Final = {"type": ["integer", "null"], "minimum": 0, "maximum": 4}
_LOCATION: Final = {
    "type": ["object", "null"],
    "properties": {
        "slice": {"type": ["integer", "null"]},
        "x": {"type": "number"},
        "y": {"type": "number"},
    },
    "required": ["slice", "x", "y"],
    "additionalProperties": False,
}


def prompt_schema(prompt: Prompt) -> tuple[str, dict[str, Any]]:
    """(schema name, JSON schema) of the answer ``prompt`` asks for."""
    text = prompt.text
    if '"findings"' in text and '"impression"' in text:
        fields: dict[str, Any] = {"findings": {"type": "string"}, "impression": {"type": "string"}}
        name = "report"
    else:
        fields = {"diagnosis": {"type": "string"}, "likert_score": _NULLABLE_INT}
        name = "diagnosis"
        if '"location"' in text:
            fields["location"] = _LOCATION
            name = "grounded_diagnosis"
    schema = {
        "type": "object",
        "properties": fields,
        "required": list(fields),
        "additionalProperties": False,
    }
    return name, schema


def response_format(mode: str, prompt: Prompt) -> dict[str, Any]:
    """The request's ``response_format`` for ``mode`` (one of JSON_MODES)."""
    if mode == "object":
        return {"type": "json_object"}
    if mode != "strict":
        raise ValueError(f"--json must be one of {', '.join(JSON_MODES)}, not {mode!r}")
    name, schema = prompt_schema(prompt)
    return {"type": "json_schema", "json_schema": {"name": name, "strict": True, "schema": schema}}
