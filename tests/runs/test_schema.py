"""API.md: the OpenAPI schema served at /api/schema/ describes the run substrate's endpoints."""

import pytest
from django.urls import include, path
from drf_spectacular.drainage import GENERATOR_STATS
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.validation import validate_schema

pytestmark = pytest.mark.django_db

RUNS_PATHS = [
    "/api/auth/token",
    "/api/cases/",
    "/api/cases/{slug}/",
    "/api/cases/{slug}/versions/",
    "/api/models/",
    "/api/models/{id}/",
    "/api/gg-configurations/",
    "/api/gg-configurations/{id}/",
    "/api/combinations/",
    "/api/groups/",
    "/api/groups/{id}/",
    "/api/jobs/",
    "/api/jobs/{id}/",
    "/api/jobs/{id}/cancel",
    "/api/driver/claim",
    "/api/driver/jobs/{job_id}/status",
    "/api/driver/jobs/{job_id}/fail",
    "/api/runs/",
    "/api/runs/{id}/",
    "/api/runs/{id}/reviews",
]


def test_the_runs_endpoints_make_a_valid_schema_without_warnings_or_errors():
    GENERATOR_STATS.reset()
    generator = SchemaGenerator(patterns=[path("api/", include("loopweb.runs.api.urls"))])

    schema = generator.get_schema(request=None, public=True)

    assert not GENERATOR_STATS, (
        dict(GENERATOR_STATS._warn_cache),
        dict(GENERATOR_STATS._error_cache),
    )
    validate_schema(schema)
    assert set(RUNS_PATHS) <= set(schema["paths"])
    assert "/api/jobs/{id}/cancel/" not in schema["paths"]  # one spelling of each path


def test_the_schema_is_served_and_describes_the_driver_protocol(anon_api):
    response = anon_api.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")

    assert response.status_code == 200
    schema = response.json()
    assert set(RUNS_PATHS) <= set(schema["paths"])
    claim = schema["paths"]["/api/driver/claim"]["post"]
    assert "200" in claim["responses"]
    assert schema["components"]["securitySchemes"]["tokenAuth"]["in"] == "header"


def test_the_api_docs_page_is_served(anon_api):
    response = anon_api.get("/api/docs/")

    assert response.status_code == 200
    assert b"swagger" in response.content.lower()
