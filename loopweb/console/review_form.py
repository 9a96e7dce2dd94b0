"""The queue's review form beyond the aesthetic rating: the ladder's rubric as fields, the values
read back from a posted form, and their keyboard shortcuts. The values are checked by
``ladders.queue.checked_values`` (``ladders.rubric``), as the API checks them."""

from typing import Any

from loopweb.console.forms import _number

#: Shortcuts of a criterion on the selected row, by kind (the aesthetic rating keeps 1-5).
KEYS = {
    "number": "0-9 sets it, + / − steps it",
    "category": "1-9 picks a label",
    "boolean": "y / n answers",
}


def values_from_post(rubric: list[dict], post) -> dict[str, Any]:
    """The values typed into the form (``value-<criterion id>``), as the API would take them:
    a number as a JSON number (anything else as typed, for the check to refuse), a label, true
    or false; an empty field is unanswered (left out)."""
    values: dict[str, Any] = {}
    for criterion in rubric:
        raw = post.get(f"value-{criterion['id']}", "").strip()
        if not raw:
            continue
        if criterion["kind"] == "number":
            values[criterion["id"]] = _number(raw)
        elif criterion["kind"] == "boolean":
            values[criterion["id"]] = {"true": True, "false": False}.get(raw, raw)
        else:
            values[criterion["id"]] = raw
    return values


def _shown(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def rubric_fields(rubric: list[dict], values: dict, errors: dict[str, list[str]]) -> list[dict]:
    """The rubric's criteria as the form shows them: each with its value as the form holds it,
    its errors (``values.<id>``), its row number for the keyboard and its shortcuts."""
    return [
        {
            **criterion,
            "row": row,
            "value": _shown(values.get(criterion["id"])),
            "errors": errors.get(f"values.{criterion['id']}", []),
            "keys": KEYS[criterion["kind"]],
            "choices": [(str(i), label) for i, label in enumerate(criterion.get("labels", []), 1)],
        }
        for row, criterion in enumerate(rubric, 1)
    ]
