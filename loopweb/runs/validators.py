"""The validator rating of a completed run (SPEC §4), kept apart so it can be replaced.

Pure: it reads the run record and the case version's checklist and nothing else.
"""

from collections.abc import Mapping, Sequence

from loopweb.runs.outcomes import rating_at_least

__all__ = ["build_loaded", "rate", "rating_at_least"]


def build_loaded(record: Mapping) -> bool | None:
    toolchain = record.get("toolchain") if isinstance(record, Mapping) else None
    if not isinstance(toolchain, Mapping):
        return None
    loaded = toolchain.get("loaded")
    return loaded if isinstance(loaded, bool) else None


def rate(record: Mapping, checklist: Sequence[Mapping]) -> str:
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
