from django.apps import AppConfig


class LaddersConfig(AppConfig):
    name = "ladders"
    verbose_name = "Ladders"

    def ready(self):
        from ladders import receivers
        from loopweb.runs import signals
        from loopweb.runs.access import register_run_visibility

        signals.attempt_ending.connect(receivers.lock_dispatch_of_origin, dispatch_uid="ladders")
        signals.retry_enqueued.connect(
            receivers.cancel_retry_of_stopped_dispatch, dispatch_uid="ladders"
        )
        signals.jobs_ended.connect(receivers.on_jobs_ended, dispatch_uid="ladders")
        signals.run_pushed.connect(receivers.on_run_pushed, dispatch_uid="ladders")
        register_run_visibility(receivers.visible_through_ladders)
