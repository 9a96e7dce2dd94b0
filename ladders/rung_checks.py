"""The rungs a ladder may have: at most ``MAX_RUNGS``, and none the gate could never read (checks
that need the catalog, run on save and again on Run)."""

from collections.abc import Sequence

from loopweb.runs.models import Case, CaseKind, CaseVersion

MAX_RUNGS = 50

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
