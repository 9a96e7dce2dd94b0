from django.apps import AppConfig


class OpsConfig(AppConfig):
    name = "loopweb.ops"
    label = "ops"
    verbose_name = "Operations"

    def ready(self):
        from loopweb.ops import events

        events.connect()
