from django.apps import AppConfig


class LaddersConfig(AppConfig):
    name = "ladders"
    verbose_name = "Ladders"

    def ready(self):
        from django.db.models.signals import post_delete, post_save

        from ladders import receivers
        from loopweb.runs import hooks
        from loopweb.runs.access import register_run_visibility
        from loopweb.runs.models import Combination, GGConfiguration, ModelEntry

        hooks.attempt_ending.connect(receivers.lock_dispatch_of_origin, dispatch_uid="ladders")
        hooks.retry_enqueued.connect(
            receivers.cancel_retry_of_stopped_dispatch, dispatch_uid="ladders"
        )
        hooks.jobs_ended.connect(receivers.on_jobs_ended, dispatch_uid="ladders")
        hooks.run_pushing.connect(receivers.publish_on_completion, dispatch_uid="ladders")
        hooks.run_pushed.connect(receivers.on_run_pushed, dispatch_uid="ladders")
        register_run_visibility(receivers.visible_through_ladders)
        for model in (ModelEntry, GGConfiguration, Combination):
            for hook in (post_save, post_delete):
                hook.connect(receivers.on_catalog_changed, sender=model, dispatch_uid="ladders")
