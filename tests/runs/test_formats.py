"""Each request format validated outside DRF is declared once (``loopweb.runs.formats``): the
check the API runs and the schema the OpenAPI document states come from the same declaration,
so they accept and refuse the same bodies."""

import copy

import pytest
from django.core.exceptions import ValidationError
from jsonschema import Draft202012Validator

import evalsets.api.serializers  # noqa: F401 - registers seed 003's components
import signals_app.api.openapi  # noqa: F401 - registers seed 000's components
from evalsets.inputs import PIN, canonical_pins
from evalsets.policy import POLICY, parse_policy
from loopweb.runs.api.schema import COMPONENTS
from loopweb.runs.checks import Errors, Invalid
from signals_app.acceptance import RULE, parse_rule
from signals_app.signal_checks import LATE_EVENT, SIGNAL, parse_late_event, parse_signal

SIGNAL_OK = {
    "id": "s1",
    "kind": "score",
    "name": "bench_score",
    "value": 0.5,
    "observed_at": "2026-01-02T03:04:05Z",
    "tier": "measured",
}


def schema_says(fmt, body) -> bool:
    document = {**fmt.schema(), "components": {"schemas": COMPONENTS}}
    return Draft202012Validator(document).is_valid(body)


def signal_check_says(body) -> bool:
    errors = Errors()
    parse_signal(body, "", errors)
    return not errors


def rule_check_says(body) -> bool:
    try:
        parse_rule(body, check_recommended=False)
    except ValidationError:
        return False
    return True


def late_event_check_says(body) -> bool:
    try:
        _, raw = parse_late_event(body)
    except ValidationError:
        return False
    return signal_check_says(raw)


def pin_check_says(body) -> bool:
    try:
        canonical_pins([body])
    except Invalid:
        return False
    return True


def policy_check_says(body) -> bool:
    try:
        parse_policy(body)
    except Invalid:
        return False
    return True


def changed(base, **changes):
    body = copy.deepcopy(base)
    for key, value in changes.items():
        if value is ...:
            body.pop(key, None)
        else:
            body[key] = value
    return body


SIGNALS = [
    SIGNAL_OK,
    changed(SIGNAL_OK, unit=None, better=None, threshold=None, scale=None, ext=None),
    changed(SIGNAL_OK, unit="s", better="lower", threshold=2, scale="log", ext={"a": [1]}),
    changed(SIGNAL_OK, value=None),
    changed(SIGNAL_OK, tier=...),
    changed(SIGNAL_OK, value=...),
    changed(SIGNAL_OK, extra=1),
    changed(SIGNAL_OK, name="   "),
    changed(SIGNAL_OK, name="a\x00b"),
    changed(SIGNAL_OK, name="n" * 201),
    changed(SIGNAL_OK, threshold=True),
    changed(SIGNAL_OK, scale="fraction", value=1.5),
    changed(SIGNAL_OK, kind="verdict", value="pass"),
    changed(SIGNAL_OK, kind="verdict", value="maybe"),
    changed(SIGNAL_OK, kind="verdict", value=None),
    changed(SIGNAL_OK, kind="event", value="PR-1"),
    changed(SIGNAL_OK, kind="event", value=" "),
    changed(SIGNAL_OK, tier="rumoured"),
    changed(SIGNAL_OK, ext=[1]),
]

RULE_OK = {"name": "r", "description": "d"}
RULES = [
    RULE_OK,
    changed(RULE_OK, requires=["tests"], excludes_events=None, window_days=14.0, ext=None),
    changed(RULE_OK, score={"name": "q", "target": 0.5, "better": "higher", "scale": "fraction"}),
    changed(RULE_OK, score={"name": "q", "target": 2, "better": "higher", "scale": "fraction"}),
    changed(RULE_OK, score={"name": "q", "target": 2}),
    changed(RULE_OK, requires=["a", "a"]),
    changed(RULE_OK, window_days=-1),
    changed(RULE_OK, window_days=14.5),
    changed(RULE_OK, description=...),
    changed(RULE_OK, extra=None),
]

LATE_OK = {
    "commit": "abc",
    "name": "revert",
    "value": "PR-9",
    "observed_at": "2026-01-02T03:04:05+02:00",
    "tier": "reported",
}
LATE_EVENTS = [
    LATE_OK,
    changed(LATE_OK, id=None, kind="event"),
    changed(LATE_OK, kind="score"),
    changed(LATE_OK, commit=...),
    changed(LATE_OK, value="v" * 501),
    changed(LATE_OK, extra=1),
]

PIN_OK = {"case": "tetris", "version": "1"}
PINS = [
    PIN_OK,
    changed(PIN_OK, variant="hard", engine=None),
    changed(PIN_OK, engine="godot-4"),
    changed(PIN_OK, case="not a slug"),
    changed(PIN_OK, version=" 1"),
    changed(PIN_OK, version=...),
    changed(PIN_OK, extra="x"),
]

POLICY_OK = {"hash": "ab12", "field": "passed", "higher_is_better": True}
POLICIES = [
    POLICY_OK,
    changed(POLICY_OK, checkpoints=[60_000, {"after_runs": 3}], baseline="high_water"),
    changed(POLICY_OK, horizons_ms=[]),
    changed(POLICY_OK, horizons_ms=[], checkpoints=[{"after_grains": 2}]),
    changed(POLICY_OK, checkpoints=[{"after_runs": 1, "after_ms": 2}]),
    changed(POLICY_OK, min_effect={"count": 1}, cost={"field": "usd", "max_increase_ratio": 1.5}),
    changed(POLICY_OK, min_effect={"count": -1}),
    changed(POLICY_OK, significance={"alpha": 0.05}),
    changed(POLICY_OK, field="usd", significance={"alpha": 0.05}),
    changed(POLICY_OK, significance={"alpha": 0.5}),
    changed(POLICY_OK, higher_is_better=...),
    changed(POLICY_OK, baseline="best"),
    changed(POLICY_OK, extra=1),
]


@pytest.mark.parametrize(
    ("fmt", "check", "body"),
    [(SIGNAL, signal_check_says, body) for body in SIGNALS]
    + [(RULE, rule_check_says, body) for body in RULES]
    + [(LATE_EVENT, late_event_check_says, body) for body in LATE_EVENTS]
    + [(PIN, pin_check_says, body) for body in PINS]
    + [(POLICY, policy_check_says, body) for body in POLICIES],
)
def test_the_check_and_the_schema_accept_and_refuse_the_same_bodies(fmt, check, body):
    assert check(body) == schema_says(fmt, body), body


def test_the_openapi_components_are_the_formats_own_schemas():
    for fmt in (SIGNAL, RULE, LATE_EVENT, PIN, POLICY):
        assert COMPONENTS[fmt.name] == fmt.schema()


def test_a_format_refuses_a_key_it_does_not_declare_at_that_keys_path():
    errors = Errors()
    SIGNAL.read({**SIGNAL_OK, "colour": "red"}, "signals.0", errors)
    assert errors.by_path == {"signals.0.colour": [("Unknown field.", "unknown_field")]}
