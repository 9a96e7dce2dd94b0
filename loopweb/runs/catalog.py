"""The shared catalog: who may change an entry, and the writes that are more than a row.

SPEC §1: owners and staff create catalog entries and everyone uses them; only an entry's creator
or staff may change or delete it, and an entry something uses cannot be deleted (409 naming what
uses it). An entry with no recorded creator (created before creators were recorded, or whose
creator's account was deleted) is changed and deleted by staff only. The API and the console
both ask here.
"""

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils import timezone

from loopweb.runs.errors import Conflict
from loopweb.runs.models import (
    Case,
    CaseVersion,
    Combination,
    CombinationKind,
    GGConfiguration,
    ModelEntry,
)

type CatalogEntry = Case | CaseVersion | ModelEntry | GGConfiguration | Combination

#: How many of an entry's uses a refused delete names; the rest are counted.
NAMED_USES = 3


def describe(entry: CatalogEntry) -> str:
    """The entry as a refusal names it: ``gg configuration 5 ('duo')``."""
    if isinstance(entry, GGConfiguration):
        return f"gg configuration {entry.pk} ({entry.name!r})"
    if isinstance(entry, ModelEntry):
        return f"model entry {entry.name!r}"
    if isinstance(entry, CaseVersion):
        return f"case version {entry.case.slug}@{entry.version}"
    if isinstance(entry, Case):
        return f"case {entry.slug!r}"
    return f"combination {entry.pk} ({entry.key})"


def may_change(user, entry: CatalogEntry) -> bool:
    """Whether the user may change or delete the entry: its creator or staff."""
    if user is None or not user.is_authenticated:
        return False
    if user.is_staff:
        return True
    return entry.created_by_id is not None and entry.created_by_id == user.pk


def check_may_change(user, entry: CatalogEntry) -> None:
    """Refuse (403) a change or delete by anyone but the entry's creator or staff."""
    if may_change(user, entry):
        return
    if entry.created_by_id is None:
        raise PermissionDenied(
            f"The {describe(entry)} has no recorded creator: only staff may change or delete it."
        )
    raise PermissionDenied(
        f"Only the creator of the {describe(entry)} or staff may change or delete it."
    )


def configuration_uses(configuration: GGConfiguration) -> str | None:
    """What uses the configuration (its combinations), as a 409 names it, or None."""
    using = Combination.objects.filter(
        kind=CombinationKind.GG, configuration_id=configuration.pk
    ).order_by("id")
    count = using.count()
    if not count:
        return None
    named = [f"combination {c.pk} ({c.label(configuration.name)})" for c in using[:NAMED_USES]]
    more = f" and {count - NAMED_USES} more" if count > NAMED_USES else ""
    return ", ".join(named) + more


@transaction.atomic
def delete_gg_configuration(*, configuration: GGConfiguration, by) -> None:
    """Delete a gg configuration no combination uses, as its creator or staff.

    Any combination's use keeps it, whoever made the combination: a combination is shared the
    moment it exists (any owner's ladder or group may climb it), its key names the configuration,
    and a deleted configuration blocks every climber of it as unlaunchable."""
    # The row lock closes the race with a combination being created for this configuration at
    # the same moment: ``CombinationSerializer.create`` takes the same lock before it stores the
    # combination, so either this check sees the new combination, or the create finds the row
    # gone and is refused.
    locked = GGConfiguration.objects.select_for_update().get(pk=configuration.pk)
    check_may_change(by, locked)
    uses = configuration_uses(locked)
    if uses is not None:
        raise Conflict(f"The {describe(locked)} cannot be deleted: used by {uses}.", "in_use")
    locked.delete()


@transaction.atomic
def ingest_version(*, case: Case, version: str, by, ingested_at=None, **fields) -> CaseVersion:
    """Ingest (or re-ingest) a version of a case; the newest ingested one is the latest.

    Anyone who may write the catalog adds a version to any case (the version is their entry);
    re-ingesting an existing version changes it, so only its creator or staff may."""
    values = {"ingested_at": ingested_at or timezone.now(), **fields}
    # Locked, so the version's creator is checked on the row this re-ingest rewrites.
    found, created = CaseVersion.objects.select_for_update().get_or_create(
        case=case, version=version, defaults={**values, "created_by": by}
    )
    if created:
        return found
    check_may_change(by, found)
    for name, value in values.items():
        setattr(found, name, value)
    found.save(update_fields=list(values))
    return found


def set_launchable(*, entry: ModelEntry, launchable: bool, by) -> ModelEntry:
    """Mark a model catalog entry launchable or not, as its creator or staff."""
    check_may_change(by, entry)
    entry.launchable = launchable
    entry.save(update_fields=["launchable"])
    return entry
