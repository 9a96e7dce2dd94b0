"""signals_app's subscribers to what the run substrate announces. They run inside the
substrate's transaction, so a refused signal rolls the push or the review back."""

from signals_app import services


def on_run_pushing(sender, run, payload, **kwargs):
    services.snapshot_rule(run=run, payload=payload or {})


def on_run_pushed(sender, run, created, payload, **kwargs):
    services.record_push(run=run, created=created, payload=payload or {})


def on_run_reviewed(sender, review, **kwargs):
    services.record_referee(review=review)
