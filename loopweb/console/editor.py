"""What the ladder editor shows: the catalog to add rungs from, the climbers to pick, and each
validation error placed beside the field it is about."""

from dataclasses import dataclass, field
from types import SimpleNamespace

from ladders.selectors import stale_versions
from loopweb.console.forms import EditorState
from loopweb.runs.models import (
    Case,
    CaseKind,
    CaseVersion,
    Combination,
    CoverageGroup,
    GGConfiguration,
    Rating,
)
from loopweb.runs.resolve import launch_problems

NOT_A_RUNG = {
    CaseKind.PERFORMANCE: "performance case: belongs in a coverage plan",
    CaseKind.GAME_JAM: "game jam case: belongs in a coverage plan",
}
LEGACY = "legacy: reviewer-rated, belongs in a coverage plan"


@dataclass
class VersionInfo:
    version: str
    legacy: bool
    variants: list[str]
    engines: list[str]


@dataclass
class CaseInfo:
    slug: str
    title: str
    kind: str
    versions: list[VersionInfo] = field(default_factory=list)  # newest ingested first


@dataclass
class Catalog:
    cases: dict[str, CaseInfo]

    @classmethod
    def load(cls) -> "Catalog":
        cases = {
            slug: CaseInfo(slug, title, kind)
            for slug, title, kind in Case.objects.order_by("slug").values_list(
                "slug", "title", "kind"
            )
        }
        versions = CaseVersion.objects.order_by("case__slug", "-ingested_at", "-id").values_list(
            "case__slug", "version", "legacy", "variants", "engines"
        )
        for slug, version, legacy, variants, engines in versions:
            cases[slug].versions.append(
                VersionInfo(version, legacy, list(variants or ["default"]), list(engines or []))
            )
        return cls(cases)

    @property
    def newest(self) -> dict[str, str]:
        return {slug: c.versions[0].version for slug, c in self.cases.items() if c.versions}

    def versions_of(self, slug: str) -> list[str]:
        case = self.cases.get(slug)
        return [v.version for v in case.versions] if case else []

    def rung_version(self, slug: str) -> str | None:
        """The newest version of the case that can be a rung (functional, not legacy)."""
        case = self.cases.get(slug)
        if case is None or case.kind in NOT_A_RUNG:
            return None
        return next((v.version for v in case.versions if not v.legacy), None)

    def title(self, slug: str) -> str:
        case = self.cases.get(slug)
        return case.title if case else slug


def adder(state: EditorState, catalog: Catalog) -> dict:
    """The "add a rung" choices: case, then its versions, then that version's variants and
    engines. A choice that cannot be a rung is listed, disabled, with the reason."""
    cases = [
        {
            "value": c.slug,
            "label": f"{c.title} ({c.slug})",
            "note": NOT_A_RUNG.get(c.kind, "" if c.versions else "no version ingested"),
        }
        for c in catalog.cases.values()
    ]
    case = catalog.cases.get(state.add_case)
    view = {
        "rungable": [c for c in cases if not c["note"]],
        "cases": cases,
        "case": state.add_case if case else "",
        "versions": [],
        "version": "",
        "variants": ["default"],
        "variant": "default",
        "engines": [],
        "engine": "",
    }
    if case is None:
        return view
    view["versions"] = [
        {
            "value": v.version,
            "label": v.version + (" — newest" if i == 0 else ""),
            "note": LEGACY if v.legacy else "",
        }
        for i, v in enumerate(case.versions)
    ]
    chosen = next((v for v in case.versions if v.version == state.add_version), None)
    if chosen is None:
        chosen = next((v for v in case.versions if not v.legacy), None)
    if chosen is None:
        return view
    view["version"] = chosen.version
    view["variants"] = chosen.variants
    view["variant"] = state.add_variant if state.add_variant in chosen.variants else "default"
    view["engines"] = chosen.engines
    view["engine"] = state.add_engine if state.add_engine in chosen.engines else ""
    return view


def rung_rows(state: EditorState, catalog: Catalog, rung_errors: dict[int, list[str]]):
    pins = [SimpleNamespace(case=r["case"], version=r["version"]) for r in state.rungs]
    stale = stale_versions(pins) if pins else set()
    newest = catalog.newest
    last = len(state.rungs) - 1
    return [
        {
            **rung,
            "index": i,
            "number": i + 1,
            "title": catalog.title(rung["case"]),
            "stale": (rung["case"], rung["version"]) in stale,
            "not_ingested": rung["version"] not in catalog.versions_of(rung["case"]),
            "newest": newest.get(rung["case"]),
            "errors": rung_errors.get(i, []),
            "first": i == 0,
            "last": i == last,
            "error_id": f"rungs-{i}-errors",
            "runs_id": f"rungs-{i}-runs",
            "up_id": f"rungs-{i}-up",
            "down_id": f"rungs-{i}-down",
        }
        for i, rung in enumerate(state.rungs)
    ]


def climber_choices(state: EditorState, owner) -> dict:
    """The owner's combination groups and the catalog's combinations, the chosen ones first in
    their declared order (the climb's order), then the rest."""
    groups = list(
        CoverageGroup.objects.filter(owner=owner)
        .prefetch_related("memberships__combination")
        .order_by("name", "id")
    )
    combinations = list(Combination.objects.order_by("id"))
    names = dict(GGConfiguration.objects.values_list("id", "name"))
    problems = launch_problems(combinations)

    def label(c: Combination) -> str:
        return c.label(names.get(c.configuration_id))

    def ordered(items, chosen):
        by_id = {item.pk: item for item in items}
        first = [by_id[pk] for pk in chosen if pk in by_id]
        taken = {item.pk for item in first}
        return first + [item for item in items if item.pk not in taken]

    return {
        "groups": [
            {
                "id": g.pk,
                "name": g.name,
                "checked": g.pk in state.groups,
                "members": [label(m.combination) for m in g.memberships.all()],
            }
            for g in ordered(groups, state.groups)
        ],
        "combinations": [
            {
                "id": c.pk,
                "label": label(c),
                "key": c.key,
                "checked": c.pk in state.combinations,
                "problem": problems[c.pk],
            }
            for c in ordered(combinations, state.combinations)
        ],
    }


# Errors -------------------------------------------------------------------------------------

#: API error keys → the editor field they sit beside.
FIELD_OF = {
    "name": "name",
    "rungs": "rungs",
    "rungs.non_field_errors": "rungs",
    "groups": "groups",
    "combinations": "combinations",
    "gate.floor": "floor",
    "gate.unloadedCountsAsBroken": "unloaded",
    "gate.earlyStop": "early_stop",
    "runsPerCell": "runs_per_cell",
    "runsInFlightLimit": "limit",
    "retryCount": "retry_count",
    "outerAxis": "outer_axis",
    "reviewers": "reviewers",
    "add": "add",
    "add_many": "add_many",
}
LABELS = {
    "name": "Name",
    "rungs": "Rungs",
    "add": "Add a rung",
    "add_many": "Add several cases",
    "groups": "Combination groups",
    "combinations": "One-off combinations",
    "floor": "Floor",
    "threshold": "Threshold",
    "unloaded": "Unloaded builds",
    "early_stop": "Early stop",
    "runs_per_cell": "Runs per rung",
    "limit": "Runs-in-flight limit",
    "retry_count": "Retry count",
    "outer_axis": "Climb order",
    "reviewers": "Reviewers",
    "general": "Ladder",
}
ANCHORS = {
    "name": "name",
    "rungs": "rungs-title",
    "add": "add-case",
    "add_many": "add-many",
    "groups": "groups-title",
    "combinations": "combinations-title",
    "floor": "gate-floor",
    "threshold": "threshold-count",
    "unloaded": "gate-unloaded",
    "early_stop": "gate-early-stop",
    "runs_per_cell": "runs-per-cell",
    "limit": "runs-in-flight-limit",
    "retry_count": "retry-count",
    "outer_axis": "outer-axis-rung",
    "reviewers": "reviewers",
    "general": "editor-title",
}
RUNG_LABELS = {
    "id": "Rung",
    "case": "Case",
    "version": "Version",
    "variant": "Variant",
    "engine": "Engine",
    "runs": "Runs",
}


@dataclass
class PlacedErrors:
    fields: dict[str, list[str]]
    rungs: dict[int, list[str]]
    summary: list[dict]


def place_errors(errors: dict[str, list[str]], state: EditorState) -> PlacedErrors:
    fields: dict[str, list[str]] = {}
    rungs: dict[int, list[str]] = {}
    summary = []
    for key, messages in errors.items():
        parts = key.split(".")
        if parts[0] == "rungs" and len(parts) >= 2 and parts[1].isdigit():
            index = int(parts[1])
            what = RUNG_LABELS.get(parts[2], "") if len(parts) > 2 else ""
            texts = [f"{what}: {m}" if what else m for m in messages]
            rungs.setdefault(index, []).extend(texts)
            anchor = f"rungs-{index}-runs" if index < len(state.rungs) else ANCHORS["rungs"]
            summary += [{"anchor": anchor, "text": f"Rung {index + 1}: {t}"} for t in texts]
            continue
        name = "threshold" if key.startswith("gate.threshold") else FIELD_OF.get(key, "general")
        fields.setdefault(name, []).extend(messages)
        anchor = ANCHORS[name]
        if name == "threshold" and state.threshold_kind == "fraction":
            anchor = "threshold-fraction"
        summary += [{"anchor": anchor, "text": f"{LABELS[name]}: {m}"} for m in messages]
    return PlacedErrors(fields, rungs, summary)


FLOORS = [
    (Rating.FLAWLESS, "flawless"),
    (Rating.GREAT, "great"),
    (Rating.PASSABLE, "passable"),
    (Rating.SCUFFED, "scuffed"),
    (Rating.BROKEN, "broken"),
]
