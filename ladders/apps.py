from django.apps import AppConfig


class LaddersConfig(AppConfig):
    name = "ladders"
    verbose_name = "Ladders"

    def ready(self):
        from django.db.models.signals import post_delete, post_save

        from ladders import receivers
        from loopweb.runs.access import register_run_visibility
        from loopweb.runs.models import Combination, GGConfiguration, ModelEntry

        # Its consumers of the substrate's hooks are connected, in order, by
        # loopweb.pipeline.consumers.
        register_run_visibility(receivers.visible_through_ladders)
        for model in (ModelEntry, GGConfiguration, Combination):
            for hook in (post_save, post_delete):
                hook.connect(receivers.on_catalog_changed, sender=model, dispatch_uid="ladders")
