"""The origin a ladder's job carries, ``ladder:<ladder id>/<dispatch id>/<rung id>``: built and
read here only. Every job a ladder's dispatches launched starts with the ladder's prefix, so a
prefix match finds them (the jobs table has a ``varchar_pattern_ops`` index on ``origin``). Pure.
"""

from dataclasses import dataclass

PREFIX = "ladder:"


@dataclass(frozen=True, slots=True)
class Origin:
    ladder_id: int
    dispatch_id: str
    rung_id: str


def ladder_prefix(ladder_id: int) -> str:
    """What the origin of every job any dispatch of the ladder launched starts with."""
    return f"{PREFIX}{ladder_id}/"


def dispatch_prefix(ladder_id: int, dispatch_id: str) -> str:
    """What the origin of every job one dispatch launched starts with."""
    return f"{ladder_prefix(ladder_id)}{dispatch_id}/"


def origin(ladder_id: int, dispatch_id: str, rung_id: str) -> str:
    return f"{dispatch_prefix(ladder_id, dispatch_id)}{rung_id}"


def ladder_id_of(origin: str) -> int | None:
    """The ladder whose dispatch launched the job, or None for another origin."""
    if not origin.startswith(PREFIX):
        return None
    head = origin[len(PREFIX) :].split("/", 1)[0]
    return int(head) if head.isdigit() else None


def parse(origin: str) -> Origin | None:
    """The parts of a ladder job's origin, or None for another origin."""
    ladder_id = ladder_id_of(origin)
    if ladder_id is None:
        return None
    parts = origin[len(PREFIX) :].split("/")
    if len(parts) != 3:
        return None
    return Origin(ladder_id, parts[1], parts[2])
