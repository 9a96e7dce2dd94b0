"""API fuzzing: schemathesis generates requests from the served OpenAPI schema (valid and
invalid ones) and sends them in-process to the WSGI application, as each of the five callers.

Every response must be free of server errors and conform to the schema: a documented status
code, a documented content type, and a body that validates against the documented schema.
Requests made invalid that the API accepted anyway are counted in the report, not failed (see
``accepted_invalid_input``).

The budget is ``LOOPWEB_FUZZ_EXAMPLES`` generated requests in all (``make fuzz`` sets 2,000; the
default keeps ``make test`` quick), spread evenly over the operations. ``LOOPWEB_FUZZ_SEED``
picks the generation seed (fixed by default, so a failure reproduces).
"""

import json
import math
import os
import time
from collections import Counter
from pathlib import Path

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.core.failures import FailureGroup
from schemathesis.core.parameters import ParameterLocation
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_schema_conformance,
    status_code_conformance,
)

from loopweb.wsgi import application
from tests.fuzz.world import ROLES, build_world

pytestmark = [pytest.mark.django_db, pytest.mark.xdist_group("fuzz")]

BUDGET = int(os.environ.get("LOOPWEB_FUZZ_EXAMPLES", "200"))
SEED = int(os.environ.get("LOOPWEB_FUZZ_SEED", "20240601"))
REPORT = Path(os.environ.get("LOOPWEB_FUZZ_REPORT", "var/reliability/fuzz.json"))
QUERY = ParameterLocation.QUERY


CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]


def accepted_invalid_input(case, response) -> str | None:
    """What schemathesis's ``negative_data_rejection`` says of a request it made invalid in its
    body or path and that was accepted: reported, not failed. The API normalises some input on
    purpose (surrounding whitespace is trimmed, a form body that is not a set of fields reads as
    none, an unusable ``pageSize`` falls back to the default), and the tool counts an astral
    character as two where the API counts one; every kind seen is reviewed in
    docs/reliability.md."""
    meta = case.meta
    if meta is None or not meta.generation.mode.is_negative:
        return None
    if not any(meta.is_negative_at(loc) for loc in meta.components if loc != QUERY):
        return None
    try:
        case.validate_response(response, checks=[negative_data_rejection])
    except FailureGroup as exc:
        return str(exc).split("Invalid component:", 1)[-1].split("\n", 1)[0].strip()
    return None


@pytest.fixture
def in_process_requests():
    """Requests are served in the test's own transaction: the handler must not close the
    connection at the end of each request, as Django's test client arranges too."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def world(in_process_requests):
    return build_world()


@pytest.fixture
def api_schema(world):
    return schemathesis.openapi.from_wsgi(
        "/api/schema/", application, headers={"Accept": "application/vnd.oai.openapi+json"}
    )


def _operations(schema):
    operations = [result.ok() for result in schema.get_all_operations()]
    return sorted(operations, key=lambda op: (op.path, op.method))


def _strategies(operation):
    strategies = []
    for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
        try:
            strategies.append(operation.as_strategy(generation_mode=mode))
        except Exception:  # noqa: BLE001, S112 - an operation with nothing to negate
            continue
    return strategies


def _known_values(world, path: str) -> dict[str, list]:
    for prefix, values in world.path_values().items():
        if path.startswith(prefix):
            return values
    return {}


class Tally:
    def __init__(self):
        self.requests = 0
        self.by_status = Counter()
        self.by_role = Counter()
        self.by_mode = Counter()
        self.failures: list[dict] = []
        self.lenient: list[str] = []

    def as_json(self) -> dict:
        return {
            "requests": self.requests,
            "byStatus": dict(sorted(self.by_status.items())),
            "byRole": dict(self.by_role),
            "byMode": dict(self.by_mode),
            "failures": self.failures,
            "acceptedInvalidInput": len(self.lenient),
            "acceptedInvalidInputSamples": sorted(set(self.lenient))[:50],
        }


def fuzz_operation(operation, world, examples: int, tally: Tally) -> None:
    strategies = _strategies(operation)
    known = _known_values(world, operation.path)

    @seed(SEED)
    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(data=st.data())
    def run(data):
        role = data.draw(st.sampled_from(ROLES), label="role")
        case = data.draw(st.one_of(strategies), label="case")
        if known and data.draw(st.booleans(), label="known object"):
            case.path_parameters = {
                **(case.path_parameters or {}),
                **{name: data.draw(st.sampled_from(values)) for name, values in known.items()},
            }
        response = case.call(headers=world.auth_headers(role))
        tally.requests += 1
        tally.by_status[response.status_code] += 1
        tally.by_role[role] += 1
        tally.by_mode[str(case.meta.generation.mode) if case.meta else "explicit"] += 1
        lenient = accepted_invalid_input(case, response)
        if lenient:
            body = repr(case.body)[:160]
            tally.lenient.append(
                f"{operation.label} ({response.status_code}): {lenient}; body {body}"
            )
        try:
            case.validate_response(response, checks=CHECKS)
        except FailureGroup as exc:  # collected, and reported all at once
            tally.failures.append(
                {
                    "operation": operation.label,
                    "role": role,
                    "status": response.status_code,
                    "failure": str(exc)[:2000],
                }
            )

    run()


def test_generated_requests_meet_no_server_error_and_no_schema_violation(api_schema, world):
    operations = _operations(api_schema)
    assert len(operations) >= 60, [op.label for op in operations]
    examples = max(1, math.ceil(BUDGET / len(operations)))
    tally = Tally()
    started = time.monotonic()
    for operation in operations:
        fuzz_operation(operation, world, examples, tally)
    elapsed = time.monotonic() - started

    report = {
        "budget": BUDGET,
        "seed": SEED,
        "operations": len(operations),
        "seconds": round(elapsed, 1),
        **tally.as_json(),
    }
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    REPORT.write_text(json.dumps(report, indent=2))
    print(
        f"\nfuzz: {tally.requests} requests over {len(operations)} operations in {elapsed:.1f}s; "
        f"statuses {dict(sorted(tally.by_status.items()))}; failures {len(tally.failures)}"
    )
    assert not tally.failures, "\n\n".join(
        f"{f['operation']} as {f['role']} → {f['status']}\n{f['failure']}"
        for f in tally.failures[:20]
    )
    assert tally.requests >= BUDGET
