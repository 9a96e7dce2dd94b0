"""The standing of an ended dispatch as one stored document, and the readers of its older forms.

A document is ``{"schemaVersion", "dispatch": {…}, "climbers": [{…}]}``: the dispatch's head and
each climber as progress shows it, with how high it reached and, per slot, the runs it held and
the completed ones. It is kept in three parts of one row (``ladders.models.FinalStanding``), so
a reader reads only what it shows: ``head``, ``bodies`` (each climber but its slots) and
``slots``; ``join`` makes the whole. docs/decisions/0215-one-standing-document.md says why.
"""

from typing import Any

from ladders.statuses import PASSED, ended_climber_status

Json = dict[str, Any]
#: A document's three stored parts: its head, its climbers' bodies, their slots.
Parts = tuple[Json, list[Json], list[Json]]

#: The version a document is written in (1: before it carried one, read by ``from_v1``).
SCHEMA_VERSION = 2

#: What a climber of the document holds beside its body as progress shows it.
EXTRA = ("reached", "skippedByStop")

#: Per slot, what the ``slots`` part holds beside the slot's body.
HELD = ("runs", "completed")


def reached(statuses: list[str | None]) -> int:
    """The highest rung passed (1 for the lowest), 0 for none."""
    height = 0
    for status in statuses:
        if status != PASSED:
            break
        height += 1
    return height


def compose(dispatch: Json, climbers: list[Json]) -> Parts:
    """The document's three parts, from the dispatch's head and its climbers as
    ``{"body", "runs", "completed", "skippedByStop"}``."""
    bodies: list[Json] = []
    slots: list[Json] = []
    for climber in climbers:
        body = climber["body"]
        light = {k: v for k, v in body.items() if k != "slots"}
        light["reached"] = reached([s.get("status") for s in body["slots"]])
        light["skippedByStop"] = climber.get("skippedByStop")
        bodies.append(light)
        slots.append(
            {"slots": body["slots"], "runs": climber["runs"], "completed": climber["completed"]}
        )
    return {"schemaVersion": SCHEMA_VERSION, "dispatch": dispatch}, bodies, slots


def entries(bodies: list[Json], slots: list[Json]) -> list[Json]:
    """Each climber as ``{"body", "runs", "completed", "skippedByStop"}`` (``compose`` undone)."""
    out: list[Json] = []
    for light, held in zip(bodies, slots, strict=True):
        body = {k: v for k, v in light.items() if k not in EXTRA}
        body["slots"] = held["slots"]
        held = {"runs": held["runs"], "completed": held["completed"]}
        out.append({"body": body, **held, "skippedByStop": light.get("skippedByStop")})
    return out


def join(head: Json, bodies: list[Json], slots: list[Json]) -> Json:
    """The whole document: each climber with its slots and the runs they held."""
    return {
        **head,
        "climbers": [{**light, **held} for light, held in zip(bodies, slots, strict=True)],
    }


def from_v1(dispatch: Json, climbers: list[Json]) -> Parts:
    """A final standing stored before documents carried a version: its climbers
    ``[{"body", "runs", "completed", "skippedByStop"?}]``, the rest in columns (gathered into
    ``dispatch`` by the caller). A ``skippedByStop`` not counted yet stays null (progress counts
    it from the slots)."""
    return compose(dispatch, [{**c, "body": ended(c["body"])} for c in climbers])


def ended(body: Json) -> Json:
    """A climber of an ended dispatch: one a Stop caught running or blocked, stored before
    climbers could read stopped, reads stopped at the rung it stood on."""
    status = ended_climber_status(body.get("status", ""))
    if status == body.get("status", ""):
        return body
    return {**body, "status": status, "blockedReason": None, "problem": None, "attempts": None}


def from_record(
    dispatch: Json, climbers: list[Json], slots: list[list[list[Any]]], rung_ids: list[str]
) -> Parts:
    """The standing a record held before records read the dispatch's document: per climber
    ``{key, label, status, blockedReason, currentRung, reached, totals}``, per slot ``[status,
    tally in TALLY order | null, totals | null]``. What a record never kept reads null or
    empty."""
    bodies: list[Json] = []
    for climber, row in zip(climbers, slots, strict=True):
        slot_bodies: list[Json] = []
        for rung_id, (status, tally, _) in zip(rung_ids, row, strict=True):
            tallied = dict(zip(TALLY, tally, strict=True)) if tally else None
            slot_bodies.append(
                {"rung": rung_id, "status": status, "cellKey": None, "tally": tallied}
            )
        current = next((s for s in slot_bodies if s["rung"] == climber.get("currentRung")), None)
        bodies.append(
            {
                "body": {
                    "key": climber["key"],
                    "label": climber["label"],
                    "status": ended_climber_status(climber["status"]),
                    "blockedReason": climber.get("blockedReason")
                    if ended_climber_status(climber["status"]) == climber["status"]
                    else None,
                    "problem": None,
                    "attempts": None,
                    "currentRung": climber.get("currentRung"),
                    "cellKey": None,
                    "tally": current["tally"] if current else None,
                    "slots": slot_bodies,
                },
                "runs": [[] for _ in slot_bodies],
                "completed": [[] for _ in slot_bodies],
                "skippedByStop": None,
            }
        )
    return compose(dispatch, bodies)


#: A tally's fields in the order a record before version 2 listed them.
TALLY = ("counted", "rated", "unrated", "passing", "pending", "inFlight", "required")
