"""The validator rating of a completed run (SPEC §4), kept apart so it can be replaced.

Pure: it reads the run record and the case version's checklist and nothing else.
"""

from collections.abc import Mapping, Sequence
from typing import Any

from loopweb.runs.outcomes import rating_at_least

__all__ = ["build_loaded", "fold", "rate", "rating_at_least"]


def build_loaded(record: Mapping[str, Any]) -> bool | None:
    toolchain = record.get("toolchain") if isinstance(record, Mapping) else None
    if not isinstance(toolchain, Mapping):
        return None
    loaded = toolchain.get("loaded")
    return loaded if isinstance(loaded, bool) else None


def rate(record: Mapping[str, Any], checklist: Sequence[Mapping[str, Any]]) -> str:
    """Rate a completed run of a validator-rated case version.

    The toolchain gate comes first: a failed build is broken. Otherwise the record's checklist
    (item id -> passed) is read against the version's checklist; an item the record does not
    mention did not pass.
    """
    toolchain = record.get("toolchain")
    if isinstance(toolchain, Mapping) and toolchain.get("build") == "failed":
        return "broken"
    results = record.get("checklist")
    if not isinstance(results, Mapping):
        results = {}
    items = list(checklist)
    passed = [item for item in items if results.get(item["id"]) is True]
    if items and len(passed) == len(items):
        return "flawless"
    critical_ok = all(results.get(item["id"]) is True for item in items if item.get("critical"))
    share = len(passed) / len(items) if items else 0.0
    if critical_ok and share >= 0.8:
        return "great"
    if critical_ok and share >= 0.5:
        return "passable"
    if passed:
        return "scuffed"
    return "broken"


def fold(record: Mapping[str, Any], overrides: Mapping[str, bool]) -> dict[str, Any]:
    """The run record as the overrides correct it: each overridden item (id -> passed) takes
    the reviewer's word in place of the record's. A new record; ``record`` is left alone.

    Only checklist results change: the toolchain gate still comes first in ``rate``.
    """
    results = record.get("checklist") if isinstance(record, Mapping) else None
    checklist = dict(results) if isinstance(results, Mapping) else {}
    checklist.update(overrides)
    return {**record, "checklist": checklist}
