"""A ladder's configuration: the body the API takes, every setting at its default unless given
(``ladder_body``, the one literal the tests, the benchmarks and the scale run build ladders from),
and the checks that need the catalog, run on save and again on Run."""

from collections.abc import Iterable, Sequence
from typing import Any

from ladders import gate
from loopweb.runs.models import Case, CaseKind, CaseVersion

MAX_RUNGS = 50


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


REJECTED_KIND = {
    CaseKind.PERFORMANCE: (
        "{case} is a performance case: it is graded on its own scale and records no functional "
        "rating, so the gate could never read its runs. A rung must be validator-rated; "
        "performance cases belong in a coverage plan."
    ),
    CaseKind.GAME_JAM: (
        "{case} is a game jam case: it is reviewed on a graded category scale and records no "
        "domain ratings, so the gate could never read its runs. A rung must be validator-rated; "
        "game jam cases belong in a coverage plan."
    ),
}
LEGACY = (
    "{case}@{version} is a legacy version: its functional rating is supplied only by a reviewer, "
    "so its runs would never be rated by validators. A rung must be validator-rated; legacy "
    "versions belong in a coverage plan."
)


def rung_problems(rungs: Sequence[dict]) -> dict[str, list[str]]:
    """Errors keyed ``rungs.<index>.<field>`` for rungs that cannot be climbed.

    A version the backend has not ingested (even of a case it holds no version of), or an
    engine the version does not declare, is allowed: the driver reports that better than an
    author-time check.
    """
    slugs = {r["case"] for r in rungs}
    cases = {c.slug: c for c in Case.objects.filter(slug__in=slugs)}
    legacy = set(
        CaseVersion.objects.filter(case__slug__in=slugs, legacy=True).values_list(
            "case__slug", "version"
        )
    )
    errors: dict[str, list[str]] = {}
    for index, rung in enumerate(rungs):
        case = cases.get(rung["case"])
        if case is None:
            continue
        if case.kind in REJECTED_KIND:
            errors[f"rungs.{index}.case"] = [REJECTED_KIND[case.kind].format(case=case.slug)]
        elif (case.slug, rung["version"]) in legacy:
            errors[f"rungs.{index}.version"] = [
                LEGACY.format(case=case.slug, version=rung["version"])
            ]
    return errors
