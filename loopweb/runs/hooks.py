"""The run substrate's hooks: the Django signals it sends, for the apps above it to subscribe to.
("Signals" alone names the domain app ``signals_app``.) Every hook is sent inside the
transaction that made the change, so a subscriber's writes (and the tasks it enqueues) commit or
roll back with it.

The substrate names no consumer. Each hook's consumers, in the order they run and with the locks
each takes, are declared in one place above every app, ``loopweb.pipeline.consumers`` (``HOOKS``;
a push step by step is its ``PUSH``), which connects them; no app connects a hook itself.
"""

from django.dispatch import Signal

#: Sent before a job's attempt is locked to end it, with ``origin`` and ``cell_key``. A scheduler
#: that owns the origin takes its own locks here, so locks are always taken scheduler first,
#: then job.
attempt_ending = Signal()

#: Sent with ``retry`` (the new attempt) after an automatic retry is enqueued. A receiver may
#: cancel it, for instance when the dispatch that launched the attempt has been stopped.
retry_enqueued = Signal()

#: Sent with ``jobs`` once jobs reached a terminal state without enqueuing a retry.
jobs_ended = Signal()

#: Sent with ``run`` (not yet saved) and ``payload`` before a push stores a new run.
run_pushing = Signal()

#: Sent with ``run``, ``created`` and ``payload`` (the push's extra keys) after a push or re-push.
run_pushed = Signal()

#: Sent with ``review`` after a review is recorded.
run_reviewed = Signal()
