"""Reads of the history: a ladder's records, one record, the two sides of a compare. Each costs
a fixed number of queries whatever the number of climbers (``tests/history``)."""

from django.core.exceptions import ValidationError
from django.db.models import QuerySet

from ladders.models import Dispatch, Ladder
from loopweb.history import compare, records, significance
from loopweb.history.models import Activity, DispatchRecord
from loopweb.runs.numbers import MAX_ID, typed_integer


def records_of(ladder: Ladder) -> QuerySet[DispatchRecord]:
    """The ladder's records with their standings, newest first, without their slots (what lists
    and charts read); a dispatch that has just ended is among them even before its task has
    written its record."""
    unrecorded = records.unrecorded(ladder.pk).first()
    if unrecorded is not None:
        records.keep(unrecorded)
    return _listed(ladder)


def recent(ladder: Ladder, n: int) -> list[DispatchRecord]:
    """The ladder's last ``n`` records, oldest first (read after ``records_of``, which wrote any
    record still missing)."""
    return list(reversed(_listed(ladder)[:n]))


def _listed(ladder: Ladder) -> QuerySet[DispatchRecord]:
    return (
        DispatchRecord.objects.filter(ladder=ladder)
        .select_related("standing")
        .defer("slot_totals", "standing__slots")
        .order_by("-id")
    )


def choices(ladder: Ladder, n: int = 50) -> list[tuple[int, object, str]]:
    """(id, ended at, status) of the ladder's last ``n`` records, newest first: their heads
    alone."""
    listed = _listed(ladder).defer("totals", "climber_totals", "standing__bodies")[:n]
    return [(r.pk, r.ended_at, r.status) for r in listed]


def record_of(ladder: Ladder, record_id: int) -> DispatchRecord | None:
    if not 1 <= record_id <= MAX_ID:
        return None
    return (
        DispatchRecord.objects.filter(ladder=ladder, pk=record_id)
        .select_related("standing")
        .first()
    )


def current(ladder: Ladder) -> DispatchRecord | None:
    """The ladder's latest dispatch as it stands now (its record once it has ended)."""
    dispatch = Dispatch.objects.filter(ladder=ladder).first()
    return records.live(dispatch) if dispatch is not None else None


def side(ladder: Ladder, value: str | None, field: str) -> DispatchRecord:
    """One side of a compare: a record id of the ladder or ``current``; a 400 naming ``field``
    otherwise."""
    if value is None or value == "":
        raise ValidationError({field: ["Give a record id of this ladder or 'current'."]})
    if value == records.CURRENT:
        found = current(ladder)
        if found is None:
            missing = "This ladder has not been run: nothing is current."
            raise ValidationError({field: [ValidationError(missing, code="does_not_exist")]})
        return found
    record_id = typed_integer(value, low=1)
    if record_id is None:
        raise ValidationError({field: ["Give a record id of this ladder or 'current'."]})
    found = record_of(ladder, record_id)
    if found is None:
        missing = f"This ladder has no record {value}."
        raise ValidationError({field: [ValidationError(missing, code="does_not_exist")]})
    return found


def compared(
    ladder: Ladder,
    a: str | None,
    b: str | None,
    alpha: str | None = None,
    change: str | None = None,
) -> dict:
    """``compare.compare`` of the two sides at ``alpha``, its power hint for ``change``
    (``?alpha=``, ``?change=``, text as sent); a 400 naming each bad one."""
    errors = {}
    sides = {}
    level = significance.parse_alpha(alpha)
    if isinstance(level, str):
        errors["alpha"] = [level]
    planned = significance.parse_change(change)
    if isinstance(planned, str):
        errors["change"] = [planned]
    for field, value in (("a", a), ("b", b)):
        if field == "b" and b == a and "a" in sides:
            sides["b"] = sides["a"]  # the same side twice is read once
            continue
        try:
            sides[field] = side(ladder, value, field)
        except ValidationError as exc:
            errors.update(exc.message_dict)
    if errors:
        raise ValidationError(errors)
    assert isinstance(level, float) and isinstance(planned, float)  # or among the errors
    return compare.compare(sides["a"], sides["b"], level, planned)


def activity_of(ladder: Ladder, n: int = 10) -> list[Activity]:
    return list(Activity.objects.filter(ladder=ladder).order_by("-at", "-id")[:n])
