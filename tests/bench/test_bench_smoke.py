"""Every benchmark runs here at tiny sizes, so the harness cannot rot. Speed itself is measured
by `make bench`, never in the test suite."""

import pytest
from django.test import override_settings

from bench.suite import run_all

# The benchmarks build and vacuum PostgreSQL databases of their own.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]


@override_settings(ALLOWED_HOSTS=["127.0.0.1", "localhost", "testserver"])
def test_every_benchmark_runs_in_smoke_mode_and_reports_a_row():
    rows = run_all(smoke=True)
    names = [row.benchmark for row in rows]
    assert names[:5] == ["launch pass", "progress read", "progress read", "push", "claim"]
    # The same three through the production server (gunicorn, pooled connections), the push
    # twice: against one INSERT (no target) and against the contract's own writes, beside
    # which the same writes through the ORM are measured for reference (no target); and the
    # claims with provider budgets set.
    alone = "push, the contract's writes alone"
    assert names[5:11] == ["progress read", "push", "push", alone, "claim", "claim with budgets"]
    assert all("gunicorn" in row.data for row in rows[5:11])
    one_insert, contract, orm = rows[6:9]
    assert one_insert.met is None and "contract's writes" in contract.data
    assert contract.met is not None and orm.met is None and "ORM" in orm.data
    assert names.count("pass growth") == 2
    # The table-size rows: the pass and the progress read with many more unrelated runs.
    assert names[-2:] == ["launch pass", "progress read"]
    assert all("2,000 unrelated" in row.data for row in rows[-2:])
    claims = [row for row in rows if row.benchmark.startswith("claim")]
    assert len(claims) == 3
    assert all("0 double claims" in row.value for row in claims)
    # The history's reads, at the history's sizes, each within its query budget.
    history = [row for row in rows if row.benchmark.startswith("history: ")]
    assert [row.benchmark[len("history: ") :] for row in history] == [
        "history",
        "record",
        "record csv",
        "compare",
        "compare current",
        "chart",
        "history page",
    ]
    assert all("3 records" in row.data for row in history)
    # The pass's query count is flat across sizes: the same in both growth rows.
    growth = [row.value.split(", ")[1] for row in rows if row.benchmark == "pass growth"]
    assert growth[0] == growth[1]


def test_the_benchmark_server_leaves_the_url_configuration_as_it_found_it(settings):
    from bench.runner import Server

    before = settings.ROOT_URLCONF
    server = Server()
    server.close()
    assert settings.ROOT_URLCONF == before
