"""A ladder as the API takes it: the body with every setting at its default unless given, the
one literal the tests, the benchmarks and the scale run build their ladders from."""

from collections.abc import Iterable
from typing import Any

from ladders import gate


def rung_body(
    case: str,
    version: str,
    *,
    variant: str = "default",
    engine: str | None = None,
    runs: int | None = None,
) -> dict[str, Any]:
    """A rung as the API takes it."""
    return {"case": case, "version": version, "variant": variant, "engine": engine, "runs": runs}


def ladder_body(
    *,
    name: str = "climb",
    rungs: Iterable[dict[str, Any]] = (),
    combinations: Iterable[int] = (),
    gate_given: dict[str, Any] | None = None,
    **settings: Any,
) -> dict[str, Any]:
    """A ladder as ``POST /api/ladders/`` takes it: these rungs and combinations, the gate's
    defaults with ``gate_given`` over them, and every other setting at the API's default unless
    given in ``settings`` (``runsPerCell``, ``retryCount``, ``outerAxis``…)."""
    body: dict[str, Any] = {
        "name": name,
        "rungs": list(rungs),
        "groups": [],
        "combinations": list(combinations),
        "gate": gate.completed(gate_given or {}),
        "runsPerCell": 1,
        "runsInFlightLimit": None,
        "retryCount": 1,
        "outerAxis": "rung",
        "reviewers": [],
    }
    body.update(settings)
    return body
