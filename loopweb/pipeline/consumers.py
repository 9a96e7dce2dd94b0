"""Every hook's consumers, in the order they run, with the locks each takes; and a push, the
busiest transaction that sends them, step by step. Read here, the whole transaction is in one
place.

The run substrate (``loopweb.runs.hooks``) and the ladder engine (``ladders.lifecycle``) send
hooks inside their transactions and name no app above them. This module, above every app, names
each hook's consumers in the order they run (``HOOKS``), and ``connect`` connects them so at
startup (``loopweb.pipeline.apps``): no app connects a hook in its own ``ready()``, and the order
owes nothing to ``INSTALLED_APPS``. ``check`` (a system check) and tests/test_architecture.py
refuse a consumer connected anywhere else, or out of this order. docs/architecture.md ("The hooks
and their receivers", "A push, step by step", "Locks") says the same in prose.
"""

import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from django.core import checks
from django.dispatch import Signal

from evalsets import receivers as evalsets
from ladders import lifecycle
from ladders import receivers as ladders
from loopweb.history import receivers as history
from loopweb.ops import events as ops
from loopweb.reviewing import receivers as reviewing
from loopweb.runs import hooks
from loopweb.webhooks import receivers as webhooks
from signals_app import receivers as signals


class Lock(IntEnum):
    """The locks a transaction that sends a hook takes, in the one order every transaction takes
    them (docs/decisions/0071-the-ladder-engines-lock-order.md): none is taken while a lock of a
    later kind is held, so no two transactions wait on each other in opposite orders."""

    #: A ladder's row: a configuration saved, Run.
    LADDER = 1
    #: The dispatch lock: Run, Stop and Retry hold it exclusively, a launch pass ``FOR NO KEY
    #: UPDATE``, the end of a ladder job's attempt shares it (``FOR KEY SHARE``).
    DISPATCH = 2
    #: Climber rows; with early stop, an attempt's end shares the one holding its cell.
    CLIMBER = 3
    #: The job whose attempt ends (``FOR UPDATE``); the jobs a pass or a Stop cancels.
    JOB = 4
    #: A re-pushed run (``FOR UPDATE``); the run a signal is appended to (``FOR NO KEY UPDATE``).
    RUN = 5
    #: The review settings of the ladders whose backlog is counted, in ladder id order.
    REVIEW_SETTINGS = 6
    #: A launch pass's per-cell advisory locks, in one global order, held to its end.
    CELLS = 7


@dataclass(frozen=True)
class Consumer:
    """One consumer of a hook: the function it runs, what it does and the locks it takes."""

    receiver: Callable[..., Any]
    does: str
    locks: tuple[Lock, ...] = ()

    @property
    def name(self) -> str:
        return dotted(self.receiver)


#: Each hook and its consumers, in the order they run, inside the transaction that sent it.
HOOKS: dict[Signal, tuple[Consumer, ...]] = {
    # The run substrate's hooks (loopweb.runs.hooks).
    hooks.attempt_ending: (
        Consumer(
            ladders.lock_dispatch_of_origin,
            "shares the row of the dispatch a ladder job's origin names and, with early stop, the"
            " row of the climber holding its cell (PostgreSQL), before the job is locked",
            (Lock.DISPATCH, Lock.CLIMBER),
        ),
    ),
    hooks.run_pushing: (
        Consumer(
            signals.on_run_pushing,
            "snapshots the owner's acceptance rule onto the run, unless the push names one",
        ),
        Consumer(ladders.publish_on_completion, "publishes a completed run a dispatch launched"),
    ),
    hooks.retry_enqueued: (
        Consumer(
            ladders.cancel_retry_of_stopped_dispatch,
            "cancels the retry when its dispatch stopped or was replaced, or its slot was decided"
            " early (the cancel sends jobs_ended for it)",
        ),
        Consumer(ops.on_retry_enqueued, "counts the attempt's end; logs a lease expired"),
    ),
    hooks.jobs_ended: (
        Consumer(
            ladders.on_jobs_ended,
            "feeds the dispatches: a launch pass for every running dispatch holding an ended"
            " job's cell (a push that ended its attempt with no retry feeds them here)",
        ),
        Consumer(ops.on_jobs_ended, "counts the jobs; logs a climber blocked, a lease expired"),
    ),
    hooks.run_pushed: (
        Consumer(
            signals.on_run_pushed,
            "records runtime_s, the push's signals and its acceptance rule (a refused signal rolls"
            " the push back); a re-pushed run is locked first",
            (Lock.RUN,),
        ),
        Consumer(evalsets.run_pushed, "enqueues the verify gate for proposals waiting on grains"),
        Consumer(
            ladders.on_run_pushed,
            "publishes a re-pushed completed run; feeds the dispatches for a push that ended no"
            " attempt (no job, a re-push, a cancelled job's run) and whose attempt was not retried",
        ),
        Consumer(ops.on_run_pushed, "counts the push"),
        Consumer(
            reviewing.on_run_pushed,
            "counts the review backlog of the ladders with a threshold that read the run's cell,"
            " each one's settings locked; records review.backlog for a threshold reached",
            (Lock.REVIEW_SETTINGS,),
        ),
    ),
    hooks.run_reviewed: (
        Consumer(
            signals.on_run_reviewed,
            "records a review's verdict as a referee signal on its run, the run locked",
            (Lock.RUN,),
        ),
        Consumer(reviewing.on_run_reviewed, "the same backlog count", (Lock.REVIEW_SETTINGS,)),
    ),
    # The ladder engine's hooks (ladders.lifecycle), sent under the dispatch lock or the ladder's.
    lifecycle.dispatch_started: (
        Consumer(webhooks.dispatch_started, "records dispatch.started"),
        Consumer(history.on_dispatch_started, "a line of activity"),
    ),
    lifecycle.dispatch_ended: (
        Consumer(webhooks.dispatch_ended, "records dispatch.finished or dispatch.stopped"),
        Consumer(
            history.on_dispatch_ended,
            "queues the task writing the dispatch's record; a line of activity for a Stop",
        ),
    ),
    lifecycle.dispatch_replaced: (
        Consumer(
            history.on_dispatch_replaced,
            "writes the replaced dispatch's record now if its task has not yet",
        ),
    ),
    lifecycle.climbers_blocked: (
        Consumer(webhooks.climbers_blocked, "records climber.blocked, one per climber"),
    ),
    lifecycle.dispatch_needs_attention: (
        Consumer(webhooks.dispatch_needs_attention, "records dispatch.needs_attention"),
    ),
    lifecycle.climber_retried: (Consumer(history.on_climber_retried, "a line of activity"),),
    lifecycle.ladder_configured: (Consumer(history.on_ladder_configured, "a line of activity"),),
}


@dataclass(frozen=True)
class Own:
    """A step the sender takes itself, between the hooks it sends."""

    does: str
    locks: tuple[Lock, ...] = ()


#: A push (``loopweb.runs.services.push_run``), one transaction: what the substrate does itself
#: and, at each hook, the consumers ``HOOKS`` declares for it, in order. An attempt ends either
#: retried (``retry_enqueued``) or for good (``jobs_ended``; also sent for a retry cancelled at
#: once). A push of a run already stored rewrites it and sends ``run_pushed`` alone.
PUSH: tuple[Own | Signal, ...] = (
    Own("opens the transaction; reads the job's origin and cell key, locking nothing"),
    hooks.attempt_ending,
    Own("locks the job and checks its lease", (Lock.JOB,)),
    Own(
        "a job that has its run already (a driver sending its push again): locks that run,"
        " rewrites it and goes on to run_pushed",
        (Lock.RUN,),
    ),
    Own("builds the run: the job's cell fields, outcome, record and rating, and whether it counts"),
    hooks.run_pushing,
    Own("saves the run; ends the attempt, a retryable failure's retry created first"),
    hooks.retry_enqueued,
    hooks.jobs_ended,
    hooks.run_pushed,
    Own("commits, with the tasks the consumers enqueued: they exist exactly when the run does"),
)


def locks_taken(steps: Sequence[Own | Signal]) -> list[Lock]:
    """The locks a transaction of these steps takes, in the order it takes them."""
    taken: list[Lock] = []
    for step in steps:
        if isinstance(step, Own):
            taken += step.locks
        else:
            taken += [lock for consumer in HOOKS[step] for lock in consumer.locks]
    return taken


def connect() -> None:
    """Connect every hook's consumers, in the declared order (again: no change)."""
    for hook, consumers in HOOKS.items():
        for consumer in consumers:
            hook.connect(consumer.receiver, dispatch_uid=consumer.name)


def every_hook() -> dict[str, Signal]:
    """Every hook the substrate and the ladder engine send, by its dotted name."""
    return {
        f"{module.__name__}.{name}": value
        for module in (hooks, lifecycle)
        for name, value in vars(module).items()
        if isinstance(value, Signal)
    }


def connected(hook: Signal) -> list[str]:
    """The functions connected to a hook, whatever their sender, in the order they run."""
    found = []
    for entry in hook.receivers:
        receiver = entry[1]
        if isinstance(receiver, weakref.ReferenceType):
            receiver = receiver()
        if receiver is not None:
            found.append(dotted(receiver))
    return found


def check(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """A system check: each hook's consumers are the declared ones, in the declared order."""
    errors: list[checks.CheckMessage] = []
    for name, hook in every_hook().items():
        declared = [consumer.name for consumer in HOOKS.get(hook, ())]
        found = connected(hook)
        if found != declared:
            errors.append(
                checks.Error(
                    f"{name} runs {found}, not its declared consumers {declared}",
                    hint="Declare a hook's consumers, in order, in"
                    " loopweb.pipeline.consumers.HOOKS; no app connects a hook itself.",
                    obj=name,
                    id="pipeline.E001",
                )
            )
    return errors


def dotted(function: Callable[..., Any]) -> str:
    return f"{function.__module__}.{function.__qualname__}"
