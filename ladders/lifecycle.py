"""What the ladder engine announces about a dispatch's life, for the apps above it (history,
notifications). Every signal is sent inside the transaction that made the change, so what a
receiver writes commits or rolls back with it; a receiver never does slow work there (it records,
and a task does the rest). Their consumers, in the order they run, are declared in
``loopweb.pipeline.consumers``, which connects them.

``by`` is the user who pressed the button (``None`` for the engine itself or a script).
"""

from django.dispatch import Signal

#: Sent with ``dispatch`` and ``by`` once Run has minted a new dispatch of ``dispatch.ladder``.
#: ``previous`` is the dispatch id it replaced (or ``None`` for the ladder's first Run).
dispatch_started = Signal()

#: Sent with ``dispatch`` (status finished or stopped), ``final`` (its ``FinalStanding``), ``by``
#: (who stopped it; ``None`` when it finished), ``cancel_running`` and ``cancelled`` (how many
#: jobs the Stop cancelled; 0 when it finished), once the dispatch has ended.
dispatch_ended = Signal()

#: Sent with ``dispatch`` (ended) and ``final`` (its ``FinalStanding``) by Run just before a new
#: dispatch replaces it, while its final standing can still be read.
dispatch_replaced = Signal()

#: Sent with ``dispatch`` and ``climbers`` (``[(DispatchClimber, ClimberStanding)]``) by the
#: launch pass that first finds those climbers blocked (or blocked for another reason than when
#: last seen). A climber blocked again after a Retry is announced again.
climbers_blocked = Signal()

#: Sent with ``dispatch`` and ``climbers`` (its blocked climbers, ``[(DispatchClimber,
#: ClimberStanding)]``) by the launch pass that leaves a running dispatch reading Needs attention
#: when the pass before it did not (none of the jobs it launched in flight, every climber
#: completed, failed or blocked, at least one blocked): once per entry into that reading.
dispatch_needs_attention = Signal()

#: Sent with ``dispatch``, ``climber`` (the ``DispatchClimber``) and ``by`` when Retry is pressed.
climber_retried = Signal()

#: Sent with ``ladder``, ``by`` and ``change`` ("created", "edited" or "rungs reordered") after a
#: configuration is saved.
ladder_configured = Signal()
