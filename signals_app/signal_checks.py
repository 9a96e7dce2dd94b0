"""Signals and late events as seed 000 writes them: parsed, checked, and their names' kinds kept
(E195)."""

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from loopweb.runs.checks import has_nul, is_number, join
from loopweb.runs.formats import Choice, Extensions, Format, Given, Moment, Number, Text, text
from signals_app.rules import (
    BETTER,
    E195,
    KINDS,
    MAX_NAME,
    MAX_SIGNALS_PER_REQUEST,
    SCALES,
    TIERS,
    VERDICT_VALUES,
    Errors,
    SignalData,
    a,
)

# -- signals ------------------------------------------------------------------------------------


def _value_given(raw: Mapping[str, Any], path: str, errors: Errors) -> Any:
    """A signal's value must be given (null is a score not measured yet); ``check_value`` reads
    it against the signal's kind."""
    if "value" not in raw:
        errors.add(path, "This field is required.", "required")
    return raw.get("value")


#: What a signal's value may be, by its kind (E195), as the schema states ``check_value``.
VALUE_BY_KIND = [
    {
        "if": {"properties": {"kind": {"const": "verdict"}}},
        "then": {"properties": {"value": {"enum": list(VERDICT_VALUES)}}},
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
]

#: A signal (seed 000), in the order its fields are checked.
SIGNAL = Format(
    "SignalInput",
    description="One timestamped observation about a run's result (seed 000). Its kind fixes "
    "what its value may be (E195).",
    fields=(
        Text("id", required=True, max_length=MAX_NAME),
        Choice("kind", required=True, choices=KINDS),
        Text("name", required=True, max_length=MAX_NAME),
        Text("unit", max_length=100),
        Choice("better", choices=BETTER),
        Number("threshold"),
        Choice("scale", choices=SCALES, description="null means linear."),
        Text("at_attempt", max_length=MAX_NAME),
        Moment("observed_at", required=True),
        Choice("tier", required=True, choices=TIERS),
        Extensions("ext"),
        Given(
            "value",
            required=True,
            check=_value_given,
            json_schema={
                "description": "verdict: accept|reject|pass|fail|error; score: a number, or null "
                "when not measured yet; event: a reference string.",
            },
        ),
    ),
    also={"allOf": VALUE_BY_KIND},
)


def check_value(kind: str, value: Any, scale: str | None, path: str, errors: Errors) -> None:
    """A signal's kind fixes what its value may be (E195)."""
    if value is None:
        if kind != "score":
            errors.add(path, "Only a score may be null.", E195)
        return
    if kind == "verdict":
        if not isinstance(value, str) or value not in VERDICT_VALUES:
            errors.add(path, f"A verdict is one of: {', '.join(VERDICT_VALUES)}.", E195)
    elif kind == "score":
        if not is_number(value):
            errors.add(path, "A score is a number, or null when not measured yet.", E195)
        elif scale == "fraction" and not 0 <= value <= 1:
            errors.add(path, 'A score with scale "fraction" must lie in [0, 1].', E195)
    elif kind == "event" and (not isinstance(value, str) or not value.strip()):
        errors.add(path, "An event's value is a reference string.", E195)
    if isinstance(value, str):
        if len(value) > 500:
            errors.add(path, "At most 500 characters.", "max_length")
        elif has_nul(value):
            errors.add(path, "Null characters are not allowed.", "null_characters_not_allowed")


def parse_signal(raw: Any, prefix: str, errors: Errors) -> SignalData | None:
    """One signal in seed 000's format; field errors are added under ``prefix``."""
    if not isinstance(raw, Mapping):
        errors.add(prefix or "body", "A signal is an object.", "invalid")
        return None
    before = len(errors.by_path)
    given = SIGNAL.read(raw, prefix, errors)
    if "value" in raw and given["kind"] is not None:
        check_value(given["kind"], raw["value"], given["scale"], join(prefix, "value"), errors)
    if len(errors.by_path) != before:
        return None
    threshold = given["threshold"]
    return SignalData(
        **{**given, "threshold": float(threshold) if threshold is not None else None},
    )


def parse_signal_body(body: Any, prefix: str = "") -> list[tuple[str, SignalData]]:
    """A single signal or a list of them, as ``(path, signal)`` pairs in the order given.

    A single signal's fields are named plainly (``value``); a list's by index (``0.value``).
    """
    errors = Errors()
    if isinstance(body, Mapping):
        items = [(prefix, body)]
    elif isinstance(body, list):
        if not body and not prefix:
            errors.add("body", "Give a signal or a non-empty list of signals.", "empty")
        if len(body) > MAX_SIGNALS_PER_REQUEST:
            errors.add(
                prefix or "body",
                f"At most {MAX_SIGNALS_PER_REQUEST} signals at once.",
                "max_length",
            )
        errors.raise_if_any()
        items = [(join(prefix, index), item) for index, item in enumerate(body)]
    else:
        errors.add(prefix or "body", "Give a signal or a list of signals.", "invalid")
        errors.raise_if_any()
        return []
    parsed = [(path, parse_signal(raw, path, errors)) for path, raw in items]
    errors.raise_if_any()
    return parsed


def check_name_kinds(
    signals: Iterable[tuple[str, SignalData]],
    kinds: Mapping[str, str],
    errors: Errors,
    *,
    field: str = "kind",
    run_label: str = "this run",
    declared: Mapping[str, tuple[str, str]] | None = None,
) -> dict[str, str]:
    """Within a run a name keeps the kind of its first signal (E195).

    ``kinds`` maps the names already on the run to their kind; signals are checked in order, so a
    list that gives one name two kinds fails at the second. ``declared`` (``rule_kinds`` of the
    run's stored acceptance rule) is checked too: a signal may not give a name the rule reads
    another kind. Returns the kinds after the signals.
    """
    known = dict(kinds)
    declared = declared or {}
    for path, signal in signals:
        if signal.name in declared and declared[signal.name][0] != signal.kind:
            kind, part = declared[signal.name]
            errors.add(
                join(path, field),
                f"{signal.name!r} is {a(kind)} in the acceptance rule of {run_label} ({part}); "
                f"signal {signal.id!r} would make it {a(signal.kind)}.",
                E195,
            )
            continue
        first = known.setdefault(signal.name, signal.kind)
        if first != signal.kind:
            errors.add(
                join(path, field),
                f"{signal.name!r} is {a(first)} signal on {run_label}; "
                f"a name keeps the kind of its first signal.",
                E195,
            )
    return known


# -- late events --------------------------------------------------------------------------------


def _only_an_event(raw: Mapping[str, Any], path: str, errors: Errors) -> str:
    if raw.get("kind", "event") != "event":
        errors.add(path, "A late event's kind is event.", E195)
    return "event"


#: A late event about a commit: ``commit`` and ``kind`` are read here, the rest as the event
#: signal it becomes on each matching run (``SIGNAL``'s own fields, ``id`` minted when absent).
LATE_EVENT = Format(
    "LateEventInput",
    description="A late event about a commit, appended to every run whose commit or merge "
    "artifact matches.",
    fields=(
        Text("commit", required=True, max_length=MAX_NAME),
        SIGNAL.field("name"),
        Given("value", required=True, json_schema=text(500)),
        SIGNAL.field("observed_at"),
        SIGNAL.field("tier"),
        replace(SIGNAL.field("id"), required=False),
        SIGNAL.field("ext"),
        Given("kind", check=_only_an_event, json_schema={"const": "event"}),
    ),
)


def parse_late_event(body: Any) -> tuple[str, dict]:
    """``{commit, name, value, observed_at, tier, id?, ext?}`` → (commit, raw event signal).

    The signal's id is minted from its content when absent, so a client re-sending the same
    event appends nothing twice.
    """
    errors = Errors()
    if not isinstance(body, Mapping):
        errors.add("body", "A late event is an object.", "invalid")
        errors.raise_if_any()
    commit = LATE_EVENT.read(body, "", errors, only=("commit", "kind"))["commit"]
    errors.raise_if_any()
    raw = {k: v for k, v in body.items() if k not in ("commit", "kind")}
    raw["kind"] = "event"
    if raw.get("id") is None:
        raw["id"] = mint_event_id(commit, body)
    return commit, raw


def mint_event_id(commit: str, body: Mapping) -> str:
    content = json.dumps(
        [commit, body.get("name"), body.get("value"), body.get("observed_at"), body.get("tier")],
        sort_keys=True,
        default=str,
    )
    return "event:" + hashlib.sha256(content.encode()).hexdigest()[:32]
