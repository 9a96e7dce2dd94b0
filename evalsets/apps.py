from django.apps import AppConfig


class EvalsetsConfig(AppConfig):
    name = "evalsets"
    verbose_name = "Evalsets and the verify gate"
    # Its consumer of the substrate's run_pushed (evalsets.receivers) is connected, in order, by
    # loopweb.pipeline.consumers.
