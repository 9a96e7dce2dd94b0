"""A record reads its dispatch's standing (the ladder's final standing, one document kept after a
new Run) instead of holding a copy in a format of its own; it keeps what is the history's: the
costs, in all, per climber and per slot, and the configuration's digest.

Every record written before is moved: one whose dispatch is still the ladder's latest reads that
dispatch's standing (with the runs the record counted as it ended); one whose dispatch a Run
replaced becomes a standing of its own, converted from the record (``ladders.document``
``from_record``: what a record never held, the runs each slot held, reads empty)."""

import datetime as dt

import django.db.models.deletion
from django.db import migrations, models

import ladders.fields
from ladders import document

#: The columns a record held its standing in, gone once it reads the standing.
MOVED = (
    "status",
    "snapshot",
    "started_at",
    "ended_at",
    "started_by",
    "started_by_name",
    "stopped_by",
    "stopped_by_name",
    "cancel_running",
    "cancelled",
    "slot_counts",
    "runs",
    "climbers",
    "slots",
)


def _moment(value):
    return value.isoformat() if isinstance(value, dt.datetime) else value


def _head(record) -> dict:
    return {
        "id": record.dispatch_id,
        "ladder": record.ladder_id,
        "status": record.status,
        "snapshot": record.snapshot,
        "startedAt": _moment(record.started_at),
        "endedAt": _moment(record.ended_at),
        "startedBy": record.started_by_name or None,
        "stoppedBy": record.stopped_by_name or None,
        "cancelRunning": record.cancel_running,
        "cancelled": record.cancelled,
        "slotCounts": record.slot_counts,
        "runs": record.runs,
    }


def read_the_standing(apps, schema_editor):
    Record = apps.get_model("history", "DispatchRecord")
    Standing = apps.get_model("ladders", "FinalStanding")
    for record in Record.objects.order_by("pk").iterator(chunk_size=20):
        standing = Standing.objects.filter(dispatch__dispatch_id=record.dispatch_id).first()
        if standing is not None:
            standing.head["dispatch"]["runs"] = record.runs
            standing.save(update_fields=["head"])
        else:
            rung_ids = [r["id"] for r in record.snapshot["rungs"]]
            head, bodies, slots = document.from_record(
                _head(record), record.climbers, record.slots, rung_ids
            )
            standing = Standing.objects.create(
                ladder_id=record.ladder_id, head=head, bodies=bodies, slots=slots
            )
        record.standing = standing
        record.climber_totals = [c["totals"] for c in record.climbers]
        record.slot_totals = [[slot[2] for slot in row] for row in record.slots]
        record.save(update_fields=["standing", "climber_totals", "slot_totals"])


def hold_a_copy(apps, schema_editor):
    """Back: each record holds its standing again, in the format it had."""
    Record = apps.get_model("history", "DispatchRecord")
    for record in Record.objects.select_related("standing").iterator(chunk_size=20):
        head, bodies = record.standing.head, record.standing.bodies
        held = record.standing.slots
        about = head["dispatch"]
        record.status = about["status"]
        record.snapshot = about["snapshot"]
        record.started_at = dt.datetime.fromisoformat(about["startedAt"])
        record.ended_at = dt.datetime.fromisoformat(about["endedAt"])
        record.started_by_name = about["startedBy"] or ""
        record.stopped_by_name = about["stoppedBy"] or ""
        record.cancel_running = about["cancelRunning"]
        record.cancelled = about["cancelled"]
        record.slot_counts = about["slotCounts"]
        record.runs = about["runs"]
        record.climbers = [
            {
                "key": c["key"],
                "label": c["label"],
                "status": c["status"],
                "blockedReason": c.get("blockedReason"),
                "currentRung": c.get("currentRung"),
                "reached": c["reached"],
                "totals": totals,
            }
            for c, totals in zip(bodies, record.climber_totals, strict=True)
        ]
        record.slots = [
            [
                [
                    s["status"],
                    [s["tally"][k] for k in document.TALLY] if s.get("tally") else None,
                    totals,
                ]
                for s, totals in zip(h["slots"], row, strict=True)
            ]
            for h, row in zip(held, record.slot_totals, strict=True)
        ]
        record.save()


class Migration(migrations.Migration):
    dependencies = [
        ("history", "0002_records_read_by_orjson"),
        ("ladders", "0013_final_standing_one_document"),
    ]

    operations = [
        migrations.AddField(
            model_name="dispatchrecord",
            name="standing",
            field=models.OneToOneField(
                db_constraint=False,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="record",
                to="ladders.finalstanding",
            ),
        ),
        migrations.AddField(
            model_name="dispatchrecord",
            name="climber_totals",
            field=ladders.fields.JSONDocument(default=list),
        ),
        migrations.AddField(
            model_name="dispatchrecord",
            name="slot_totals",
            field=ladders.fields.JSONDocument(default=list),
        ),
        migrations.RunPython(read_the_standing, hold_a_copy),
        migrations.AlterField(
            model_name="dispatchrecord",
            name="standing",
            field=models.OneToOneField(
                db_constraint=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="record",
                to="ladders.finalstanding",
            ),
        ),
        *(migrations.RemoveField(model_name="dispatchrecord", name=name) for name in MOVED),
    ]
