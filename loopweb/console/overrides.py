"""A run's checklist overrides as the run page shows them and takes them: each item with the
run record's word, the override that stands for it (who said what, and why), every override
made, and the form of someone who may review the run."""

from django.core.exceptions import ValidationError

from loopweb.console.forms import service_errors
from loopweb.runs import overrides
from loopweb.runs.models import ChecklistOverride, Run
from loopweb.runs.models.overrides import NOTE_MAX

CHOICES = {"pass": True, "fail": False}


def parse(post) -> tuple[dict | None, dict[str, list[str]]]:
    """The form's fields, checked as the API checks them: (data, errors by field)."""
    item, choice, note = post.get("item", ""), post.get("passed", ""), post.get("note", "")
    errors: dict[str, list[str]] = {}
    if not item:
        errors["item"] = ["Choose the checklist item to override."]
    elif len(item) > 100:
        errors["item"] = ["An item id has at most 100 characters."]
    if choice not in CHOICES:
        errors["passed"] = ["Say whether the item passed or failed."]
    if len(note) > NOTE_MAX:
        errors["note"] = [f"A note has at most {NOTE_MAX} characters."]
    if errors:
        return None, errors
    return {"item": item, "passed": CHOICES[choice], "note": note}, {}


def save(run: Run, reviewer, data: dict) -> dict[str, list[str]]:
    """Record the override through the service; its refusals, by field."""
    try:
        overrides.override_item(run=run, reviewer=reviewer, **data)
    except ValidationError as exc:
        return service_errors(exc)
    return {}


def panel(run: Run, checklist: list, *, may_override: bool) -> dict:
    """What the overrides section shows: two queries (the run's ratings, its overrides)."""
    run.refresh_from_db(fields=["validator_rating", "stored_rating"])
    history = list(ChecklistOverride.objects.filter(run=run).select_related("reviewer"))
    standing = {o.item: o for o in overrides.standing(history)}
    record = run.record.get("checklist") if isinstance(run.record, dict) else None
    marks = record if isinstance(record, dict) else {}
    items = [
        {
            "id": entry.get("id"),
            "text": entry.get("text") or entry.get("id"),
            "critical": bool(entry.get("critical")),
            "recorded": marks.get(entry.get("id")),
            "override": standing.get(entry.get("id")),
        }
        for entry in checklist
        if isinstance(entry, dict)
    ]
    return {
        "run": run,
        "items": items,
        "history": history,
        "standing_ids": {o.pk for o in standing.values()},
        "may_override": may_override and bool(items),
    }
