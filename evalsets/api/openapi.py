"""Seed 003's request formats as JSON Schema, so the OpenAPI schema states what
``evalsets.inputs`` and ``evalsets.policy`` accept. What no schema can state is left to them: a
hash that names no evalset, two pins that are the same pin once their defaults are filled in, and
moments the server's clock rules out."""

from evalsets import inputs, policy
from loopweb.runs.api.schema import COMPONENTS, NO_NUL, NOT_BLANK, nullable, ref
from loopweb.runs.models.catalog import PIN_PART

PIN_PART_SCHEMA = {"type": "string", "pattern": PIN_PART.regex.pattern}

PIN = {
    "type": "object",
    "additionalProperties": False,
    "required": ["case", "version"],
    "properties": {
        "case": {"type": "string", "pattern": inputs.SLUG.pattern},
        "version": PIN_PART_SCHEMA,
        "variant": {**PIN_PART_SCHEMA, "description": '"default" when absent.'},
        "engine": {"type": ["string", "null"], "pattern": PIN_PART.regex.pattern},
    },
}

PINS = {
    "type": "array",
    "minItems": 1,
    "maxItems": inputs.MAX_PINS,
    "uniqueItems": True,
    "items": ref("PinInput"),
}

COUNT = {"type": "integer", "minimum": 0, "maximum": inputs.MAX_INT}

SUMMARY = {
    "type": "object",
    "description": "passed and failed (non-negative integers) and any other numbers the host "
    "chooses.",
    "required": ["passed", "failed"],
    "maxProperties": inputs.MAX_SUMMARY_KEYS,
    "propertyNames": {"minLength": 1, "maxLength": inputs.MAX_KEY, "pattern": NO_NUL},
    "properties": {"passed": COUNT, "failed": COUNT},
    "additionalProperties": {
        "type": "number",
        "minimum": -inputs.MAX_INT - 1,
        "maximum": inputs.MAX_INT,
    },
}

_SCHEDULE_COUNT = {"type": "integer", "minimum": 0, "maximum": policy.MAX_COUNT}
CHECKPOINT = {
    "anyOf": [
        {**_SCHEDULE_COUNT, "description": "A bare integer is milliseconds."},
        {
            "type": "object",
            "minProperties": 1,
            "maxProperties": 1,
            "additionalProperties": False,
            "properties": {
                "after_ms": _SCHEDULE_COUNT,
                "after_runs": _SCHEDULE_COUNT,
                "after_grains": _SCHEDULE_COUNT,
            },
        },
    ]
}
FIELD_NAME = {"type": "string", "maxLength": policy.MAX_FIELD, "pattern": NOT_BLANK}
AMOUNT = {"type": "number", "minimum": 0}

POLICY = {
    "type": "object",
    "description": "The OutcomeEvalset policy (seed 003).",
    "additionalProperties": False,
    "required": ["hash", "field", "higher_is_better"],
    "properties": {
        "hash": {"type": "string", "pattern": "^[0-9a-f]{1,64}$"},
        "field": FIELD_NAME,
        "higher_is_better": {"type": "boolean"},
        "horizons_ms": {
            "type": ["array", "null"],
            "maxItems": policy.MAX_SCHEDULE,
            "items": _SCHEDULE_COUNT,
        },
        "checkpoints": {
            "type": ["array", "null"],
            "maxItems": policy.MAX_SCHEDULE,
            "items": CHECKPOINT,
        },
        "baseline": {"enum": [*policy.BASELINE_KINDS, None]},
        "min_effect": nullable(
            {
                "type": "object",
                "additionalProperties": False,
                "minProperties": 1,
                "maxProperties": 1,
                "properties": {"count": AMOUNT, "points": AMOUNT},
            }
        ),
        "cost": nullable(
            {
                "type": "object",
                "additionalProperties": False,
                "required": ["field", "max_increase_ratio"],
                "properties": {
                    "field": FIELD_NAME,
                    "max_increase_ratio": {"type": "number", "exclusiveMinimum": 0},
                },
            }
        ),
        "significance": nullable(
            {
                "type": "object",
                "description": "Opt-in, for field passed or failed: a drop regresses only when "
                "Fisher's exact test on the two runs' passed of total gives p < alpha; otherwise "
                "it is inconclusive (EVALSETS.md, docs/statistics.md).",
                "additionalProperties": False,
                "required": ["alpha"],
                "properties": {
                    "alpha": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 0.5}
                },
            }
        ),
    },
    "allOf": [
        # An empty horizons_ms with no checkpoints leaves nothing to measure.
        {
            "if": {
                "required": ["horizons_ms"],
                "properties": {"horizons_ms": {"type": "array", "maxItems": 0}},
            },
            "then": {
                "required": ["checkpoints"],
                "properties": {"checkpoints": {"type": "array", "minItems": 1}},
            },
        },
        # The exact test reads passed of total: only passed and failed can have a significance.
        {
            "if": {
                "required": ["significance"],
                "properties": {"significance": {"type": "object"}},
            },
            "then": {"properties": {"field": {"enum": list(policy.COUNTED_FIELDS)}}},
        },
    ],
}

COMPONENTS.update(
    {
        "PinInput": PIN,
        "SummaryInput": SUMMARY,
        "OutcomeEvalsetInput": POLICY,
    }
)
