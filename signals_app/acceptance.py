"""Acceptance rules as seed 000 writes them: parsed, normalized, and the kinds of the names they
read kept apart from the run's signals (E195)."""

from collections.abc import Mapping
from typing import Any

from loopweb.runs.checks import join
from loopweb.runs.formats import (
    Choice,
    Extensions,
    Format,
    Given,
    Names,
    Number,
    Text,
    nullable,
    ref,
)
from loopweb.runs.numbers import json_integer
from signals_app.rules import (
    BETTER,
    DEFAULT_EXCLUDES_EVENTS,
    DEFAULT_WINDOW_DAYS,
    E195,
    MAX_NAME,
    MAX_WINDOW_DAYS,
    RECOMMENDED,
    SCALES,
    Errors,
    a,
)

# -- acceptance rules ---------------------------------------------------------------------------


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


def _recommended(*kinds: str) -> tuple[str, ...]:
    """Seed 000's recommended names of these kinds: a rule may not give them another kind."""
    return tuple(sorted(name for kind in kinds for name in RECOMMENDED[kind]))


#: A rule's score part. Its name may not be a recommended verdict or event (E195, checked by
#: ``_check_rule_kinds`` with the rule's other parts).
SCORE_TARGET = Format(
    "ScoreTargetInput",
    fields=(
        Text("name", required=True, max_length=MAX_NAME, not_in=_recommended("verdict", "event")),
        Number("target", required=True),
        Choice("better", required=True, choices=BETTER),
        Choice("scale", choices=SCALES),
        Extensions("ext"),
    ),
    also={
        "if": {"required": ["scale"], "properties": {"scale": {"const": "fraction"}}},
        "then": {"properties": {"target": {"minimum": 0, "maximum": 1}}},
    },
)


def _score_target(raw: Mapping[str, Any], path: str, errors: Errors) -> dict | None:
    raw = raw.get("score")
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        errors.add(path, "A score target is an object or null.", "invalid")
        return None
    before = len(errors.by_path)
    score = SCORE_TARGET.read(raw, path, errors)
    target = score["target"]
    if target is not None and score["scale"] == "fraction" and not 0 <= target <= 1:
        errors.add(join(path, "target"), 'A target with scale "fraction" must lie in [0, 1].', E195)
    if len(errors.by_path) != before:
        return None
    return score


def _window_days(raw: Mapping[str, Any], path: str, errors: Errors) -> int | None:
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


#: An acceptance rule (seed 000), in the order its fields are checked.
RULE = Format(
    "AcceptanceRuleInput",
    description="An acceptance rule (seed 000). requires names verdicts, score.name a score, "
    "excludes_events events; a name the rule gives two kinds is refused (E195).",
    fields=(
        Text("name", required=True, max_length=MAX_NAME),
        Text("description", required=True, max_length=500),
        Names("requires", not_in=_recommended("score", "event")),
        Names(
            "excludes_events",
            not_in=_recommended("verdict", "score"),
            description='["revert", "incident"] when absent or null.',
        ),
        Given("score", check=_score_target, json_schema=nullable(ref(SCORE_TARGET.name))),
        Given(
            "window_days",
            check=_window_days,
            json_schema={
                "type": ["integer", "null"],
                "minimum": 0,
                "maximum": MAX_WINDOW_DAYS,
                "description": f"{DEFAULT_WINDOW_DAYS} when absent or null.",
            },
        ),
        Extensions("ext"),
    ),
)


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
    given = RULE.read(raw, prefix, errors)
    score, excludes = given["score"], given["excludes_events"]
    requires = given["requires"] or []
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
        name=given["name"],
        description=given["description"],
        requires=requires,
        score=score,
        excludes_events=DEFAULT_EXCLUDES_EVENTS if excludes is None else excludes,
        window_days=given["window_days"],
        ext=given["ext"],
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
    named = set(requires) | ({score["name"]} if score is not None else set())
    _check_excludes(excludes, named, kind_of, prefix, errors)


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


def _check_excludes(excludes, named, kind_of, prefix, errors) -> None:
    for index, name in enumerate(excludes):
        if name in named:
            continue  # refused above, at the part that names it as a verdict or a score
        kind, where = kind_of(name)
        if kind in ("verdict", "score"):
            errors.add(
                join(join(prefix, "excludes_events"), index),
                f"{name!r} is {a(kind)} signal {where}; excludes_events names events only.",
                E195,
            )
