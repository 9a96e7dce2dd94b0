"""``manage.py serve --ingest N``: the drivers' pushes and claims on gunicorn processes of their
own, at a lower CPU priority than the processes people read boards from, each on its own
address."""

import json
import os
import urllib.request
from pathlib import Path

import pytest

from loopweb.runs.models import ApiToken
from tests.support.processes import Process, free_port, wait_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:  # noqa: S310 - ours
            return response.status == 200
    except OSError:
        return False


def niceness_of_processes_bound_to(address: str) -> set[int]:
    """The nice values of the gunicorn processes (master and workers) serving ``address``."""
    found = set()
    masters = set()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if b"gunicorn" in b" ".join(cmdline) and address.encode() in cmdline:
            masters.add(pid)
            found.add(int(stat[16]))  # field 19 of stat: nice
        elif stat[1] in masters:  # a worker of a master seen above
            found.add(int(stat[16]))
    return found


def test_drivers_are_served_apart_at_a_lower_priority(driver):
    web, ingest = f"127.0.0.1:{free_port()}", f"127.0.0.1:{free_port()}"
    serve = Process.manage(
        "serve", "--web", "1", "--threads", "2", "--workers", "0",
        "--ingest", "1", "--bind", web, "--ingest-bind", ingest,
        **{
            "DEBUG": "0",
            "SECRET_KEY": "test-only-secret-key-" + "x" * 40,
            "LOOPWEB_HTTPS": "0",
            "ALLOWED_HOSTS": "127.0.0.1",
            "DB_POOL": "0",
        },
    )  # fmt: skip
    try:
        serve.wait_for_line(f"drivers' web: gunicorn at http://{ingest}/, 1 process(es), nice 10")
        for address in (web, ingest):
            wait_until(lambda a=address: answers(f"http://{a}/healthz"), 60, address, serve)
        assert niceness_of_processes_bound_to(ingest) == {10}
        assert niceness_of_processes_bound_to(web) == {0}

        _, token = ApiToken.objects.issue(driver)
        request = urllib.request.Request(
            f"http://{ingest}/api/driver/claim",
            data=json.dumps({"max": 1}).encode(),
            headers={"Authorization": f"Token {token}", "Content-Type": "application/json"},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310 - ours
            assert response.status == 200 and json.loads(response.read()) == []
    finally:
        assert serve.stop() == 0, serve.output


def test_an_ingest_address_is_asked_for_when_the_web_address_has_no_port():
    from django.core.management import call_command
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="--ingest-bind"):
        call_command("serve", "--ingest", "1", "--bind", "unix:/tmp/loopweb.sock")
