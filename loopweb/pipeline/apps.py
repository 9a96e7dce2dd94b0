from django.apps import AppConfig


class PipelineConfig(AppConfig):
    name = "loopweb.pipeline"
    label = "pipeline"
    verbose_name = "Hooks and their consumers"

    def ready(self):
        from django.core import checks

        from loopweb.pipeline import consumers

        consumers.connect()
        checks.register(consumers.check)
