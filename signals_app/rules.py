"""Seed 000's formats checked in one place: signals, acceptance rules and E195.

Pure: these functions take decoded JSON and return normalized values, or raise a Django
``ValidationError`` whose keys are dotted field paths (``value``, ``0.value``,
``signals.1.kind``, ``acceptance_rule.score.target``). The API, the push receiver, the late-event
endpoint and the admin all validate through here, so a rule is written once.
"""

import hashlib
import json
import math
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.core.exceptions import ValidationError

from loopweb.runs.moments import BadMoment, read_moment
from loopweb.runs.numbers import json_integer

E195 = "E195"

KINDS = ("verdict", "score", "event")
VERDICT_VALUES = ("accept", "reject", "pass", "fail", "error")
BETTER = ("higher", "lower")
SCALES = ("linear", "log", "fraction")
#: Strongest first (SPEC §7).
TIERS = ("verified", "measured", "reported", "asserted")

#: Seed 000's recommended names; an acceptance rule is checked against them.
RECOMMENDED = {
    "verdict": frozenset({"tests", "referee", "pair_referee", "merge", "ci"}),
    "score": frozenset({"bench_score", "runtime_s", "quality"}),
    "event": frozenset({"issue", "incident", "revert", "hotfix"}),
}

DEFAULT_EXCLUDES_EVENTS = ("revert", "incident")
DEFAULT_WINDOW_DAYS = 14
#: A hundred years: wide enough for any real window, small enough that date arithmetic holds.
MAX_WINDOW_DAYS = 36_500
MAX_SIGNALS_PER_REQUEST = 1000

#: A signal's fields, in the order the API shows them.
SIGNAL_FIELDS = (
    "id",
    "kind",
    "name",
    "value",
    "unit",
    "better",
    "threshold",
    "scale",
    "at_attempt",
    "observed_at",
    "tier",
    "ext",
)
#: An acceptance rule's fields, in the order the API and the admin show them.
RULE_FIELDS = ("name", "description", "requires", "score", "excludes_events", "window_days", "ext")
SCORE_TARGET_FIELDS = frozenset({"name", "target", "better", "scale", "ext"})


@dataclass(frozen=True)
class SignalData:
    """A validated signal, ready to store."""

    id: str
    kind: str
    name: str
    value: str | int | float | None
    observed_at: datetime
    tier: str
    unit: str | None = None
    better: str | None = None
    threshold: float | None = None
    scale: str | None = None
    at_attempt: str | None = None
    ext: dict | None = None

    def same_as(self, other: "SignalData") -> bool:
        """Whether two signals with one id say the same thing (a client re-sending one).

        Numbers compare by value: jsonb gives ``1e300`` back as the integer it equals.
        """
        return canonical(self) == canonical(other)


def canonical(value: Any) -> Any:
    if isinstance(value, SignalData):
        return tuple(canonical(getattr(value, f)) for f in value.__dataclass_fields__)
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        try:
            return float(value)
        except OverflowError:
            return value
    if isinstance(value, Mapping):
        return {k: canonical(v) for k, v in value.items()}
    if isinstance(value, list):
        return [canonical(v) for v in value]
    return value


class Errors:
    """Field errors collected by dotted path, raised together."""

    def __init__(self) -> None:
        self.by_path: dict[str, list[ValidationError]] = {}

    def add(self, path: str, message: str, code: str = "invalid") -> None:
        self.by_path.setdefault(path, []).append(ValidationError(message, code=code))

    def raise_if_any(self) -> None:
        if self.by_path:
            raise ValidationError(dict(self.by_path))

    def __bool__(self) -> bool:
        return bool(self.by_path)


def a(kind: str) -> str:
    """A kind with its article: "a verdict", "an event"."""
    return f"an {kind}" if kind[:1] in "aeiou" else f"a {kind}"


def join(prefix: str, name: str | int) -> str:
    """``prefix.name``; an empty name leaves the prefix as it is."""
    if name == "":
        return prefix
    return f"{prefix}.{name}" if prefix else str(name)


# -- field checks -------------------------------------------------------------------------------


def is_number(value: Any) -> bool:
    """A finite JSON number; ``True`` is not a number here."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


def has_nul(value: Any) -> bool:
    """PostgreSQL text and jsonb cannot hold U+0000, so no stored string may carry it."""
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, Mapping):
        return any(has_nul(k) or has_nul(v) for k, v in value.items())
    if isinstance(value, list):
        return any(has_nul(v) for v in value)
    return False


def _string(raw, key, path, errors, *, required: bool, max_length: int) -> str | None:
    value = raw.get(key)
    if value is None:
        if required:
            errors.add(path, "This field is required.", "required")
        return None
    if not isinstance(value, str):
        errors.add(path, "Must be a string.", "invalid")
        return None
    if not value.strip():
        errors.add(path, "Must not be blank.", "blank")
        return None
    if len(value) > max_length:
        errors.add(path, f"At most {max_length} characters.", "max_length")
        return None
    if has_nul(value):
        errors.add(path, "Null characters are not allowed.", "null_characters_not_allowed")
        return None
    return value


def _choice(raw, key, path, errors, choices, *, required: bool, code: str = "invalid_choice"):
    value = raw.get(key)
    if value is None:
        if required:
            errors.add(path, "This field is required.", "required")
        return None
    if not isinstance(value, str) or value not in choices:
        errors.add(path, f"One of: {', '.join(choices)}.", code)
        return None
    return value


def _number(raw, key, path, errors, *, required: bool) -> int | float | None:
    value = raw.get(key)
    if value is None:
        if required:
            errors.add(path, "This field is required.", "required")
        return None
    if not is_number(value):
        errors.add(path, "Must be a finite number.", "invalid")
        return None
    return value


def _object(raw, key, path, errors) -> dict | None:
    value = raw.get(key)
    if value is None:
        return None
    if not isinstance(value, Mapping):
        errors.add(path, "Must be an object.", "invalid")
        return None
    if has_nul(value):
        errors.add(path, "Null characters are not allowed.", "null_characters_not_allowed")
        return None
    return dict(value)


def parse_timestamp(value: Any, path: str, errors: Errors, *, required: bool = True):
    """An RFC 3339 timestamp with a time zone, written between the years 1900 and 9998."""
    if value is None:
        if required:
            errors.add(path, "This field is required.", "required")
        return None
    try:
        return read_moment(value)
    except BadMoment as exc:
        errors.add(path, str(exc), exc.code)
        return None


def _unknown_keys(raw: Mapping, allowed: Collection[str], prefix: str, errors: Errors) -> None:
    for key in raw:
        if key not in allowed:
            errors.add(join(prefix, str(key)), "Unknown field.", "unknown_field")


def _names(raw, key, path, errors) -> list[str] | None:
    """An optional list of distinct signal names."""
    value = raw.get(key)
    if value is None:
        return None
    if not isinstance(value, list):
        errors.add(path, "Must be a list of names.", "invalid")
        return None
    names: list[str] = []
    for index, item in enumerate(value):
        item_path = join(path, index)
        name = _string({"n": item}, "n", item_path, errors, required=True, max_length=200)
        if name is None:
            continue
        if name in names:
            errors.add(item_path, f"{name!r} is listed twice.", "duplicate")
            continue
        names.append(name)
    return names


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
    _unknown_keys(raw, SIGNAL_FIELDS, prefix, errors)
    p = lambda key: join(prefix, key)  # noqa: E731
    signal_id = _string(raw, "id", p("id"), errors, required=True, max_length=200)
    kind = _choice(raw, "kind", p("kind"), errors, KINDS, required=True)
    name = _string(raw, "name", p("name"), errors, required=True, max_length=200)
    unit = _string(raw, "unit", p("unit"), errors, required=False, max_length=100)
    better = _choice(raw, "better", p("better"), errors, BETTER, required=False)
    threshold = _number(raw, "threshold", p("threshold"), errors, required=False)
    scale = _choice(raw, "scale", p("scale"), errors, SCALES, required=False)
    at_attempt = _string(raw, "at_attempt", p("at_attempt"), errors, required=False, max_length=200)
    observed_at = parse_timestamp(raw.get("observed_at"), p("observed_at"), errors)
    tier = _choice(raw, "tier", p("tier"), errors, TIERS, required=True)
    ext = _object(raw, "ext", p("ext"), errors)
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


def rule_kinds(rule: Any) -> dict[str, tuple[str, str]]:
    """The kind a stored acceptance rule gives each name it reads, with the part naming it.

    ``requires`` names verdicts, ``score.name`` a score and ``excludes_events`` events. Read
    leniently: a rule stored long ago that cannot be parsed any more still says what it can.
    """
    if not isinstance(rule, Mapping):
        return {}
    declared: dict[str, tuple[str, str]] = {}
    score = rule.get("score")
    parts = [
        ("verdict", "requires", rule.get("requires")),
        ("score", "score", [score.get("name")] if isinstance(score, Mapping) else None),
        ("event", "excludes_events", rule.get("excludes_events")),
    ]
    for kind, part, names in parts:
        if not isinstance(names, list):
            continue
        for index, name in enumerate(names):
            if isinstance(name, str):
                where = "score.name" if part == "score" else f"{part}.{index}"
                declared.setdefault(name, (kind, where))
    return declared


# -- acceptance rules ---------------------------------------------------------------------------


def default_rule() -> dict[str, Any]:
    """The rule of a user who has not set one: the tests verdict must pass."""
    return normalized_rule(
        name="tests",
        description="tests pass",
        requires=["tests"],
        score=None,
        excludes_events=list(DEFAULT_EXCLUDES_EVENTS),
        window_days=DEFAULT_WINDOW_DAYS,
        ext=None,
    )


def normalized_rule(
    *,
    name: Any,
    description: Any,
    requires: Any,
    score: Any,
    excludes_events: Any,
    window_days: Any,
    ext: Any,
) -> dict[str, Any]:
    return {
        "name": name,
        "description": description,
        "requires": list(requires),
        "score": score,
        "excludes_events": list(excludes_events),
        "window_days": window_days,
        "ext": ext,
    }


def _score_target(raw: Any, path: str, errors: Errors) -> dict | None:
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        errors.add(path, "A score target is an object or null.", "invalid")
        return None
    before = len(errors.by_path)
    _unknown_keys(raw, SCORE_TARGET_FIELDS, path, errors)
    name = _string(raw, "name", join(path, "name"), errors, required=True, max_length=200)
    target = _number(raw, "target", join(path, "target"), errors, required=True)
    better = _choice(raw, "better", join(path, "better"), errors, BETTER, required=True)
    scale = _choice(raw, "scale", join(path, "scale"), errors, SCALES, required=False)
    ext = _object(raw, "ext", join(path, "ext"), errors)
    if target is not None and scale == "fraction" and not 0 <= target <= 1:
        errors.add(join(path, "target"), 'A target with scale "fraction" must lie in [0, 1].', E195)
    if len(errors.by_path) != before:
        return None
    return {"name": name, "target": target, "better": better, "scale": scale, "ext": ext}


def _window_days(raw: Mapping, path: str, errors: Errors) -> int | None:
    raw_value = raw.get("window_days")
    if raw_value is None:
        return DEFAULT_WINDOW_DAYS
    value = json_integer(raw_value)
    if value is None:
        errors.add(path, "Must be a whole number of days.", "invalid")
        return None
    if value < 0:
        errors.add(path, "Must be at least 0.", "min_value")
        return None
    if value > MAX_WINDOW_DAYS:
        errors.add(path, f"At most {MAX_WINDOW_DAYS}.", "max_value")
        return None
    return value


def parse_rule(
    raw: Any,
    prefix: str = "",
    *,
    run_kinds: Mapping[str, tuple[str, str]] | None = None,
    check_recommended: bool = True,
) -> dict:
    """An acceptance rule, normalized (defaults filled in), or a ValidationError.

    ``run_kinds`` (name → kind and id of the first signal of that name already on the run the
    rule applies to) adds the run-level E195 check. ``check_recommended=False`` reads a rule
    stored earlier, whose names were checked when it was stored.
    """
    errors = Errors()
    if not isinstance(raw, Mapping):
        errors.add(prefix or "body", "An acceptance rule is an object.", "invalid")
        errors.raise_if_any()
    _unknown_keys(raw, RULE_FIELDS, prefix, errors)
    name = _string(raw, "name", join(prefix, "name"), errors, required=True, max_length=200)
    description = _string(
        raw, "description", join(prefix, "description"), errors, required=True, max_length=500
    )
    requires = _names(raw, "requires", join(prefix, "requires"), errors)
    excludes = _names(raw, "excludes_events", join(prefix, "excludes_events"), errors)
    score = _score_target(raw.get("score"), join(prefix, "score"), errors)
    window_days = _window_days(raw, join(prefix, "window_days"), errors)
    ext = _object(raw, "ext", join(prefix, "ext"), errors)
    requires = requires or []
    if check_recommended or run_kinds is not None:
        _check_rule_kinds(
            requires,
            score,
            DEFAULT_EXCLUDES_EVENTS if excludes is None else excludes,
            prefix,
            errors,
            run_kinds,
            check_recommended,
        )
    errors.raise_if_any()
    return normalized_rule(
        name=name,
        description=description,
        requires=requires,
        score=score,
        excludes_events=DEFAULT_EXCLUDES_EVENTS if excludes is None else excludes,
        window_days=window_days,
        ext=ext,
    )


def _check_rule_kinds(
    requires, score, excludes, prefix, errors, run_kinds, check_recommended
) -> None:
    """Each name of a rule has one kind (E195): ``requires`` names verdicts, ``score.name`` a
    score, ``excludes_events`` events — by seed 000's recommended names, by the kinds of the
    signals on the run the rule applies to, and by the rule's own other parts."""

    def kind_of(name: str) -> tuple[str | None, str]:
        if run_kinds is not None and name in run_kinds:
            kind, signal_id = run_kinds[name]
            return kind, f"on this run (signal {signal_id!r})"
        if check_recommended:
            for kind, names in RECOMMENDED.items():
                if name in names:
                    return kind, "by seed 000's recommended names"
        return None, ""

    excluded = {name: index for index, name in reversed(list(enumerate(excludes)))}
    _check_requires(requires, excluded, kind_of, prefix, errors)
    if score is not None:
        _check_score_name(score["name"], requires, excluded, kind_of, prefix, errors)
    claimed = set(requires) | ({score["name"]} if score is not None else set())
    _check_excludes(excludes, claimed, kind_of, prefix, errors)


def _check_requires(requires, excluded, kind_of, prefix, errors) -> None:
    for index, name in enumerate(requires):
        kind, where = kind_of(name)
        if kind is None and name in excluded:
            kind, where = "event", f"in this rule's excludes_events.{excluded[name]}"
        if kind in ("score", "event"):
            errors.add(
                join(join(prefix, "requires"), index),
                f"{name!r} is {a(kind)} signal {where}; requires names verdicts only.",
                E195,
            )


def _check_score_name(name, requires, excluded, kind_of, prefix, errors) -> None:
    kind, where = kind_of(name)
    if kind is None and name in requires:
        kind, where = "verdict", f"in this rule's requires.{requires.index(name)}"
    if kind is None and name in excluded:
        kind, where = "event", f"in this rule's excludes_events.{excluded[name]}"
    if kind in ("verdict", "event"):
        errors.add(
            join(join(prefix, "score"), "name"),
            f"{name!r} is {a(kind)} signal {where}; score names a score signal.",
            E195,
        )


def _check_excludes(excludes, claimed, kind_of, prefix, errors) -> None:
    for index, name in enumerate(excludes):
        if name in claimed:
            continue  # refused above, at the part that names it as a verdict or a score
        kind, where = kind_of(name)
        if kind in ("verdict", "score"):
            errors.add(
                join(join(prefix, "excludes_events"), index),
                f"{name!r} is {a(kind)} signal {where}; excludes_events names events only.",
                E195,
            )


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
    _unknown_keys(body, LATE_EVENT_FIELDS, "", errors)
    commit = _string(body, "commit", "commit", errors, required=True, max_length=200)
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
