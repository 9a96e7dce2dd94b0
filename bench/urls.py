"""The benchmark server: the product's URLs plus the floor endpoints for pushes and claims."""

import json

from django.db import connection, transaction
from django.urls import path
from django.utils import timezone
from rest_framework.response import Response
from rest_framework.views import APIView

from bench.floors import claim_floor
from loopweb.runs.api import serializers
from loopweb.runs.models import Job, JobStatus, Run
from loopweb.urls import urlpatterns as product
from signals_app.models import Signal, Source
from signals_app.services import RUNTIME

#: The ``runtime_s`` signal a first push records from its record, as both floors write it; its
#: value and times are the push's own.
RUNTIME_SIGNAL = {"signal_id": "runtime_s:1", **RUNTIME, "source": Source.PLATFORM.value}


class FloorInsert(APIView):
    """A DRF endpoint that does one INSERT: the floor a push is compared with."""

    def post(self, request):
        with connection.cursor() as cursor:
            cursor.execute(
                "INSERT INTO bench_floor (body) VALUES (%s) RETURNING id", [str(request.data)]
            )
            (row_id,) = cursor.fetchone()
        return Response({"id": row_id}, status=201)


class FloorPush(APIView):
    """The contract's own writes for a push, as one transaction of SQL written by hand, behind
    the same authentication on the same server: the job locked and ended, the run row, its
    runtime signal, and the change marks the database's triggers write for both. What a push
    does beyond that (reading the record's rating and acceptance, the hooks, the pass it queues,
    the serializers) is what a push is measured against it for."""

    def post(self, request):
        job_id, record = int(request.data["job"]), request.data["record"]
        runtime = record.get("metrics", {}).get("runtime_s")
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(
                'SELECT "case", version, variant, engine, combination_id, combination_cell,'
                " cell_key, owner_id FROM runs_job WHERE id = %s FOR UPDATE",
                [job_id],
            )
            job = cursor.fetchone()
            cursor.execute(
                'INSERT INTO runs_run ("case", version, variant, engine, combination_id,'
                " combination_cell, cell_key, owner_id, job_id, pushed_by_id, outcome, record,"
                " build_loaded, validator_rating, counted, published, finished_at, commit,"
                " merge_artifact, created_at, updated_at)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, 'completed', %s, true,"
                " 'flawless', true, false, now(), '', '', now(), now()) RETURNING id",
                [
                    *job[:5],
                    json.dumps(job[5]),
                    *job[6:],
                    job_id,
                    request.user.pk,
                    json.dumps(record),
                ],
            )
            (run_id,) = cursor.fetchone()
            cursor.execute(
                "UPDATE runs_job SET status = 'completed', finished_at = now(), updated_at = now(),"
                " lease_expires_at = NULL WHERE id = %s",
                [job_id],
            )
            cursor.execute(
                f"INSERT INTO signals_app_signal (run_id, value, observed_at, recorded_at,"
                f" {', '.join(RUNTIME_SIGNAL)}) VALUES (%s, %s, now(), now(),"
                f" {', '.join(['%s'] * len(RUNTIME_SIGNAL))})",  # noqa: S608 - our own columns
                [run_id, json.dumps(runtime), *RUNTIME_SIGNAL.values()],
            )
        return Response({"id": run_id}, status=201)


class FloorPushOrm(APIView):
    """``FloorPush``'s writes through Django's ORM, the request read and the run answered by the
    push's own serializers: what the stack costs a push that does nothing else. Kept for
    reference, with no target."""

    def post(self, request):
        body = serializers.RunPushSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        record, now = body.validated_data["record"], timezone.now()
        with transaction.atomic():
            job = Job.objects.select_for_update().get(pk=body.validated_data["job"])
            run = Run.objects.create(
                job=job, owner_id=job.owner_id, **job.cell_fields(), pushed_by=request.user,
                outcome="completed", record=record, build_loaded=True,
                validator_rating="flawless", counted=True, finished_at=now,
            )  # fmt: skip
            job.status, job.finished_at, job.lease_expires_at = JobStatus.COMPLETED, now, None
            job.save()
            runtime = record.get("metrics", {}).get("runtime_s")
            Signal.objects.create(run=run, value=runtime, observed_at=now, **RUNTIME_SIGNAL)
        run.review_count, run.override_rows = 0, []  # as the push answers a run just stored
        return Response(serializers.RunSerializer(run).data, status=201)


class FloorClaim(APIView):
    """A DRF endpoint that claims one queued job with one bare UPDATE … SKIP LOCKED: the floor
    a claim over HTTP is compared with."""

    def post(self, request):
        return Response({"id": claim_floor()})


urlpatterns = [
    path("bench/insert", FloorInsert.as_view()),
    path("bench/claim", FloorClaim.as_view()),
    path("bench/push", FloorPush.as_view()),
    path("bench/push-orm", FloorPushOrm.as_view()),
    *product,
]
