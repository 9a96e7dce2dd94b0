"""A lost server or database is one line when it goes and one when it is back, however many
threads find it gone; the driver client, the web processes and the task workers share the one
logger that says so (``loopweb.driver.outage``)."""

import logging
import threading

from loopweb.driver import client
from loopweb.driver.outage import Outage
from loopweb.ops import database, middleware


def test_many_callers_finding_it_gone_write_one_line_and_one_when_it_is_back(caplog):
    caplog.set_level(logging.DEBUG, logger="loopweb.test")
    outage = Outage(
        "thing", event="thing", meanwhile="waiting", log=logging.getLogger("loopweb.test")
    )
    firsts = []
    barrier = threading.Barrier(8)

    def find_it_gone():
        barrier.wait()
        firsts.append(outage.lost("refused"))

    threads = [threading.Thread(target=find_it_gone) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(firsts) == [False] * 7 + [True]
    away = outage.back()
    assert away is not None and away >= 0
    assert outage.back() is None  # reached again, nothing more to say
    lines = [(r.getMessage(), r.event) for r in caplog.records if r.levelno >= logging.WARNING]
    assert lines[0] == ("thing unreachable (refused); waiting", "thing.lost")
    assert lines[1][0].startswith("thing reachable again after") and lines[1][1] == "thing.back"
    assert len(lines) == 2


def test_the_driver_the_web_and_the_worker_use_the_same_outage_logger():
    assert isinstance(client._outage_of("http://127.0.0.1:9"), Outage)
    assert isinstance(middleware.outage, Outage)
    assert isinstance(database.outage, Outage)
    assert middleware.outage.event == database.outage.event == "database"
