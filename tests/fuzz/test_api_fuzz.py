"""API fuzzing: schemathesis generates requests from the served OpenAPI schema (valid and
invalid ones) and sends them over HTTP to a live server, as an owner and as a driver, and runs
every check it has (the CLI's ``-c all``) on every response.

The schema is the contract: a request it calls valid must be accepted and one it calls invalid
refused, every answer must be documented (status, content type, body, headers), nothing may be
a server error. The only failures tolerated are the rejections no schema can predict, listed in
``ALLOWED``: a reference to an object that does not exist and a conflict with what is already
stored. Anything else fails the test.

``LOOPWEB_FUZZ_EXAMPLES`` is the number of generated requests per operation and role (``make
fuzz`` sets 40; the default keeps ``make test`` quick). ``LOOPWEB_FUZZ_SEED`` picks the
generation seed (fixed by default, so a failure reproduces). Figures land in
``var/reliability/fuzz.json``.
"""

import json
import os
import time
from collections import Counter
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import CHECKS, load_all_checks
from schemathesis.core.failures import FailureGroup

from tests.fuzz.world import build_world

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.xdist_group("fuzz")]

EXAMPLES = int(os.environ.get("LOOPWEB_FUZZ_EXAMPLES", "2"))
SEED = int(os.environ.get("LOOPWEB_FUZZ_SEED", "20240601"))
REPORT = Path(os.environ.get("LOOPWEB_FUZZ_REPORT", "var/reliability/fuzz.json"))
ROLES = ("owner", "driver")

load_all_checks()
#: Every check schemathesis registers: what ``schemathesis run -c all`` runs.
ALL_CHECKS = list(CHECKS.get_all())

#: Error codes of a 400 no schema can predict: it names an object that does not exist, or
#: conflicts with one that does. Each is the only kind of failure tolerated, and only as a
#: rejection of data the schema calls valid.
ALLOWED = {
    "does_not_exist": "a reference to an object that does not exist (an id, an evalset hash, a "
    "user name, a rung id or climber key of the ladder, a role of the gg configuration)",
    "unique": "a uniqueness conflict with an object already stored, or between two items of "
    "the body that only the server can compare (two pins that are one pin once defaults are "
    "filled in, two signals with one id)",
    "kind_conflict": "a signal name whose kind conflicts with the run's signals, its stored "
    "rule, or another part of the same body (E195): state, or a relation between two values "
    "that JSON Schema cannot express",
    "clock": "a moment the server's clock or the object's own history rules out (ahead of the "
    "server's clock, before the proposal existed)",
    "host_not_allowed": "a webhook URL whose host the deployment's setting does not allow (a "
    "loopback or private address not listed in LOOPWEB_WEBHOOK_ALLOWED_HOSTS)",
    "criterion": "a rubric criterion whose max is not above its min, or whose step does not "
    "divide the range from min to max: relations between values JSON Schema cannot express",
    "rubric": "review values the ladder's stored rubric does not take (a criterion it does not "
    "have, a value off a criterion's scale or not among its labels, a required one left out): "
    "the rubric is state",
    "not_shared": "an assigned reviewer the ladder is not shared with (reviewers): a relation "
    "between two fields JSON Schema cannot express",
    "not_validator_rated": "a rung pinning a stored case version that is legacy, or of a "
    "performance or game jam case (one the fuzzer may have created itself): the kind is state",
}


#: Errors the ladder engine raises without a code of their own, by what they say.
ALLOWED_MESSAGES = {
    "This rung id does not belong to the ladder.": "does_not_exist",
    "Give every rung id of the ladder exactly once": "does_not_exist",
    "The dispatch has no climber with key": "does_not_exist",
    "No evalset has the hash": "does_not_exist",
    "A rung must be validator-rated": "not_validator_rated",
}
#: What an E195 error says when it is a conflict between names, not a malformed value.
KIND_CONFLICTS = ("a name keeps the kind", "in the acceptance rule of", "in this rule's")


def allowed(failure, response) -> str | None:
    """The ALLOWED category of a failure, or None when it is a real one. Only a 400 refusing
    data the schema calls valid may be allowed, and only for what its error says."""
    if type(failure).__name__ != "RejectedPositiveData" or response.status_code != 400:
        return None
    try:
        body = response.json()
    except ValueError:
        return None
    code, detail = body.get("code"), str(body.get("detail", ""))
    if code == "E195" and any(mark in detail for mark in KIND_CONFLICTS):
        return "kind_conflict"
    if code in ALLOWED and code != "kind_conflict":
        return code
    return next((kind for text, kind in ALLOWED_MESSAGES.items() if text in detail), None)


class Tally:
    def __init__(self):
        self.requests = 0
        self.by_status = Counter()
        self.by_role = Counter()
        self.by_mode = Counter()
        self.allowed = Counter()
        self.failures: list[dict] = []

    def as_json(self) -> dict:
        return {
            "requests": self.requests,
            "byStatus": {str(k): v for k, v in sorted(self.by_status.items())},
            "byRole": dict(self.by_role),
            "byMode": dict(self.by_mode),
            "allowed": dict(self.allowed),
            "failures": self.failures,
        }


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


def fuzz_operation(operation, role, world, base_url, tally: Tally) -> None:
    strategies = _strategies(operation)
    known = _known_values(world, operation.path)
    auth = world.auth_headers(role)

    @seed(SEED)
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(data=st.data())
    def run(data):
        case = data.draw(st.one_of(strategies), label="case")
        negative = case.meta is not None and case.meta.generation.mode.is_negative
        # Half the valid requests address real objects; an invalid one keeps what made it so.
        if known and not negative and data.draw(st.booleans(), label="known object"):
            case.path_parameters = {
                **(case.path_parameters or {}),
                **{name: data.draw(st.sampled_from(values)) for name, values in known.items()},
            }
        response = case.call(base_url=base_url, headers=auth, timeout=60)
        tally.requests += 1
        tally.by_status[response.status_code] += 1
        tally.by_role[role] += 1
        tally.by_mode[str(case.meta.generation.mode) if case.meta else "explicit"] += 1
        try:
            case.validate_response(response, checks=ALL_CHECKS, headers=auth)
        except FailureGroup as exc:
            for failure in exc.exceptions:
                category = allowed(failure, response)
                if category is not None:
                    tally.allowed[category] += 1
                    continue
                tally.failures.append(
                    {
                        "operation": operation.label,
                        "role": role,
                        "status": response.status_code,
                        "check": type(failure).__name__,
                        "title": failure.title,
                        "message": failure.message[:600],
                        "request": f"{case.method} {response.request.url} "
                        f"{(response.request.body or b'')[:3000]!r}",
                        "response": response.text[:400],
                    }
                )

    run()


def test_generated_requests_meet_every_check_of_the_schema(live_server):
    world = build_world()
    schema = schemathesis.openapi.from_url(
        f"{live_server.url}/api/schema/", headers={"Accept": "application/vnd.oai.openapi+json"}
    )
    operations = sorted(
        (result.ok() for result in schema.get_all_operations()),
        key=lambda op: (op.path, op.method),
    )
    assert len(operations) >= 60, [op.label for op in operations]
    tally = Tally()
    started = time.monotonic()
    for operation in operations:
        for role in ROLES:
            fuzz_operation(operation, role, world, live_server.url, tally)
    elapsed = time.monotonic() - started

    report = {
        "examplesPerOperationAndRole": EXAMPLES,
        "seed": SEED,
        "operations": len(operations),
        "checks": [check.__name__ for check in ALL_CHECKS],
        "seconds": round(elapsed, 1),
        **tally.as_json(),
    }
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    REPORT.write_text(json.dumps(report, indent=2))
    print(
        f"\nfuzz: {tally.requests} requests over {len(operations)} operations as "
        f"{' and '.join(ROLES)} in {elapsed:.1f}s; statuses "
        f"{dict(sorted(tally.by_status.items()))}; allowed {dict(tally.allowed)}; "
        f"failures {len(tally.failures)}"
    )
    assert not tally.failures, "\n\n".join(
        f"{f['operation']} as {f['role']} → {f['status']} [{f['check']}] {f['title']}\n"
        f"{f['message']}\n{f['request']}\n{f['response']}"
        for f in tally.failures[:30]
    )
    assert tally.requests >= EXAMPLES * len(operations)
