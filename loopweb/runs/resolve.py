"""Resolving a combination into its combination cell, and checking it can launch."""

from collections.abc import Iterable
from dataclasses import dataclass

from loopweb.runs.cells import MAX_COMBINATION_CELL_KEY, CombinationCell
from loopweb.runs.models import Combination, CombinationKind, GGConfiguration, ModelEntry


class Unresolvable(Exception):
    """The combination cannot be turned into a cell (its gg configuration is gone or unbound)."""


@dataclass
class CatalogView:
    """The catalog rows a set of combinations needs, loaded in two queries."""

    configurations: dict[int, GGConfiguration]
    entries: dict[str, ModelEntry]

    @classmethod
    def load(cls, combinations: Iterable[Combination]) -> "CatalogView":
        combinations = list(combinations)
        config_ids = {c.configuration_id for c in combinations if c.configuration_id is not None}
        names = set()
        for combination in combinations:
            if combination.kind == CombinationKind.GG:
                names.update(combination.bindings.values())
            else:
                names.add(combination.model)
        configurations = (
            {c.id: c for c in GGConfiguration.objects.filter(id__in=config_ids)}
            if config_ids
            else {}
        )
        entries = {e.name: e for e in ModelEntry.objects.filter(name__in=names)} if names else {}
        return cls(configurations=configurations, entries=entries)


def combination_cell(combination: Combination, catalog: CatalogView) -> CombinationCell:
    if combination.kind == CombinationKind.HARNESS:
        return CombinationCell(combination.harness, combination.model, combination.provider)
    configuration = catalog.configurations.get(combination.configuration_id)
    if configuration is None:
        raise Unresolvable(f"gg configuration {combination.configuration_id} no longer exists")
    roles = list(configuration.roles)
    if not roles:
        raise Unresolvable(f"gg configuration {configuration.name!r} declares no roles")
    missing = [role for role in roles if role not in combination.bindings]
    if missing:
        raise Unresolvable(f"no model is bound to role(s) {', '.join(missing)}")
    launch_model = combination.bindings[roles[0]]
    entry = catalog.entries.get(launch_model)
    if entry is None:
        raise Unresolvable(f"model {launch_model!r} is not in the catalog")
    cell = CombinationCell(
        harness="gg",
        model=launch_model,
        provider=entry.provider,
        configuration_id=configuration.id,
        bound_models=tuple(sorted(combination.bindings[role] for role in roles)),
    )
    if len(cell.key) > MAX_COMBINATION_CELL_KEY:
        raise Unresolvable(
            f"its cell key would be longer than {MAX_COMBINATION_CELL_KEY} characters"
        )
    return cell


def launch_problem(combination: Combination, catalog: CatalogView) -> str | None:
    """Why the combination cannot launch, or None when it can."""
    if combination.kind == CombinationKind.GG:
        names = list(combination.bindings.values())
    else:
        names = [combination.model]
    for name in names:
        entry = catalog.entries.get(name)
        if entry is None:
            return f"model {name!r} is not in the catalog"
        if not entry.launchable:
            return f"model {name!r} is not launchable"
    return None


def launch_problems(combinations: Iterable[Combination]) -> dict[int, str | None]:
    """Why each combination cannot be launched now (None for one that can), by id: the catalog
    read once for them all."""
    combinations = list(combinations)
    catalog = CatalogView.load(combinations)
    problems: dict[int, str | None] = {}
    for combination in combinations:
        try:
            combination_cell(combination, catalog)
        except Unresolvable as exc:
            problems[combination.pk] = str(exc)
        else:
            problems[combination.pk] = launch_problem(combination, catalog)
    return problems
