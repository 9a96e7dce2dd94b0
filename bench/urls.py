"""The benchmark server: the product's URLs plus the floor endpoints for pushes and claims."""

from django.db import connection
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


class FloorClaim(APIView):
    """A DRF endpoint that claims one queued job with one bare UPDATE … SKIP LOCKED: the floor
    a claim over HTTP is compared with."""

    def post(self, request):
        return Response({"id": claim_floor()})


urlpatterns = [
    path("bench/insert", FloorInsert.as_view()),
    path("bench/claim", FloorClaim.as_view()),
    *product,
]
