"""The benchmark server: the product's URLs plus the floor endpoints for pushes and claims."""

import json

from django.db import connection, transaction
from django.urls import path
from rest_framework.response import Response
from rest_framework.views import APIView

from bench.floors import claim_floor
from loopweb.urls import urlpatterns as product


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
                " lease_holder_id = NULL, lease_expires_at = NULL WHERE id = %s",
                [job_id],
            )
            cursor.execute(
                "INSERT INTO signals_app_signal (run_id, signal_id, kind, name, value, unit,"
                " better, scale, observed_at, tier, source, recorded_at) VALUES (%s,"
                " 'runtime_s:1', 'score', 'runtime_s', %s, 's', 'lower', 'log', now(),"
                " 'measured', 'platform', now())",
                [run_id, json.dumps(runtime)],
            )
        return Response({"id": run_id}, status=201)


class FloorClaim(APIView):
    """A DRF endpoint that claims one queued job with one bare UPDATE … SKIP LOCKED: the floor
    a claim over HTTP is compared with."""

    def post(self, request):
        return Response({"id": claim_floor()})


urlpatterns = [
    path("bench/insert", FloorInsert.as_view()),
    path("bench/claim", FloorClaim.as_view()),
    path("bench/push", FloorPush.as_view()),
    *product,
]
