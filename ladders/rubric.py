"""A ladder's rubric: the criteria its review form asks beyond the aesthetic rating, and the
check of a review's values against them. Pure: the API's serializers and the console's forms
both call it, so they accept and refuse the same values with the same messages.

A criterion is ``{"id", "kind", "label", "description", "required"}`` plus, by kind:
``number``: ``min``, ``max``, ``step``; ``category``: ``labels``; ``boolean``: nothing more.
"""

import math
import re
from collections.abc import Mapping
from typing import Any

KINDS = ("number", "category", "boolean")
MAX_CRITERIA = 20
MAX_LABELS = 20
CRITERION_ID = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
#: What a criterion's fields may not say of each other (relations JSON Schema cannot state).
MAX_ABOVE_MIN = "The max must be greater than the min."
STEP_DIVIDES = "The step must divide the range from min to max."
RELATIONS = (MAX_ABOVE_MIN, STEP_DIVIDES)
CRITERION_ID_RULE = (
    "A criterion id is a lowercase letter, then up to 39 lowercase letters, digits or underscores."
)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def criterion_problems(criterion: Mapping[str, Any]) -> dict[str, str]:
    """What is wrong with one criterion's own fields (already typed), by field name."""
    problems: dict[str, str] = {}
    if criterion["kind"] == "number":
        low, high, step = criterion.get("min"), criterion.get("max"), criterion.get("step")
        for name, value in (("min", low), ("max", high)):
            if value is None:
                problems[name] = f"A number criterion needs its {name}."
        if not problems and low >= high:
            problems["max"] = MAX_ABOVE_MIN
        if step is None or step <= 0:
            problems["step"] = "A number criterion needs a step greater than 0."
        elif not problems and not _on_step((high - low) / step):
            problems["step"] = STEP_DIVIDES
    elif criterion["kind"] == "category":
        labels = criterion.get("labels") or []
        if len(labels) < 2:
            problems["labels"] = "A category criterion needs at least two labels."
        elif len(set(labels)) != len(labels):
            problems["labels"] = "A label appears twice."
    return problems


def _on_step(count: float) -> bool:
    return abs(count - round(count)) < 1e-9


def value_problem(criterion: Mapping[str, Any], value: Any) -> str | None:
    """Why ``value`` is not an answer to the criterion (None when it is)."""
    kind = criterion["kind"]
    if kind == "boolean":
        return None if isinstance(value, bool) else "Give true or false."
    if kind == "category":
        labels = criterion["labels"]
        if isinstance(value, str) and value in labels:
            return None
        return "Give one of the labels: " + ", ".join(labels) + "."
    low, high, step = criterion["min"], criterion["max"], criterion["step"]
    if not _is_number(value):
        return f"Give a number from {_text(low)} to {_text(high)}."
    if not low <= value <= high:
        return f"Give a number from {_text(low)} to {_text(high)}."
    if not _on_step((value - low) / step):
        return f"Give a number from {_text(low)} in steps of {_text(step)}."
    return None


def _text(number: float) -> str:
    return str(int(number)) if float(number).is_integer() else str(number)


def values_problems(rubric: list[Mapping[str, Any]], values: Mapping[str, Any]) -> dict[str, str]:
    """What is wrong with a review's values under the rubric, by ``values.<criterion id>``: an
    unknown criterion, a value the criterion does not take, or a required criterion left out."""
    by_id = {c["id"]: c for c in rubric}
    problems: dict[str, str] = {}
    for key, value in values.items():
        criterion = by_id.get(key)
        if criterion is None:
            problems[f"values.{key}"] = f"The ladder's rubric has no criterion {key}."
        elif value is not None and (problem := value_problem(criterion, value)) is not None:
            problems[f"values.{key}"] = problem
    for criterion in rubric:
        if criterion.get("required") and values.get(criterion["id"]) is None:
            problems[f"values.{criterion['id']}"] = "This criterion is required."
    return problems


def clean_values(rubric: list[Mapping[str, Any]], values: Mapping[str, Any]) -> dict[str, Any]:
    """The values to store (checked already): unanswered criteria left out, in rubric order, a
    whole number on a whole-number scale stored as an integer."""
    kept: dict[str, Any] = {}
    for criterion in rubric:
        value = values.get(criterion["id"])
        if value is None:
            continue
        if criterion["kind"] == "number" and float(value).is_integer():
            value = int(value)
        kept[criterion["id"]] = value
    return kept
