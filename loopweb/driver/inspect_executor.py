"""Run a job as an Inspect AI evaluation: ``loopweb-driver --inspect TASKS`` (docs/drivers.md).

``TASKS`` names a module holding:

- ``TASKS``: case slug → Inspect task. A key is ``slug``, ``slug@version``, ``slug/variant`` or
  ``slug@version/variant``; the most specific key matching the job's cell wins. A value is a
  ``Task``, a function returning one (an ``@task`` function), or anything ``inspect_ai.eval``
  takes as a task (a registry name, a file).
- ``MODELS``: combination → Inspect model, looked up by the combination's ``key``, then
  ``provider/model``, then ``model``. A value is a model name (``openai/gpt-4o``), an Inspect
  ``Model``, or a function of the job returning either. A combination not in the map whose model
  already reads ``provider/model`` is used as it is.
- ``EVAL`` (optional): more keyword arguments for ``inspect_ai.eval_async`` (``max_retries``,
  ``sandbox_cleanup``, ``model_cost_config``, limits, ...).

What the evaluation becomes (the mapping docs/drivers.md documents): each scorer ``S`` gives the
checklist item ``S`` (every sample correct) and ``S:<sample id>`` (that sample correct); tokens
and cost are Inspect's model usage; the ``.eval`` log is the artifact ``inspect-log``. Inspect's
errors become failures: a provider's 429 before any token was used releases the job
(``RateLimited``), a sandbox failure is ``infrastructure``, any other error ``harnessError``.

Inspect is imported when the first job runs, so the plain client stays standard library only.
Inspect runs one evaluation at a time in a process.
"""

from __future__ import annotations

import asyncio
import importlib
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from loopweb.driver.client import Failure, Job, RateLimited, RunResult

#: Inspect allows one evaluation at a time in a process.
_one_evaluation = threading.Lock()
#: How often a running evaluation looks at its job's cancellation.
WATCH_EVERY = 0.2

_RATE_LIMITED = re.compile(r"\b429\b|rate.?limit|too many requests", re.IGNORECASE)
_RETRY_AFTER = re.compile(r"retry.?after\D{0,8}?(\d+(?:\.\d+)?)", re.IGNORECASE)
_SANDBOX = re.compile(r"sandbox|docker|kubernetes|\bk8s\b", re.IGNORECASE)
_TIME_LIMITS = {"time", "working"}


def classify(text: str) -> tuple[str, float | None]:
    """The failure kind an Inspect error's text reads as, and the provider's Retry-After:
    ``rateLimited`` (a 429), ``infrastructure`` (the sandbox) or ``harnessError``."""
    if _RATE_LIMITED.search(text):
        after = _RETRY_AFTER.search(text)
        return "rateLimited", float(after.group(1)) if after else None
    if _SANDBOX.search(text):
        return "infrastructure", None
    return "harnessError", None


def passed(value: Any) -> bool:
    """Whether a sample's score value is correct: ``C``, ``True``, or a number of 1 or more."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return value >= 1
    return isinstance(value, str) and value.upper() == "C"


@dataclass
class InspectExecutor:
    """``execute(job)`` for ``Driver.serve``: one job, one Inspect evaluation."""

    tasks: Mapping[str, Any]
    models: Mapping[str, Any] | Callable[[Job], Any]
    eval_args: Mapping[str, Any] = field(default_factory=dict)
    #: Where Inspect writes its logs: a directory or a URL Inspect writes to (``s3://…``).
    log_dir: str = "logs"
    #: The public address of ``log_dir`` for the artifact's link (its name appended), if any.
    log_url: str | None = None

    @classmethod
    def from_module(cls, name: str, **options: Any) -> InspectExecutor:
        module = importlib.import_module(name)
        if not isinstance(getattr(module, "TASKS", None), Mapping):
            raise ValueError(f"{name} has no TASKS mapping case slugs to Inspect tasks")
        return cls(
            tasks=module.TASKS,
            models=getattr(module, "MODELS", {}),
            eval_args=getattr(module, "EVAL", {}),
            **{k: v for k, v in options.items() if v is not None},
        )

    # What to evaluate --------------------------------------------------------------------------

    def task_for(self, job: Job) -> Any:
        case, version, variant = job.case, job.data.get("version"), job.data.get("variant")
        for key in (f"{case}@{version}/{variant}", f"{case}@{version}", f"{case}/{variant}", case):
            if key in self.tasks:
                found = self.tasks[key]
                return found() if callable(found) and not _is_task(found) else found
        raise Failure(
            "infrastructure", f"this driver has no Inspect task for case {case} version {version}"
        )

    def model_for(self, job: Job) -> Any:
        combination = job.data.get("combination") or {}
        model, provider = combination.get("model") or "", combination.get("provider") or ""
        if callable(self.models):
            found = self.models(job)
        else:
            keys = (combination.get("key"), f"{provider}/{model}", model)
            found = next((self.models[k] for k in keys if k and k in self.models), None)
            if found is None and "/" in model:
                found = model
        if callable(found):
            found = found(job)
        if not found:
            label = combination.get("label") or combination.get("key") or model
            raise Failure("infrastructure", f"this driver maps no Inspect model to {label}")
        return found

    # Running -----------------------------------------------------------------------------------

    def __call__(self, job: Job) -> RunResult:
        task, model = self.task_for(job), self.model_for(job)
        with _one_evaluation:
            if job.cancelled.is_set() or job.stopping.is_set():
                raise Failure("canceled", "cancelled before the evaluation started")
            started = time.monotonic()
            log = _run(self._evaluate(job, task, model))
            seconds = time.monotonic() - started
        if log is None or log.status == "cancelled":
            raise Failure("canceled", "the evaluation was cancelled")
        if log.status != "success":
            self._raise_error(log)
        return RunResult(outcome=_outcome(log), record=self.record_of(log, seconds))

    async def _evaluate(self, job: Job, task: Any, model: Any) -> Any:
        from inspect_ai import eval_async
        from inspect_ai.util._display import init_display_type as quiet

        quiet("none")
        evaluation = asyncio.ensure_future(
            eval_async(task, model=model, log_dir=self.log_dir, **dict(self.eval_args))
        )
        while not evaluation.done():
            if job.cancelled.is_set() or job.stopping.is_set():
                evaluation.cancel()
                break
            await asyncio.sleep(WATCH_EVERY)
        try:
            logs = await evaluation
        except asyncio.CancelledError:
            return None
        return logs[0] if logs else None

    def _raise_error(self, log: Any) -> None:
        errors = [log.error] + [s.error for s in (log.samples or []) if s.error]
        texts = [f"{e.message}\n{e.traceback}" for e in errors if e is not None]
        text = "\n".join(texts) or f"the evaluation ended {log.status}"
        kind, retry_after = classify(text)
        detail = errors[0].message if errors and errors[0] is not None else text
        detail = detail[:500]
        if kind == "rateLimited":
            if not _tokens(log):
                raise RateLimited(retry_after=retry_after, detail=detail)
            # The model had worked: this attempt counts, and the server retries it.
            raise Failure("infrastructure", f"rate limited during the run: {detail}")
        raise Failure(kind, detail)

    # The run record ----------------------------------------------------------------------------

    def record_of(self, log: Any, seconds: float | None = None) -> dict:
        return {
            "checklist": checklist_of(log),
            "toolchain": {"build": "ok", "loaded": True},
            "metrics": metrics_of(log, seconds),
            "artifacts": [{"name": "inspect-log", "url": self.url_of(log.location)}],
            "inspect": {
                "status": log.status,
                "task": log.eval.task,
                "model": log.eval.model,
                "scores": {
                    s.name: {m.name: m.value for m in s.metrics.values()}
                    for s in (log.results.scores if log.results else [])
                },
            },
        }

    def url_of(self, location: str) -> str:
        if not self.log_url:
            return location
        return f"{self.log_url.rstrip('/')}/{location.replace('\\', '/').rsplit('/', 1)[-1]}"


def checklist_of(log: Any) -> dict[str, bool]:
    """``S`` and ``S:<sample id>`` for each scorer ``S``; a dict-valued score ``S`` gives
    ``S.<key>`` and ``S.<key>:<sample id>`` for each of its keys."""
    items: dict[str, bool] = {}
    for sample in log.samples or []:
        for scorer, score in (sample.scores or {}).items():
            values = score.value if isinstance(score.value, dict) else {None: score.value}
            for key, value in values.items():
                name = scorer if key is None else f"{scorer}.{key}"
                ok = passed(value)
                items[name] = items.get(name, True) and ok
                items[f"{name}:{sample.id}"] = ok
    return items


def metrics_of(log: Any, seconds: float | None = None) -> dict:
    """Tokens and cost from Inspect's model usage; the time the evaluation took (``seconds``
    as measured, else from the log's start and end, which it keeps to the second)."""
    usage = (log.stats.model_usage or {}).values()
    metrics: dict[str, Any] = {
        "input_tokens": sum(u.input_tokens or 0 for u in usage),
        "output_tokens": sum(u.output_tokens or 0 for u in usage),
    }
    costs = [u.total_cost for u in usage if u.total_cost is not None]
    if costs:
        metrics["usd_micros"] = round(sum(costs) * 1_000_000)
    started, completed = log.stats.started_at, log.stats.completed_at
    if seconds is None and started and completed:
        seconds = (
            datetime.fromisoformat(completed) - datetime.fromisoformat(started)
        ).total_seconds()
    if seconds is not None:
        metrics["runtime_s"] = round(seconds, 3)
        metrics["wall_ms"] = round(seconds * 1000)
    return metrics


def _tokens(log: Any) -> int:
    usage = (log.stats.model_usage or {}).values() if log.stats else []
    return sum((u.input_tokens or 0) + (u.output_tokens or 0) for u in usage)


def _outcome(log: Any) -> str:
    limits = {s.limit.type for s in log.samples or [] if getattr(s, "limit", None)}
    if limits & _TIME_LIMITS:
        return "timedOut"
    return "limitExceeded" if limits else "completed"


def _is_task(value: Any) -> bool:
    return type(value).__name__ == "Task"


def _run(coroutine: Any) -> Any:
    """``asyncio.run`` of the evaluation; on a thread of its own when this thread's event loop
    is running already (a driver embedded in an asynchronous program), which may run no other."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        running = False
    else:
        running = True
    if not running:  # outside the except block: nothing raised in it has that error as context
        return asyncio.run(coroutine)
    found: dict[str, Any] = {}

    def apart() -> None:
        try:
            found["log"] = asyncio.run(coroutine)
        except BaseException as exc:  # noqa: BLE001 - raised below, in the caller's thread
            found["error"] = exc

    thread = threading.Thread(target=apart, name="inspect-evaluation")
    thread.start()
    thread.join()
    if "error" in found:
        raise found["error"]
    return found.get("log")
