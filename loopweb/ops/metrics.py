"""/metrics: the counters and histograms every process records (``loopweb.telemetry``), plus
counts read from the database when the page is read.

Database counts (cheap: each reads a partial index or a handful of rows):

* ``loopweb_jobs{status}``: jobs in flight by status (terminal ones are counted as they end, in
  ``loopweb_jobs_ended_total``: counting them here would scan the whole table);
* ``loopweb_job_queue_depth`` and ``loopweb_oldest_queued_job_age_seconds``: jobs waiting for a
  driver, and how long the oldest has waited;
* ``loopweb_task_queue_depth`` and ``loopweb_oldest_ready_task_age_seconds``: background tasks
  due and waiting for a worker; ``loopweb_tasks_running``;
* ``loopweb_workers_alive`` and ``loopweb_dispatches_running``;
* per provider budget (labels ``budget``, ``provider``, ``model``: ``*`` for every model):
  ``loopweb_budget_in_flight``, ``loopweb_budget_started_last_minute`` and its effective caps
  now, after any back-off, ``loopweb_budget_in_flight_cap`` and ``loopweb_budget_per_minute_cap``
  (no sample for a cap it does not have), and ``loopweb_budget_backoff_factor`` (1: none).
"""

from __future__ import annotations

import os

from django.db.models import Count
from django.tasks import TaskResultStatus
from django.utils import timezone
from prometheus_client import REGISTRY, CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily

from loopweb.ops.recovery import live_workers

IN_FLIGHT = ("queued", "pending", "dispatched", "starting", "running")


class DatabaseCollector:
    def collect(self):
        from django_tasks_db.models import DBTaskResult

        from ladders.models import Dispatch, DispatchStatus
        from loopweb.runs.models import Job

        now = timezone.now()
        jobs = GaugeMetricFamily("loopweb_jobs", "Jobs in flight, by status.", labels=["status"])
        counts = dict.fromkeys(IN_FLIGHT, 0)
        counts.update(
            Job.objects.filter(status__in=IN_FLIGHT)
            .values_list("status")
            .annotate(n=Count("id"))
            .values_list("status", "n")
        )
        for status, count in counts.items():
            jobs.add_metric([status], count)
        yield jobs
        yield GaugeMetricFamily(
            "loopweb_job_queue_depth", "Jobs queued, waiting for a driver.", value=counts["queued"]
        )
        oldest = (
            Job.objects.filter(status="queued").order_by("id").values_list("created_at", flat=True)
        ).first()
        yield GaugeMetricFamily(
            "loopweb_oldest_queued_job_age_seconds",
            "How long the oldest queued job has waited for a driver (0: none waits).",
            value=(now - oldest).total_seconds() if oldest else 0.0,
        )
        ready = DBTaskResult.objects.ready()
        yield GaugeMetricFamily(
            "loopweb_task_queue_depth", "Background tasks due, waiting for a worker.",
            value=ready.count(),
        )  # fmt: skip
        first = ready.order_by("enqueued_at").values_list("enqueued_at", flat=True).first()
        yield GaugeMetricFamily(
            "loopweb_oldest_ready_task_age_seconds",
            "How long the oldest due task has waited for a worker (0: none waits).",
            value=(now - first).total_seconds() if first else 0.0,
        )
        yield GaugeMetricFamily(
            "loopweb_tasks_running",
            "Background tasks a worker is running.",
            value=DBTaskResult.objects.filter(status=TaskResultStatus.RUNNING).count(),
        )
        yield GaugeMetricFamily(
            "loopweb_workers_alive", "Task workers heard from recently.", value=len(live_workers())
        )
        yield GaugeMetricFamily(
            "loopweb_dispatches_running",
            "Ladder dispatches running.",
            value=Dispatch.objects.filter(status=DispatchStatus.RUNNING).count(),
        )
        yield from budget_metrics(now)


def budget_metrics(now):
    """Each provider budget's figures (two queries, one when there is none)."""
    from loopweb.runs.budgeting import figures
    from loopweb.runs.models import ProviderBudget

    labels = ["budget", "provider", "model"]
    families = {
        name: GaugeMetricFamily(f"loopweb_budget_{name}", text, labels=labels)
        for name, text in (
            ("in_flight", "Jobs of the budget drivers hold."),
            ("started_last_minute", "Jobs of the budget started in the rolling minute."),
            ("in_flight_cap", "The budget's in-flight cap now, after any back-off."),
            ("per_minute_cap", "The budget's per-minute cap now, after any back-off."),
            ("backoff_factor", "The share of its caps a back-off leaves the budget (1: none)."),
        )
    }
    budgets = list(ProviderBudget.objects.filter(enabled=True).order_by("pk"))
    found = figures(budgets, now)
    for budget in budgets:
        value = found[budget.pk]
        label = [str(budget.pk), budget.provider, budget.model or "*"]
        families["in_flight"].add_metric(label, value.in_flight)
        families["started_last_minute"].add_metric(label, value.started_last_minute)
        if value.in_flight_cap is not None:
            families["in_flight_cap"].add_metric(label, value.in_flight_cap)
        if value.per_minute_cap is not None:
            families["per_minute_cap"].add_metric(label, value.per_minute_cap)
        families["backoff_factor"].add_metric(label, value.factor)
    yield from families.values()


def process_registry() -> CollectorRegistry:
    """Every process of this machine when they share PROMETHEUS_MULTIPROC_DIR, else this one."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        return registry
    return REGISTRY


def exposition() -> bytes:
    database = CollectorRegistry(auto_describe=False)
    database.register(DatabaseCollector())
    return generate_latest(process_registry()) + generate_latest(database)


def serve_worker_metrics(port: int) -> None:
    """A worker on a machine with no web process serves its own counters (no database counts)."""
    from prometheus_client import start_http_server

    start_http_server(port, registry=process_registry())
