"""Catalog writes that are more than a row: ingesting a case version."""

from django.utils import timezone

from loopweb.runs.models import Case, CaseVersion


def ingest_version(*, case: Case, version: str, ingested_at=None, **fields) -> CaseVersion:
    """Ingest (or re-ingest) a version of a case; the newest ingested one is the latest."""
    obj, _ = CaseVersion.objects.update_or_create(
        case=case,
        version=version,
        defaults={"ingested_at": ingested_at or timezone.now(), **fields},
    )
    return obj
