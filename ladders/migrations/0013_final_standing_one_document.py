"""A final standing becomes the one stored document of an ended dispatch's standing (version 2,
``ladders.document``), kept after a new Run for the dispatch's record: a row of its own (not
keyed by the dispatch row a Run rewrites), its ladder, the dispatch while it is the latest, and
the document in three parts. Every standing stored before (version 1: climbers in a column,
slot counts, names and how it ended beside them) is converted; the runs of one whose record was
not written yet are counted as ended, none in flight."""

import datetime as dt

import django.db.models.deletion
from django.db import migrations, models

import ladders.fields
from ladders import document


def _moment(value):
    return value.isoformat() if isinstance(value, dt.datetime) else value


def _runs(dispatch, climbers) -> dict:
    targets = {r["id"]: r.get("runs") or 0 for r in (dispatch.snapshot or {}).get("rungs", [])}
    total = sum(targets.get(s["rung"], 0) for c in climbers for s in c["body"]["slots"])
    return {
        "total": total,
        "done": total,
        "inFlight": 0,
        "skippedByStop": sum(c.get("skippedByStop") or 0 for c in climbers),
        "reused": (dispatch.reused or {}).get("runs", 0),
    }


def to_documents(apps, schema_editor):
    old = apps.get_model("ladders", "FinalStandingV1")
    new = apps.get_model("ladders", "FinalStanding")
    for row in old.objects.select_related("dispatch").iterator(chunk_size=20):
        dispatch = row.dispatch
        climbers = row.climbers or []
        head, bodies, slots = document.from_v1(
            {
                "id": dispatch.dispatch_id,
                "ladder": dispatch.ladder_id,
                "status": dispatch.status,
                "snapshot": dispatch.snapshot,
                "startedAt": _moment(dispatch.started_at),
                "endedAt": _moment(dispatch.ended_at or row.frozen_at),
                "startedBy": row.started_by_name or None,
                "stoppedBy": row.stopped_by_name or None,
                "cancelRunning": row.cancel_running,
                "cancelled": row.cancelled,
                "slotCounts": row.slot_counts,
                "runs": _runs(dispatch, climbers),
            },
            climbers,
        )
        new.objects.create(
            ladder_id=dispatch.ladder_id, dispatch=dispatch, head=head, bodies=bodies, slots=slots
        )


def to_version_1(apps, schema_editor):
    """Back to one standing per dispatch row: the latest dispatches' standings; those a Run
    detached are dropped (the records' migration back keeps what they held)."""
    old = apps.get_model("ladders", "FinalStandingV1")
    new = apps.get_model("ladders", "FinalStanding")
    for row in new.objects.filter(dispatch__isnull=False).iterator(chunk_size=20):
        about = row.head["dispatch"]
        old.objects.create(
            dispatch_id=row.dispatch_id,
            slot_counts=about["slotCounts"],
            climbers=document.entries(row.bodies, row.slots),
            frozen_at=dt.datetime.fromisoformat(about["endedAt"]),
            cancel_running=about["cancelRunning"],
            cancelled=about["cancelled"],
            started_by_name=about["startedBy"] or "",
            stopped_by_name=about["stoppedBy"] or "",
        )


def compress_with_lz4(apps, schema_editor):
    """On PostgreSQL built with lz4, the document is compressed with it (as version 1's climbers
    were, ``0008_final_standing_climbers_as_text``)."""
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            "SELECT 'lz4' = ANY(enumvals) FROM pg_settings WHERE name = 'default_toast_compression'"
        )
        row = cursor.fetchone()
        if row and row[0]:
            for column in ("head", "bodies", "slots"):
                cursor.execute(
                    f"ALTER TABLE ladders_final_standing ALTER COLUMN {column} SET COMPRESSION lz4"
                )


class Migration(migrations.Migration):
    dependencies = [
        ("ladders", "0012_review_rubric_and_assignment"),
    ]

    operations = [
        migrations.AlterField(
            model_name="finalstanding",
            name="dispatch",
            field=models.OneToOneField(
                on_delete=django.db.models.deletion.CASCADE,
                primary_key=True,
                related_name="+",
                serialize=False,
                to="ladders.dispatch",
            ),
        ),
        migrations.RenameModel("FinalStanding", "FinalStandingV1"),
        migrations.CreateModel(
            name="FinalStanding",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("head", ladders.fields.JSONText()),
                ("bodies", ladders.fields.JSONText()),
                ("slots", ladders.fields.JSONText()),
                (
                    "dispatch",
                    models.OneToOneField(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="final",
                        to="ladders.dispatch",
                    ),
                ),
                (
                    "ladder",
                    models.ForeignKey(
                        db_constraint=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="ladders.ladder",
                    ),
                ),
            ],
            # A new table beside the old one's, whose constraints keep their names until it goes.
            options={"db_table": "ladders_final_standing"},
        ),
        migrations.RunPython(compress_with_lz4, migrations.RunPython.noop),
        migrations.RunPython(to_documents, to_version_1),
        migrations.DeleteModel("FinalStandingV1"),
    ]
