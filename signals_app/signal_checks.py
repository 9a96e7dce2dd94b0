"""Signals and late events as seed 000 writes them: parsed, checked, and their names' kinds kept
(E195)."""

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

from loopweb.runs import checks
from loopweb.runs.checks import has_nul, is_number, join, parse_timestamp
from signals_app.rules import (
    BETTER,
    E195,
    KINDS,
    MAX_SIGNALS_PER_REQUEST,
    SCALES,
    SIGNAL_FIELDS,
    TIERS,
    VERDICT_VALUES,
    Errors,
    SignalData,
    a,
)

# -- signals ------------------------------------------------------------------------------------


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
    checks.unknown_keys(raw, SIGNAL_FIELDS, prefix, errors)
    p = lambda key: join(prefix, key)  # noqa: E731
    signal_id = checks.string(raw, "id", p("id"), errors, required=True, max_length=200)
    kind = checks.choice(raw, "kind", p("kind"), errors, KINDS, required=True)
    name = checks.string(raw, "name", p("name"), errors, required=True, max_length=200)
    unit = checks.string(raw, "unit", p("unit"), errors, required=False, max_length=100)
    better = checks.choice(raw, "better", p("better"), errors, BETTER, required=False)
    threshold = checks.number(raw, "threshold", p("threshold"), errors, required=False)
    scale = checks.choice(raw, "scale", p("scale"), errors, SCALES, required=False)
    at_attempt = checks.string(
        raw, "at_attempt", p("at_attempt"), errors, required=False, max_length=200
    )
    observed_at = parse_timestamp(raw.get("observed_at"), p("observed_at"), errors)
    tier = checks.choice(raw, "tier", p("tier"), errors, TIERS, required=True)
    ext = checks.json_object(raw, "ext", p("ext"), errors)
    if "value" not in raw:
        errors.add(p("value"), "This field is required.", "required")
    elif kind is not None:
        check_value(kind, raw["value"], scale, p("value"), errors)
    if len(errors.by_path) != before:
        return None
    return SignalData(
        id=signal_id,
        kind=kind,
        name=name,
        value=raw["value"],
        observed_at=observed_at,
        tier=tier,
        unit=unit,
        better=better,
        threshold=float(threshold) if threshold is not None else None,
        scale=scale,
        at_attempt=at_attempt,
        ext=ext,
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

LATE_EVENT_FIELDS = frozenset(
    {"commit", "name", "value", "observed_at", "tier", "id", "ext", "kind"}
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
    checks.unknown_keys(body, LATE_EVENT_FIELDS, "", errors)
    commit = checks.string(body, "commit", "commit", errors, required=True, max_length=200)
    if body.get("kind", "event") != "event":
        errors.add("kind", "A late event's kind is event.", E195)
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
