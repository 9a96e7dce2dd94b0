"""Change capture by the database (``loopweb.runs.capture``): a write to a table a board reads
records its key in the writing transaction, whoever writes it: a service, the admin's ORM
update, a data migration or raw SQL. A write that changes nothing a board reads records nothing.
"""

import importlib
import pkgutil

import pytest
from django.db import connection
from django.utils import timezone

from ladders import migrations as ladder_migrations
from ladders import services
from ladders.models import CAPTURED as LADDERS
from ladders.models import Dispatch
from loopweb.runs import capture, changes
from loopweb.runs.models import Change, Job, Run
from signals_app.models import CAPTURED as SIGNALS
from tests.factories import CaseVersionFactory, CombinationFactory, ModelEntryFactory
from tests.ladders.builders import climbers, make_ladder, versions
from tests.runs.helpers import claim, finish, hand_job

pytestmark = pytest.mark.django_db

DECLARED = capture.CAPTURED + SIGNALS + LADDERS


def recorded() -> list[str]:
    return list(Change.objects.order_by("id").values_list("key", flat=True))


@pytest.fixture
def run(owner, driver) -> Run:
    return finish(driver, hand_job(owner, CaseVersionFactory(), CombinationFactory()))


def test_an_orm_update_of_a_run_is_recorded_under_its_cell(run):
    Change.objects.all().delete()
    Run.objects.filter(pk=run.pk).update(validator_rating="broken")  # as the admin or a script
    assert recorded() == [run.cell_key]


def test_a_raw_sql_update_of_a_run_is_recorded_under_its_cell(run):
    Change.objects.all().delete()
    with connection.cursor() as cursor:
        cursor.execute("UPDATE runs_run SET published = NOT published WHERE id = %s", [run.pk])
    assert recorded() == [run.cell_key]


def test_a_run_moved_to_another_cell_is_recorded_under_both(run):
    Change.objects.all().delete()
    Run.objects.filter(pk=run.pk).update(cell_key="elsewhere")
    assert sorted(recorded()) == sorted([run.cell_key, "elsewhere"])


def test_a_renewed_lease_records_nothing_and_a_new_status_records_the_cell(owner, driver):
    job = claim(driver, hand_job(owner, CaseVersionFactory(), CombinationFactory()))
    Change.objects.all().delete()
    Job.objects.filter(pk=job.pk).update(lease_expires_at=timezone.now())
    assert recorded() == []
    Job.objects.filter(pk=job.pk).update(status="running")
    assert recorded() == [job.cell_key]


@pytest.mark.postgres  # statement triggers; SQLite's row triggers record each row's key
def test_one_statement_records_each_key_once(owner):
    version, combination = CaseVersionFactory(), CombinationFactory()
    jobs = [hand_job(owner, version, combination) for _ in range(3)]
    Change.objects.all().delete()
    Job.objects.filter(pk__in=[j.pk for j in jobs]).update(status="canceled")
    assert recorded() == [jobs[0].cell_key]


def test_a_review_and_a_signal_are_recorded_under_their_runs_cell(run, owner):
    from loopweb.runs.services import review_run
    from signals_app.models import Signal

    Change.objects.all().delete()
    review_run(run=run, reviewer=owner, aesthetic_rating=3, writeup="")
    reviewed = recorded()
    assert run.cell_key in reviewed
    Change.objects.all().delete()
    Signal.objects.filter(run=run).update(tier="asserted")
    assert set(recorded()) <= {run.cell_key}


def test_a_catalog_entry_written_any_way_is_recorded_as_the_catalog():
    entry = ModelEntryFactory()
    Change.objects.all().delete()
    type(entry).objects.filter(pk=entry.pk).update(launchable=False)
    assert recorded() == [changes.CATALOG]


def test_a_pass_counting_itself_records_nothing_and_a_stop_records_the_ladder(owner):
    ladder = make_ladder(owner, versions(1), climbers(1))
    services.start_dispatch(ladder=ladder, run_pass=False)
    Change.objects.all().delete()
    Dispatch.objects.filter(ladder=ladder).update(passes=7, needs_attention=True)
    assert recorded() == []
    Dispatch.objects.filter(ladder=ladder).update(status="stopped")
    assert recorded() == [changes.ladder_key(ladder.pk)]


def test_the_database_holds_the_triggers_every_declaration_makes():
    if connection.vendor == "postgresql":
        sql = "SELECT tgname FROM pg_trigger WHERE NOT tgisinternal"
    else:
        sql = "SELECT name FROM sqlite_master WHERE type = 'trigger'"
    with connection.cursor() as cursor:
        cursor.execute(sql)
        installed = {row[0] for row in cursor.fetchall()}
    expected = {
        f"{spec.name}_{event}" for spec in DECLARED for event in ("insert", "update", "delete")
    }
    assert expected <= installed


def test_the_latest_capture_migration_installs_the_declarations_as_they_are():
    """A declaration changed without a migration that installs it again fails here: write one
    calling ``capture.install`` with ``CAPTURE_DIGEST = capture.digest(...)``."""
    digests = {}
    for module in pkgutil.iter_modules(ladder_migrations.__path__):
        migration = importlib.import_module(f"{ladder_migrations.__name__}.{module.name}")
        if hasattr(migration, "CAPTURE_DIGEST"):
            digests[module.name] = migration.CAPTURE_DIGEST
    assert digests, "no migration installs the change capture"
    assert digests[max(digests)] == capture.digest(DECLARED)


def test_stamps_never_go_back_when_the_counter_row_is_gone(run):
    """SQLite draws stamps from the counter row. A flush deletes tables one by one, and deleting
    a captured table records changes after the changes were emptied: the counter row, gone too,
    starts again above every stamp recorded, or a reader would take those for changes yet to
    come and no version would ever be current again."""
    from loopweb.runs.models import ChangeHorizon

    if connection.vendor == "postgresql":
        pytest.skip("PostgreSQL stamps with transaction ids: no counter row")
    ChangeHorizon.objects.all().delete()
    left = max(Change.objects.values_list("stamp", flat=True))
    Run.objects.filter(pk=run.pk).update(validator_rating="broken")
    assert Change.objects.order_by("-id").values_list("stamp", flat=True)[0] > left
    assert changes.visible(left, changes.counter_token())
