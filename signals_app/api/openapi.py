"""Seed 000's request formats as JSON Schema, so the OpenAPI schema states what
``signals_app.rules`` accepts: a signal's value by its kind (E195), the fields a rule may name
and the names it may not, unknown keys refused, null meaning absent.

What no schema can state is left to the rules alone: a name whose kind conflicts with the
signals already on the run, with another signal of the same request or with another part of the
same rule (E195), and an id already taken on the run by another signal.
"""

from loopweb.runs.api.schema import COMPONENTS, STORABLE_OBJECT, nullable, patch, ref, text
from loopweb.runs.moments import MAX_LENGTH, YEAR_PATTERN
from signals_app import rules

MAX_NAME = 200

TIMESTAMP = {
    "type": "string",
    "format": "date-time",
    "pattern": YEAR_PATTERN,
    "maxLength": MAX_LENGTH,
    "description": "RFC 3339 with a time zone, between the years 1900 and 9998.",
}
EXT = nullable({**STORABLE_OBJECT, "description": "Extensions."})


def _recommended(*kinds: str) -> list[str]:
    return sorted(name for kind in kinds for name in rules.RECOMMENDED[kind])


SIGNAL = {
    "type": "object",
    "description": "One timestamped observation about a run's result (seed 000). Its kind fixes "
    "what its value may be (E195).",
    "additionalProperties": False,
    "required": ["id", "kind", "name", "value", "observed_at", "tier"],
    "properties": {
        "id": text(MAX_NAME),
        "kind": {"enum": list(rules.KINDS)},
        "name": text(MAX_NAME),
        "value": {
            "description": "verdict: accept|reject|pass|fail|error; score: a number, or null "
            "when not measured yet; event: a reference string.",
        },
        "unit": text(100, nullable=True),
        "better": {"enum": [*rules.BETTER, None]},
        "threshold": {"type": ["number", "null"]},
        "scale": {"enum": [*rules.SCALES, None], "description": "null means linear."},
        "at_attempt": text(MAX_NAME, nullable=True),
        "observed_at": TIMESTAMP,
        "tier": {"enum": list(rules.TIERS)},
        "ext": EXT,
    },
    "allOf": [
        {
            "if": {"properties": {"kind": {"const": "verdict"}}},
            "then": {"properties": {"value": {"enum": list(rules.VERDICT_VALUES)}}},
        },
        {
            "if": {"properties": {"kind": {"const": "score"}}},
            "then": {"properties": {"value": {"type": ["number", "null"]}}},
        },
        {
            "if": {"properties": {"kind": {"const": "event"}}},
            "then": {"properties": {"value": text(500)}},
        },
        {
            "if": {
                "required": ["kind", "scale"],
                "properties": {"kind": {"const": "score"}, "scale": {"const": "fraction"}},
            },
            "then": {"properties": {"value": {"minimum": 0, "maximum": 1}}},
        },
    ],
}

SIGNALS = {
    "description": "A signal, or a list of them (all or none).",
    "anyOf": [
        ref("SignalInput"),
        {
            "type": "array",
            "minItems": 1,
            "maxItems": rules.MAX_SIGNALS_PER_REQUEST,
            "items": ref("SignalInput"),
        },
    ],
}
#: A push's ``signals``: as above, and an empty list adds none.
PUSHED_SIGNALS = {
    "anyOf": [
        ref("SignalInput"),
        {
            "type": "array",
            "maxItems": rules.MAX_SIGNALS_PER_REQUEST,
            "items": ref("SignalInput"),
        },
    ]
}


def _names(*, not_in: list[str]) -> dict:
    return {
        "type": ["array", "null"],
        "uniqueItems": True,
        "items": {**text(MAX_NAME), "not": {"enum": not_in}},
    }


SCORE_TARGET = {
    "type": "object",
    "additionalProperties": False,
    "required": ["name", "target", "better"],
    "properties": {
        "name": {**text(MAX_NAME), "not": {"enum": _recommended("verdict", "event")}},
        "target": {"type": "number"},
        "better": {"enum": list(rules.BETTER)},
        "scale": {"enum": [*rules.SCALES, None]},
        "ext": EXT,
    },
    "if": {"required": ["scale"], "properties": {"scale": {"const": "fraction"}}},
    "then": {"properties": {"target": {"minimum": 0, "maximum": 1}}},
}

RULE = {
    "type": "object",
    "description": "An acceptance rule (seed 000). requires names verdicts, score.name a score, "
    "excludes_events events; a name the rule gives two kinds is refused (E195).",
    "additionalProperties": False,
    "required": ["name", "description"],
    "properties": {
        "name": text(MAX_NAME),
        "description": text(500),
        "requires": _names(not_in=_recommended("score", "event")),
        "score": nullable(ref("ScoreTargetInput")),
        "excludes_events": {
            **_names(not_in=_recommended("verdict", "score")),
            "description": '["revert", "incident"] when absent or null.',
        },
        "window_days": {
            "type": ["integer", "null"],
            "minimum": 0,
            "maximum": rules.MAX_WINDOW_DAYS,
            "description": "14 when absent or null.",
        },
        "ext": EXT,
    },
}

LATE_EVENT = {
    "type": "object",
    "description": "A late event about a commit, appended to every run whose commit or merge "
    "artifact matches.",
    "additionalProperties": False,
    "required": ["commit", "name", "value", "observed_at", "tier"],
    "properties": {
        "commit": text(MAX_NAME),
        "name": text(MAX_NAME),
        "value": text(500),
        "observed_at": TIMESTAMP,
        "tier": {"enum": list(rules.TIERS)},
        "id": text(MAX_NAME, nullable=True),
        "ext": EXT,
        "kind": {"const": "event"},
    },
}

COMPONENTS.update(
    {
        "SignalInput": SIGNAL,
        "ScoreTargetInput": SCORE_TARGET,
        "AcceptanceRuleInput": RULE,
        "LateEventInput": LATE_EVENT,
    }
)

# A push carries its signals and, maybe, the rule it was recorded under.
for _push in ("RunPushRequest", "RunRepushRequest"):
    patch(_push, signals=PUSHED_SIGNALS, acceptance_rule=nullable(ref("AcceptanceRuleInput")))

#: What a post of signals answers: the signal, or the list, as stored.
SIGNALS_ANSWER = {"anyOf": [ref("Signal"), {"type": "array", "items": ref("Signal")}]}

#: The request bodies of signals_app's own endpoints.
SIGNALS_BODY = {"application/json": SIGNALS}
RULE_BODY = {"application/json": ref("AcceptanceRuleInput")}
LATE_EVENT_BODY = {"application/json": ref("LateEventInput")}
